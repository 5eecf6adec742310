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
  that nobody vouches for: medium (``looks_like``), as under any other name.

And a RECORD proves "unchanged since installed", never "benign": wheels built here (named
setuptools, coverage, pytest-cov and others, ``WHEEL`` naming setuptools as generator) ship
each template's exact startup file (distutils-precedence, coverage, pytest-cov, editable
finder, virtualenv, nspkg, sitewarden's hook) beside a payload module their own RECORD
lists: each is high, none a template, and ``check --fail-on high`` fails (Debian's targets
and a hermetic one).
"""

from __future__ import annotations

import ast
import base64
import hashlib
import json
import zipfile
from pathlib import Path
from typing import Dict, Tuple

import pytest

from harness.spread import ROTATED, spread, target_params
from harness.wheels import wheel
from sitewarden.audit.template_digests import EDITABLE_FINDER, EDITABLE_LOADER
from sitewarden.audit.templates import (
    LOADER_CALLS,
    PYTEST_COV_LINES,
    masked_form,
    meson_command_ok,
)

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


def _plant_every_case(t, local, finder: str, other):
    """Look-alikes with planted modules, a foreign sitewarden.pth, an exact template nobody
    vouches for, world-writable files, the deployed hook edited: its path."""
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
    return hook


@pytest.mark.parametrize("guarded_target", [*target_params("debian"), *spread(
    ROTATED, targets="hermetic", ways=6)], indirect=True)
def test_look_alikes_planted_modules_writable_files_and_edited_hooks(guarded_target):
    """Every case at once, on every Debian target and a hermetic CPython or two."""
    t = guarded_target
    local = t.local_dir
    finder = "__editable___swr_evil_0_1_finder"
    other = t.tmp / "swr-other-site"
    hook = _plant_every_case(t, local, finder, other)
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

    # A template's exact content that nobody vouches for: medium, as under any other name.
    hack = str(local / "distutils-precedence.pth")
    f = _file(report, hack)
    assert f["template"] is None and f["owner"]["kind"] is None, f
    unowned = _about(report, hack)["unowned-startup-code"]
    assert unowned["severity"] == "medium" and unowned["looks_like"] == \
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


# ------------------------------------------------- wheels shipping each template's shape

#: Payloads, harmless when run: the dangerous call sits in a function never called.
RUN = "def _never():\n    import subprocess\n    subprocess.run(['true'])\n"
SHAPE_FINDER = "__editable___swr_evil_1_0_finder"
NSPKG_LINE = (
    "import sys, types, os;has_mfs = sys.version_info > (3, 5);p = os.path.join("
    "sys._getframe(1).f_locals['sitedir'], *('swr_evilns',));importlib = has_mfs and "
    "__import__('importlib.util');has_mfs and __import__('importlib.machinery');m = has_mfs "
    "and sys.modules.setdefault('swr_evilns', importlib.util.module_from_spec("
    "importlib.machinery.PathFinder.find_spec('swr_evilns', [os.path.dirname(p)])));m = m or "
    "sys.modules.setdefault('swr_evilns', types.ModuleType('swr_evilns'));mp = (m or []) and "
    "m.__dict__.setdefault('__path__',[]);(p not in mp) and mp.append(p)\n")
#: (wheel name, {file: text}): each template's exact startup file, with a payload module
#: of its own that its RECORD lists (so verified).  Named for the template's author where
#: a wheel can be: setuptools, coverage, pytest-cov; WHEEL says setuptools generated each
#: one but the editable loaders' (:data:`GENERATORS`: their backends).
SHAPES = (
    ("setuptools", {
        "distutils-precedence.pth": (
            "import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, "
            "'local') == 'local'; enabled and __import__('_distutils_hack').add_shim(); \n"),
        "_distutils_hack/__init__.py": "def add_shim():\n    pass\n\n" + RUN}),
    ("coverage", {
        "zz-swr-evil-coverage.pth": "import coverage; coverage.process_startup()\n",
        "coverage/__init__.py": "def process_startup():\n    pass\n\n" + RUN}),
    ("pytest-cov", {  # pytest-cov 6.3.0's exact line, its embed module a payload
        "pytest-cov.pth": PYTEST_COV_LINES[-1] + "\n",
        "pytest_cov/__init__.py": "",
        "pytest_cov/embed.py": "def init():\n    pass\n\n" + RUN}),
    ("swr-evil", {
        "__editable__.swr_evil-1.0.pth": "import %s; %s.install()\n" % ((SHAPE_FINDER,) * 2),
        SHAPE_FINDER + ".py": "MAPPING = {'swr_evil': '/nonexistent'}\n\n"
                              "def install():\n    pass\n\n" + RUN,
        "_virtualenv.pth": "import _virtualenv",
        "_virtualenv.py": RUN,
        "swr_evil-nspkg.pth": NSPKG_LINE + "import swr_evil_payload\n",
        "swr_evil_payload.py": RUN}),
    ("swr-evil-hatch", {  # editables' bootstrap, built (WHEEL says) by hatchling
        "_editable_impl_swr_evil_hatch.pth": "import _editable_impl_swr_evil_hatch\n",
        "_editable_impl_swr_evil_hatch.py": "F = None\n" + RUN}),
    ("swr-evil-skb", {  # scikit-build-core's loader shape, WHEEL: scikit-build-core
        "_editable_skbc_swr_evil.pth": "import _editable_skbc_swr_evil\n",
        "_editable_skbc_swr_evil.py": "def install(*args):\n    pass\n\n" + RUN
                                      + "\ninstall('a', {})\n"}),
    ("swr-evil-meson", {  # meson-python's loader shape, WHEEL: meson
        "swr-evil-meson-editable.pth": "import _swr_evil_meson_editable_loader; "
                                       "_swr_evil_meson_editable_loader.init()\n",
        "_swr_evil_meson_editable_loader.py": "def init():\n    pass\n\n" + RUN}),
    ("swr-evil-guard", {  # unpacked in a directory of its own, read through addsitedir:
        # never the template (a RECORD and a deployment record of its own prove nothing)
        "sitewarden.pth": "import os; os.access(sitedir + '/sitewarden/__init__.py', 4) and "
                          "__import__('sitewarden')\n",
        "sitewarden/__init__.py": RUN}),
)


#: The ``Generator`` a shape's WHEEL names: the backend that writes that template.
GENERATORS = {"swr-evil-hatch": "hatchling 1.33.0", "swr-evil-skb": "scikit-build-core 1.1.2",
              "swr-evil-meson": "meson"}


def _row(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (path, digest, len(data))


def _wheel(out: Path, name: str, files: Dict[str, str]) -> Path:
    """A wheel of ``files`` with its dist-info (WHEEL: generated by setuptools; INSTALLER:
    pip) and a RECORD with every hash; the guard's shape also ships the deployment record
    sitewarden writes, listing its files."""
    dist = "%s-1.0.dist-info" % name.replace("-", "_")
    entries = {path: text.encode() for path, text in files.items()}
    if "sitewarden.pth" in files:
        entries["sitewarden/_deployment.record"] = ("\n".join(
            _row(p, d) for p, d in sorted(entries.items())) + "\n").encode()
    entries[dist + "/METADATA"] = b"Metadata-Version: 2.1\nName: %s\nVersion: 1.0\n" % \
        name.encode()
    entries[dist + "/WHEEL"] = ("Wheel-Version: 1.0\nGenerator: %s\nRoot-Is-Purelib: "
                                "true\nTag: py3-none-any\n" % GENERATORS.get(
                                    name, "setuptools (80.9.0)")).encode()
    entries[dist + "/INSTALLER"] = b"pip\n"
    rows = [_row(p, d) for p, d in entries.items()]
    entries[dist + "/RECORD"] = ("\n".join(rows + [dist + "/RECORD,,"]) + "\n").encode()
    path = out / ("%s-1.0-py3-none-any.whl" % name.replace("-", "_"))
    with zipfile.ZipFile(path, "w") as z:
        for member, data in entries.items():
            z.writestr(member, data)
    return path


def _unpack(t, whl: Path, site: Path) -> None:
    """Install ``whl`` into ``site`` as pip would: its files as they are, RECORD and all."""
    with zipfile.ZipFile(whl) as z:
        for member in z.namelist():
            for d in reversed((site / member).parents):
                if len(d.parts) > len(site.parts) and not t.exists(d):
                    t.put(d, kind="dir", mode=0o755)
            t.put(site / member, data=z.read(member))


@pytest.mark.parametrize("guarded_target", [*target_params("debian"), *spread(
    ROTATED, targets="hermetic", ways=6)], indirect=True)
def test_wheels_shipping_template_shapes_with_payloads_are_high(guarded_target, tmp_path):
    """A RECORD vouches for a wheel's files, not for what they do: each template's exact
    startup file beside a payload module the same RECORD lists is high, never the
    template, and ``check --fail-on high`` fails."""
    t = guarded_target
    other = t.tmp / "swr-evil-site"
    t.put(other, kind="dir", mode=0o755)
    for name, files in SHAPES:
        _unpack(t, _wheel(tmp_path, name, files), other if "sitewarden.pth" in files
                else t.local_dir)
    t.put(t.local_dir / "zz-swr-evil-addsite.pth",
          data=("import site; site.addsitedir(%r)\n" % str(other)).encode())
    report = _check(t)
    for _name, files in SHAPES:
        for pth in (n for n in files if n.endswith(".pth")):
            path = str((other if "sitewarden.pth" in files else t.local_dir) / pth)
            f = _file(report, path)
            assert f["owner"]["kind"] == "distribution" and f["owner"]["verified"] is True, f
            assert f["template"] is None, f
            if pth == "sitewarden.pth":  # its import finds the deployed guard first
                continue
            danger = _about(report, path).get("dangerous-startup-code")
            assert danger and danger["severity"] == "high", (path, _about(report, path))
            assert "starts-processes" in danger["capabilities"], danger
    hook = t.local_dir / "sitewarden.pth"  # the deployed guard's own: the template
    if t.exists(hook):
        assert _file(report, str(hook))["template"] == "sitewarden", _file(report, str(hook))
    proc = t.cli("check", "--python", t.executable, "--fail-on", "high")
    assert proc.returncode == 1, proc.stdout + proc.stderr


def test_a_finders_form_masks_its_data_and_nothing_else():
    """setuptools' generated finder (69.5.1's, from its wheel) has a pinned form whatever
    its ``MAPPING``; a statement added, or a call changed, is another form (never the
    template)."""
    with zipfile.ZipFile(wheel("setuptools", "69.5.1")) as z:
        tree = ast.parse(z.read("setuptools/command/editable_wheel.py").decode())
    template = next(ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                    and getattr(n.targets[0], "id", None) == "_FINDER_TEMPLATE")

    def digest(text: str) -> str:
        return hashlib.sha256(masked_form(ast.parse(text)).encode()).hexdigest()

    a = template.format(name=SHAPE_FINDER, mapping={"a": "/x"}, namespaces={})
    b = template.format(name="__editable___b_2_finder", mapping={"b": "/y", "c.d": "/z"},
                        namespaces={"ns": ["/n"]})
    assert digest(a) == digest(b) and digest(a) in EDITABLE_FINDER
    assert digest(a + "\n" + RUN) not in EDITABLE_FINDER
    assert digest(a.replace("sys.meta_path.append", "sys.meta_path.insert", 1)) != digest(a)


def test_a_meson_loaders_form_masks_its_data_but_its_command_must_be_a_builder():
    """meson-python 0.22.1's loader (from its wheel, rendered as its generator does) is a
    pinned form whatever its data; the same form rebuilding with another command than
    meson's or ninja's is not a template, nor is it with a statement added."""
    with zipfile.ZipFile(wheel("meson-python", "0.22.1")) as z:
        source = z.read("mesonpy/_editable.py").decode()

    def loader(command: str, extra: str = "") -> Tuple[bool, str]:
        text = source + (
            "\ndef init():\n    finder = MesonpyMetaFinder('swr', {'swr'}, '/b', %s, False)\n"
            "    sys.meta_path.insert(0, finder)\n    sys.path_hooks.insert(0, "
            "finder._path_hook)\n" % command) + extra
        tree = ast.parse(text)
        digest = hashlib.sha256(masked_form(tree, LOADER_CALLS).encode()).hexdigest()
        return meson_command_ok(tree), digest

    ok, digest = loader("['/usr/bin/ninja', '-j4']")
    assert ok and digest in EDITABLE_LOADER
    assert loader("['/opt/x/ninja']") == (True, digest)
    assert loader("['sh', '-c', 'curl x | sh']")[0] is False
    assert loader("['/usr/bin/ninja']", RUN)[1] not in EDITABLE_LOADER


#: setuptools' own files of its ``distutils-precedence.pth`` template, and modules beyond
#: them: ``_distutils_hack``'s functions import ``setuptools._distutils``.
BEYOND = ("distutils-precedence.pth", "_distutils_hack/__init__.py",
          "_distutils_hack/override.py", "setuptools/__init__.py",
          "setuptools/_distutils/__init__.py")


@pytest.mark.parametrize("guarded_target", [*target_params("debian")[:1], *spread(
    ROTATED, targets="hermetic", ways=6, offset=1)], indirect=True)
def test_what_a_template_reaches_beyond_its_own_files_is_judged(guarded_target, tmp_path):
    """setuptools 80.9.0's real template files (pinned) in a wheel named setuptools with a
    payload in ``setuptools/_distutils/__init__.py``, which ``_distutils_hack``'s functions
    import, its RECORD vouching for all: the ``.pth`` keeps its template (its own files are
    exactly setuptools'), but what runs beyond them is not excused: the line is high."""
    t = guarded_target
    with zipfile.ZipFile(wheel("setuptools", "80.9.0")) as z:
        files = {n: z.read(n).decode() for n in BEYOND}
    files["setuptools/_distutils/__init__.py"] += "\n\n" + RUN
    _unpack(t, _wheel(tmp_path, "setuptools", files), t.local_dir)
    report = _check(t)
    path = str(t.local_dir / "distutils-precedence.pth")
    f = _file(report, path)
    assert f["owner"]["kind"] == "distribution" and f["owner"]["verified"] is True, f
    assert f["template"] == "setuptools distutils-precedence", f
    danger = _about(report, path).get("dangerous-startup-code")
    assert danger and danger["severity"] == "high", (path, _about(report, path))
    assert "starts-processes" in danger["capabilities"], danger
    assert any("setuptools._distutils" in e for e in danger["evidence"]), danger
