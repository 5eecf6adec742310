"""Nothing unverified buys trust: look-alikes, planted modules and writable files.

A file is a known template only when its whole content is the template's, its owner is
verified and the module it imports is a file the same owner ships, verified; sitewarden's
own hook only through the deployment record ``sitewarden install`` wrote.  Every case is
planted at once in a guarded target (Debian 12's python, the roots' 3.11, 3.13, 3.14,
3.15, and a hermetic CPython or two), each payload harmless when run (its dangerous call
sits in a function never called, or behind ``0 and``):

- ``__editable__.swr-evil-0.1.pth`` (the finder template's exact line) with a planted
  finder module that starts a process: high, from the module;
- ``zz-swr-coverage.pth`` (coverage's exact line) with a planted ``coverage`` package
  that reaches the network: high;
- ``swr-evil-nspkg.pth`` with ``os.system`` in its line: high, no template;
- a payload ``sitewarden.pth`` in a directory holding a ``sitewarden/`` package and no
  deployment record: not sitewarden's, judged, high;
- the target's own deployed hook edited: ``startup-file-modified``, high, with
  ``sitewarden install``;
- a world-writable ``.pth`` and a world-writable module a line imports (the CLI runs as
  root): ``writable-startup-file`` and ``writable-startup-module``, high, with the fix;
- ``distutils-precedence.pth``'s exact line beside a harmless planted ``_distutils_hack``
  that nobody vouches for: low (``looks_like``), never the template.
"""

from __future__ import annotations

import json

import pytest

from harness.spread import ROTATED, spread, target_params

NEVER = "def _never():\n    import os\n    os.system('true')\n"
NET = "def process_startup():\n    pass\n\ndef _never():\n    import urllib.request\n" \
      "    urllib.request.urlopen('https://192.0.2.1/x')\n"


def _check(t) -> dict:
    proc = t.cli("check", "--python", t.executable, "--json")
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def _about(report: dict, path: str) -> dict:
    return {f["kind"]: f for f in report["findings"]
            if path in (f.get("file"), f.get("path"))}


def _file(report: dict, path: str) -> dict:
    (f,) = [f for f in report["startup"]["files"] if f["path"] == path]
    return f


@pytest.mark.parametrize("guarded_target", [*target_params("debian"), *spread(
    ROTATED, targets="hermetic", ways=6)], indirect=True)
def test_look_alikes_planted_modules_writable_files_and_edited_hooks(guarded_target):
    """Every case at once, on every Debian target and a hermetic CPython or two."""
    t = guarded_target
    local = t.local_dir
    finder = "__editable___swr_evil_0_1_finder"
    other = t.tmp / "swr-other-site"
    for d in (local / "coverage", local / "_distutils_hack", other / "sitewarden"):
        t.root("import os, sys; os.makedirs(sys.argv[1], exist_ok=True)", str(d))
    planted = {
        local / "__editable__.swr-evil-0.1.pth": "import %s; %s.install()\n" % (finder, finder),
        local / (finder + ".py"): "def install():\n    _never()\n\n" + NEVER,
        local / "zz-swr-coverage.pth": "import coverage; coverage.process_startup()\n",
        local / "coverage" / "__init__.py": NET,
        local / "swr-evil-nspkg.pth": "import sys, types, os; 0 and os.system('true')\n",
        other / "sitewarden" / "__init__.py": NEVER,
        other / "sitewarden.pth": "import os; 0 and os.system('true')\n",
        local / "zz-swr-addsite.pth": "import site; site.addsitedir(%r)\n" % str(other),
        local / "distutils-precedence.pth": (
            "import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, "
            "'local') == 'local'; enabled and __import__('_distutils_hack').add_shim(); \n"),
        local / "_distutils_hack" / "__init__.py": "def add_shim():\n    pass\n",
    }
    for path, text in planted.items():
        t.put(path, data=text.encode())
    t.put(local / "swr-ww.pth", data=b"import swr_ww_mod\n", mode=0o666)
    t.put(local / "swr_ww_mod.py", data=b"X = 1\n", mode=0o666)
    hook = local / "sitewarden.pth"
    if t.version < (3, 18):
        t.write_bytes(hook, t.read_bytes(hook) + b"import os; 0 and os.system('true')\n")
    report = _check(t)

    # Look-alikes of templates, with planted modules: judged by what they run.
    for name in ("__editable__.swr-evil-0.1.pth", "zz-swr-coverage.pth", "swr-evil-nspkg.pth"):
        path = str(local / name)
        f = _file(report, path)
        assert f["template"] is None and f["owner"]["kind"] is None, f
        found = _about(report, path)
        assert found["dangerous-startup-code"]["severity"] == "high", (name, found)
    evidence = _about(report, str(local / "__editable__.swr-evil-0.1.pth"))[
        "dangerous-startup-code"]["evidence"]
    assert "starts-processes: os.system (in %s)" % finder in evidence, evidence
    assert any(e.startswith("network: urllib.request") and e.endswith("(in coverage)")
               for e in _about(report, str(local / "zz-swr-coverage.pth"))[
                   "dangerous-startup-code"]["evidence"]), report["findings"]

    # A template's exact content that nobody vouches for: low, never the template.
    hack = str(local / "distutils-precedence.pth")
    f = _file(report, hack)
    assert f["template"] is None and f["owner"]["kind"] is None, f
    unowned = _about(report, hack)["unowned-startup-code"]
    assert unowned["severity"] == "low" and unowned["looks_like"] == \
        "setuptools distutils-precedence", unowned

    # sitewarden.pth beside a sitewarden/ with no deployment record: not sitewarden's.
    foreign = _file(report, str(other / "sitewarden.pth"))
    assert foreign["owner"]["kind"] == "sitewarden" and foreign["owner"]["verified"] is None
    assert foreign["template"] is None, foreign
    assert _about(report, str(other / "sitewarden.pth"))["dangerous-startup-code"]

    # The deployed hook, edited: modified, with the command that deploys it again.
    if t.version < (3, 18):
        own = _file(report, str(hook))
        assert own["owner"]["kind"] == "sitewarden" and own["owner"]["verified"] is False
        assert own["template"] is None, own
        modified = _about(report, str(hook))["startup-file-modified"]
        assert modified["severity"] == "high" and "sitewarden install --python" in \
            modified["command"], modified

    # World-writable startup file and module (the CLI runs as root): high, with the fix.
    written = _about(report, str(local / "swr-ww.pth"))["writable-startup-file"]
    assert written["severity"] == "high" and written["mode"] == "0666", written
    assert "chmod go-w %s" % (local / "swr-ww.pth") in written["message"], written
    module = [f for f in report["findings"] if f["kind"] == "writable-startup-module"
              and f["path"] == str(local / "swr_ww_mod.py")]
    assert module and module[0]["severity"] == "high" and module[0]["line"] == 1, module
