"""``python -m sitewarden`` works like the ``sitewarden`` script.

``-m`` puts the current directory first on ``sys.path``; the CLI imports nothing from
there (a ``json.py`` in it is what ``check`` reports, in the target), so it is dropped
before the CLI's own imports.
"""

import os
import sys


def _cwd():
    try:
        return os.getcwd()
    except OSError:  # deleted (a shell inside a removed directory): -m added no entry
        return None


if sys.path and sys.path[0] in ("", _cwd()) and not getattr(sys.flags, "safe_path", 0):
    del sys.path[0]

from .cli.main import script  # noqa: E402

if __name__ == "__main__":
    script()
