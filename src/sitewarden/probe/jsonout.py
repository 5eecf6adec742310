"""The probe's JSON writer, byte for byte ``json.dumps(obj, indent=indent, sort_keys=True)``.

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
        try:
            encode = _c_encoder(_json, indent)
            if encode is not None:
                return "".join(encode(obj, 0))
            out = []
            _encode(obj, out, "\n", " " * (indent or 0), _json.encode_basestring_ascii)
            return "".join(out)
        except _Unsupported:
            pass
    import json  # what this module does not handle: the json module's answer (or error)

    return json.dumps(obj, indent=indent, sort_keys=True)


def _unsupported(obj):
    raise _Unsupported()


#: ``[True]`` once this ``_json``'s encoder is seen to indent (CPython 3.13+, where
#: ``json`` itself indents with it), ``[False]`` where it ignores the indent; empty until
#: asked.
_C_INDENT = []


def _c_encoder(_json, indent):
    """``_json``'s encoder as ``json.dumps(obj, indent=indent, sort_keys=True)`` makes it,
    or None where this ``_json`` takes other arguments or (older CPythons) writes no
    indentation: a one-line sample tells, once."""
    step = None if indent is None else " " * indent
    try:
        encode = _json.make_encoder(None, _unsupported, _json.encode_basestring_ascii, step,
                                    ": ", ", " if step is None else ",", True, False, True)
        if step is not None and not _C_INDENT:
            _C_INDENT.append("".join(encode({"a": [1]}, 0)) == '{\n%s"a": [\n%s1\n%s]\n}'
                             % (step, step * 2, step))
    except (AttributeError, TypeError, ValueError):
        return None
    return encode if step is None or _C_INDENT[0] else None


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
