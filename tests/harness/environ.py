"""The environment every interpreter under test runs with.

A developer's shell can carry variables that silently change what a test
observes: ``PYTHONPATH``/``PYTHONHOME`` move the interpreter, ``PIP_*`` or a
``pip.conf`` with ``break-system-packages`` switch off PEP 668 in pip,
``SITEWARDEN_DISABLE`` switches off the guard under test.  Tests therefore
start from the caller's environment minus all of those, and always with a
temporary ``PYTHONUSERBASE`` so that ``--user`` installs never reach
``~/.local``.

Every interpreter under test also runs strict (``SITEWARDEN_DEBUG=raise``): a
failure the guard would swallow to fail open propagates instead, so the test
that caused it fails.  Tests that inject a fault on purpose, to assert the
fail-open behaviour, pass ``SITEWARDEN_DEBUG`` themselves (:data:`FAIL_OPEN`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, Optional, Union

#: Prefixes of variables that are dropped from the inherited environment.
DROPPED_PREFIXES = ("PYTHON", "PIP_", "SITEWARDEN_", "VIRTUAL_ENV", "CONDA_", "__PYVENV")

#: Harness configuration variables, which are kept (they configure the harness, not the guard).
KEPT = ("SITEWARDEN_TEST_",)

#: Set for every run: no pip configuration file, no self-check, never a prompt.
FIXED = {
    "PIP_CONFIG_FILE": os.devnull,
    "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    "PIP_NO_INPUT": "1",
    "SITEWARDEN_DEBUG": "raise",
}

#: ``extra`` for a test that breaks the guard on purpose: fail open, silently, as users get it.
FAIL_OPEN = {"SITEWARDEN_DEBUG": "0"}


def clean_env(
    user_base: Union[str, Path],
    extra: Optional[Mapping[str, str]] = None,
    base: Optional[Mapping[str, str]] = None,
) -> dict[str, str]:
    """``base`` (default ``os.environ``) without interfering variables, plus ``extra``.

    ``PYTHONUSERBASE`` is set to ``user_base``; ``extra`` is applied last, so a
    test can still set any variable on purpose (``SITEWARDEN_DISABLE=1``...).
    """
    source = os.environ if base is None else base
    env = {
        key: value
        for key, value in source.items()
        if key.startswith(KEPT) or not key.startswith(DROPPED_PREFIXES)
    }
    env.update(FIXED)
    env["PYTHONUSERBASE"] = str(user_base)
    env.update(extra or {})
    return env
