"""The CLI's JSON reader (the probes' reports, deployment manifests) without importing
``json``, whose decoder imports ``re`` (with ``enum`` and its friends: a sixth of a
``sitewarden check``, see docs/benchmarks.md).  The C part of ``json``
(``_json``) does the work, as ``json.loads`` would; a ``_json`` this module cannot
feed, or none, leaves it to ``json`` itself.  The writer is the probe's,
``probe/jsonout.py``: a target never imports ``cli/``.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time: `check` starts fast
if TYPE_CHECKING:
    from typing import Any

try:
    import _json
except ImportError:  # another implementation: json itself below
    _json = None


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
