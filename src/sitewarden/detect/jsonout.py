"""The probe's JSON writer, byte for byte ``json.dumps(obj, indent=2, sort_keys=True)``.

It lives with the probe because the probe runs inside a target, which must not
depend on ``cli/``; the CLI writes ``--json`` with it too (one writer).  Not
``json`` itself: its encoder imports ``re`` (with ``enum`` and its friends: a
sixth of a ``sitewarden check``, see docs/benchmarks.md).  The C part of
``json`` (``_json``) does the work; what this module does not handle (no
``_json``, a key that is not a string, a type JSON has no form for) goes to
``json``.  Runtime module: nothing imported at module level.
"""


class _Unsupported(Exception):
    pass


def dumps(obj, indent=2):
    """``json.dumps(obj, indent=indent, sort_keys=True)``."""
    try:
        import _json  # on first use: the probe has taken the standard library's by then
    except ImportError:  # another implementation: json itself below
        _json = None
    if _json is not None:
        out = []
        try:
            _encode(obj, out, "\n", " " * indent, _json.encode_basestring_ascii)
            return "".join(out)
        except _Unsupported:
            pass
    import json  # what this module does not handle: the json module's answer (or error)

    return json.dumps(obj, indent=indent, sort_keys=True)


def _encode(obj, out, newline, step, quote):
    if isinstance(obj, str):
        out.append(quote(obj))
    elif obj is None or obj is True or obj is False:
        out.append("null" if obj is None else "true" if obj else "false")
    elif type(obj) is int:
        out.append(int.__repr__(obj))
    elif type(obj) is float:
        out.append(float.__repr__(obj) if obj == obj and obj not in (
            float("inf"), float("-inf")) else "NaN" if obj != obj else
            "Infinity" if obj > 0 else "-Infinity")
    elif type(obj) in (list, tuple):
        if not obj:
            out.append("[]")
            return
        inner = newline + step
        out.append("[")
        for i, item in enumerate(obj):
            out.append(inner if i == 0 else "," + inner)
            _encode(item, out, inner, step, quote)
        out.append(newline + "]")
    elif type(obj) is dict:
        if not obj:
            out.append("{}")
            return
        if not all(type(k) is str for k in obj):
            raise _Unsupported()
        inner = newline + step
        out.append("{")
        for i, key in enumerate(sorted(obj)):
            out.append((inner if i == 0 else "," + inner) + quote(key) + ": ")
            _encode(obj[key], out, inner, step, quote)
        out.append(newline + "}")
    else:
        raise _Unsupported()
