"""JSON for the CLI without importing ``json``, whose decoder and encoder import ``re``
(with ``enum`` and its friends: a sixth of a ``sitewarden check``, see README,
"Benchmarks").  The C parts of ``json`` (``_json``) do the work; the output is
byte for byte ``json.dumps(obj, indent=..., sort_keys=True)``'s, and anything this
module does not handle (no ``_json``, a key that is not a string, a type JSON has no
form for) goes to ``json`` itself.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time: `check` starts fast
if TYPE_CHECKING:
    from typing import Any

try:
    import _json
except ImportError:  # another implementation: json itself below
    _json = None


class _Unsupported(Exception):
    pass


class _Context:
    """What ``_json.make_scanner`` reads of a ``json.JSONDecoder`` (``array_hook``: 3.15).
    A version that asks for more gets the json module instead (see :func:`loads`)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    array_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"NaN": float("nan"), "Infinity": float("inf"),
                      "-Infinity": float("-inf")}.__getitem__
    memo: dict[str, str] = {}


def loads(text: str) -> Any:
    """``json.loads(text)``; ValueError for text that is not one JSON document."""
    scan = None
    if _json is not None:
        try:
            scan = _json.make_scanner(_Context())
        except (AttributeError, TypeError):  # a decoder attribute newer than this module
            pass
    if scan is None:
        import json  # no C accelerator, or one this module cannot feed: json itself

        return json.loads(text)
    text = text.strip(" \t\n\r")
    try:
        obj, end = scan(text, 0)
    except StopIteration:
        raise ValueError("not a JSON document") from None
    if end != len(text):
        raise ValueError("extra data after a JSON document")
    return obj


def dumps(obj: Any, indent: int = 2) -> str:
    """``json.dumps(obj, indent=indent, sort_keys=True)``."""
    if _json is not None:
        out: list[str] = []
        try:
            _encode(obj, out, "\n", " " * indent)
            return "".join(out)
        except _Unsupported:
            pass
    import json  # what this module does not handle: the json module's answer (or error)

    return json.dumps(obj, indent=indent, sort_keys=True)


def _encode(obj: Any, out: list[str], newline: str, step: str) -> None:
    if isinstance(obj, str):
        out.append(_json.encode_basestring_ascii(obj))
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
            _encode(item, out, inner, step)
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
            out.append((inner if i == 0 else "," + inner) + _json.encode_basestring_ascii(key)
                       + ": ")
            _encode(obj[key], out, inner, step)
        out.append(newline + "}")
    else:
        raise _Unsupported()
