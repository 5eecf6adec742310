"""An install that changes what a start runs without adding a startup file says so too.

In guarded Debian pythons (Debian 12's in a namespace, the roots' 3.13, 3.14 and 3.15) and
a hermetic CPython (the first two only), each with pip and the override, three installs
that add no startup file of their own but change what every start runs:

- a wheel that adds the module an existing ``.pth`` imports (the line found nothing
  before; now its payload runs at every start): the report names the ``.pth`` and the
  module, in pip's layout (a warning: the install itself succeeded) since the module
  starts a process;
- ``pip install --target`` into the directory a ``.pth`` path line puts on ``sys.path``:
  the report names the ``.pth`` and the directory;
- a wheel shipping its own ``_distutils_hack`` into the local directory, ahead of the one
  Debian's ``distutils-precedence.pth`` runs: the report names Debian's ``.pth``.

An install that touches none of it prints nothing of the kind.
"""

from __future__ import annotations

import re

import pytest

from harness.printed import runs_as_printed
from harness.spread import target_params
from harness.wheels import pip_dir, pip_versions_for
from test_blocking_debian import can_install
from test_install_startup_report import build_wheel

PAYLOAD = "def _never():\n    import os\n    os.system('true')\n"
HEADER = "sitewarden: this install changed the code that runs at every start of"


@pytest.fixture(scope="module")
def wheels(tmp_path_factory):
    out = tmp_path_factory.mktemp("watch-wheels")
    out.chmod(0o755)
    return {
        "payload": build_wheel(out, "swr-watch-payload", "1.0",
                               {"swr_watch_payload.py": PAYLOAD}),
        "plain": build_wheel(out, "swr-watch-plain", "1.0", {"swr_watch_plain.py": "X = 1\n"}),
        "hack": build_wheel(out, "swr-watch-hack", "1.0", {
            "_distutils_hack/__init__.py": "def add_shim():\n    pass\n" + PAYLOAD}),
    }


@pytest.mark.parametrize("guarded_target", [*target_params("debian"),
                                            *target_params("hermetic")[-1:]], indirect=True)
def test_installs_that_change_what_a_start_runs_are_reported(guarded_target, wheels):
    t = guarded_target
    pips = [v for v in pip_versions_for(t.version) if can_install(v, t.version)]
    env = {"PYTHONPATH": str(pip_dir(pips[-1])), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    local = t.local_dir

    def pip(*args):
        proc = t.python("-m", "pip", "install", "--no-index", "--no-deps",
                        "--break-system-packages", *args, env=env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc.stderr

    # A .pth importing a module nothing provides yet (conditionally: no error at start).
    pth = "%s/zz-swr-watch.pth" % local
    t.put(pth, data=b"import importlib.util as u; u.find_spec('swr_watch_payload') and "
                    b"__import__('swr_watch_payload')\n")
    extra = t.tmp / "swr-watch-extra"
    t.put(extra, "dir", mode=0o755)
    dirpth = "%s/zz-swr-watch-dir.pth" % local
    t.put(dirpth, data=("%s\n" % extra).encode())

    out = pip(str(wheels["plain"]))
    assert HEADER not in out and "dangerous-startup-code" not in out, out

    out = pip(str(wheels["payload"]))
    assert "warning: dangerous-startup-code" in out and pth in out, out
    assert "%s/swr_watch_payload.py" % local in out, out
    assert "starts-processes" in out, out
    # The hint takes it out of every start as printed, without starting the interpreter.
    hint = re.search(r"hint: take it out of every start, without starting this "
                     r"interpreter:\n    (.+?)\n    \(sitewarden quarantine --restore ", out)
    assert hint and hint.group(1).startswith("sitewarden quarantine "), out
    proc = runs_as_printed(t, hint.group(1),
                           {"SITEWARDEN_QUARANTINE_DIR": str(t.tmp / "quarantine")})
    assert proc.returncode == 0 and not t.exists(pth), proc.stdout + proc.stderr

    out = pip("--target", str(extra), str(wheels["plain"]))
    assert HEADER in out and dirpth in out and "%s changed (its listing)" % extra in out, out

    debian_pth = "%s/distutils-precedence.pth" % t.distro_dir
    if not t.exists(debian_pth):  # a hermetic CPython: no distro setuptools
        return
    out = pip(str(wheels["hack"]))
    assert debian_pth in out and "%s/_distutils_hack" % local in out, out
