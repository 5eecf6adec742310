"""The guard's settings, as users write them: every value has one meaning, and
``status``/``check`` say what it is.

- ``SITEWARDEN_DISABLE``: a true word (``1``, ``yes``, ``true``, ``on``, ``y``, ``t``, any
  case) turns the guard off; ``false``, ``0``... and any unknown value keep it on (an
  unknown value must not lift a block).  ``sitewarden.activate`` reads it before
  ``settings`` could be imported: the two readings are held equal here.
- ``SITEWARDEN_SILENCE``: kinds (``shadow``, ``path``, ``all``, true words), nothing
  (``none``, false words), shadows acknowledged by module name (``shadow:yaml,six``);
  commas, semicolons or spaces between words.
- Silence files (``/etc/sitewarden/silence``, ``<site dir>/sitewarden.silence``):
  ``shadow:NAME`` lines, read only once a shadow warning is due, so that a process
  without the environment (cron, systemd, ``env -i``) does not warn about an
  acknowledged shadow; ``check`` lists it as acknowledged (severity ``info``).
- A deployment's ``sitewarden.silence`` sits where pip installs: one a package put there
  (a wheel that shadows a distro module and ships the line that acknowledges it, at the
  top or through ``.data/purelib``; an egg's ``installed-files.txt``), or one others may
  write, acknowledges nothing: the warning comes, ``check`` keeps the finding high and
  says why, ``acknowledge --deployment`` refuses to write there.  The same line written
  by ``acknowledge --deployment`` into a file no package lists holds.

The parsing is checked on the host (one interpreter); each behaviour once end to end
on every target (``guarded_target``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness import make_dist
from harness.guarded import GuardedPython
from harness.spread import rotated
from harness.wheels import pip_dir, pip_versions_for
from sitewarden import failopen, settings
from sitewarden.cli import environment
from sitewarden.detect import shadowscan
from sitewarden.facts import distinfo, records
from test_blocking_debian import can_install
from test_field_warnings import ensure_distro
from test_install_startup_report import build_wheel

SRC = Path(__file__).resolve().parent.parent / "src"

warnings_of = GuardedPython.stderr_warnings


def about(proc) -> set:
    """The module names the ShadowWarnings printed on stderr are about."""
    return {w[3].split("'")[1] for w in warnings_of(proc) if w[2] == "ShadowWarning"}


# ------------------------------------------------------------------ host: parsing

@pytest.mark.parametrize("value, kinds, names, unknown", [
    ("shadow", {"shadow"}, (), ()),
    ("path;shadow", {"shadow", "path"}, (), ()),
    ("shadow, path", {"shadow", "path"}, (), ()),
    ("all", {"shadow", "path"}, (), ()),
    ("1", {"shadow", "path"}, (), ()),
    ("YES", {"shadow", "path"}, (), ()),
    ("0", set(), (), ()),
    ("none", set(), (), ()),
    ("off", set(), (), ()),
    ("", set(), (), ()),
    ("shadw", set(), (), ("shadw",)),
    ("shadow,shadw", {"shadow"}, (), ("shadw",)),
    ("six", set(), (), ("six",)),
    ("shadow:", set(), (), ("shadow:",)),
    ("shadow:yaml,six", set(), ("yaml", "six"), ()),
    ("shadow:yaml six;Shadow:lazr.uri", set(), ("yaml", "six", "lazr.uri"), ()),
    ("shadow:yaml,path", {"path"}, ("yaml",), ()),
    ("shadow:path", set(), ("path",), ()),
    ("shadow:yaml,not-a-name", set(), ("yaml",), ("not-a-name",)),
    ("path,six", {"path"}, (), ("six",)),
])
def test_silence_values(value, kinds, names, unknown):
    assert settings.parse_silence(value) == (frozenset(kinds), names, unknown)


def test_silence_file_acknowledges_names_only():
    text = "shadow:yaml\nshadow:six lazr.uri\npath all\n"
    assert settings.parse_silence(text, names_only=True) == (
        frozenset(), ("yaml", "six", "lazr.uri"), ("path", "all"))


def test_names_match_the_module_and_its_submodules():
    assert settings.matches("yaml", ["yaml"]) and settings.matches("lazr.uri", ["lazr"])
    assert not settings.matches("yamlx", ["yaml"]) and not settings.matches("lazr", ["lazr.uri"])


ACTIVATE_BOTH_WAYS = r"""
import sys, types
sys.path.insert(0, sys.argv[1])
import os, sitewarden
values = [os.fsdecode(v) for v in eval(sys.argv[2])]
out = []
for value in values:
    os.environ["SITEWARDEN_DISABLE"] = value
    row = []
    for posix in (sys.modules["posix"], types.ModuleType("posix")):  # dict, then str branch
        sys.modules["posix"] = posix
        try:
            finder = sitewarden.activate()
        finally:
            sys.modules["posix"] = os
        row.append(finder is None)
        if finder is not None:
            sys.meta_path.remove(finder)
    out.append(row)
print(out)
"""

DISABLE_VALUES = [b"1", b"yes", b"YES", b"True", b"on", b"On", b"y", b"T", b"tRuE",
                  b"", b"0", b"no", b"false", b"FALSE", b"off", b"n", b"f",
                  b"maybe", b"2", b" 1", b"yes ", b"disable", b"\xc3\xa9", b"\xff"]


def test_disable_is_read_alike_by_activate_and_settings():
    """``activate`` (both its POSIX bytes branch and its str branch) and
    ``settings.disables`` (what ``status`` and ``check`` report) agree on every value:
    the true words, any case, turn the guard off; everything else keeps it on."""
    proc = subprocess.run([sys.executable, "-S", "-c", ACTIVATE_BOTH_WAYS, str(SRC),
                           repr(DISABLE_VALUES)], capture_output=True, text=True,
                          env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    assert proc.returncode == 0, proc.stderr
    rows = eval(proc.stdout)  # noqa: S307 - our own subprocess's repr
    expected = [settings.disables(os.fsdecode(v)) for v in DISABLE_VALUES]
    assert rows == [[e, e] for e in expected]
    assert expected[:9] == [True] * 9 and not any(expected[9:])


def test_debug_words_are_failopens():
    assert settings.FALSE_VALUES == failopen.FALSE_VALUES
    for value in settings.debug_words():
        assert failopen.mode({failopen.ENV: value}) == (
            None if value in settings.FALSE_VALUES else
            failopen.STRICT if value == "raise" else "print")


def test_environment_says_what_each_value_means():
    items = {i["name"]: i for i in environment.variables({
        "SITEWARDEN_DISABLE": "false", "SITEWARDEN_SILENCE": "shadw,path",
        "SITEWARDEN_DEBUG": "verbose", "SITEWARDEN_SILENT": "1", "HOME": "/root"})}
    assert sorted(items) == ["SITEWARDEN_DEBUG", "SITEWARDEN_DISABLE", "SITEWARDEN_SILENCE",
                             "SITEWARDEN_SILENT"]
    assert items["SITEWARDEN_DISABLE"]["understood"]
    assert "the guard stays on" in items["SITEWARDEN_DISABLE"]["meaning"]
    silence = items["SITEWARDEN_SILENCE"]
    assert not silence["understood"] and silence["value"] == "shadw,path"
    # What is understood first, never behind a "not understood:"; each word's state.
    assert silence["meaning"].startswith("path: no sys.path warning is shown"), silence
    assert "not understood, ignored: 'shadw'" in silence["meaning"], silence
    assert [(w["word"], w["state"]) for w in silence["words"]] == [
        ("path", "silenced"), ("shadw", "not understood")], silence
    assert not items["SITEWARDEN_DEBUG"]["understood"]
    assert "taken as 1" in items["SITEWARDEN_DEBUG"]["meaning"]
    assert "not a sitewarden setting" in items["SITEWARDEN_SILENT"]["meaning"]
    maybe = environment.describe_disable("maybe")
    assert not maybe["understood"] and "the guard stays on" in maybe["meaning"]
    assert environment.describe_disable("TRUE")["meaning"].startswith("the guard is off")
    named = environment.describe_silence("shadow:yaml,six")
    assert named["understood"] and "no shadow warning about six" in named["meaning"]
    assert [(w["word"], w["state"]) for w in named["words"]] == [
        ("shadow:yaml", "acknowledged"), ("shadow:six", "acknowledged")], named


def test_silence_files_are_read_without_blocking(tmp_path):
    """A missing file is no file; a FIFO or a directory is reported, never waited on;
    comments are dropped."""
    assert settings.read_silence_file(str(tmp_path / "none")) == (None, None)
    os.mkfifo(str(tmp_path / "fifo"))
    text, problem = settings.read_silence_file(str(tmp_path / "fifo"))
    assert text is None and "not a regular file" in problem
    (tmp_path / "sitewarden.silence").write_text("# ours\nshadow:yaml  # PyYAML\nshadow:six\n")
    acks = settings.acknowledgements([str(tmp_path)], environ={"SITEWARDEN_SILENCE":
                                                               "shadow:idna"})
    path = str(tmp_path / "sitewarden.silence")
    assert acks == [("idna", "SITEWARDEN_SILENCE"), ("yaml", path), ("six", path)]
    (listed,) = environment.silence_files([str(tmp_path)])
    assert listed["names"] == ["yaml", "six"] and listed["understood"]


def test_a_deployments_file_a_package_lists_or_others_may_write_is_refused(tmp_path):
    """``settings.refusal`` with the ground floor's lookup (``distinfo.lister``): a RECORD
    row, an ``installed-files.txt`` line (relative to the egg-info directory) or a row
    that resolves to the file refuses it; a RECORD that lists other files, or the
    machine's file, does not; a group- or world-writable file is refused first."""
    silence = tmp_path / settings.SITE_FILE
    silence.write_text("shadow:yaml\n")
    silence.chmod(0o644)
    path = str(silence)
    assert settings.refusal(path, distinfo.lister) is None
    make_dist(tmp_path, "swr-plain", "1.0", {"swr_plain.py": ""}, installer="pip")
    assert settings.refusal(path, distinfo.lister) is None  # its RECORD lists others
    rows = {"sitewarden.silence,,": "swr-top", "swr_dot/../sitewarden.silence,,": "swr-dot",
            "%s,," % path: "swr-abs"}
    for row, name in rows.items():
        meta = make_dist(tmp_path, name, "1.0", {}, installer="pip")
        record = meta / "RECORD"
        record.write_text(record.read_text() + row + "\n")
        distinfo.clear_cache()
        assert settings.refusal(path, distinfo.lister) == (
            settings.PLACED_BY_PACKAGE, "%s 1.0's RECORD lists it" % name), row
        record.unlink()
    distinfo.clear_cache()
    assert settings.refusal(path, distinfo.lister) is None
    egg = make_dist(tmp_path, "swr-egg", "0.1", {"swr_egg.py": ""}, kind="egg-info")
    (egg / "installed-files.txt").write_text("../swr_egg.py\n../sitewarden.silence\n")
    distinfo.clear_cache()
    state, reason = settings.refusal(path, distinfo.lister)
    assert (state, reason) == (settings.PLACED_BY_PACKAGE,
                               "swr-egg 0.1's installed-files.txt lists it")
    assert "a package put it there (swr-egg 0.1's installed-files.txt lists it)" in \
        settings.refusal_text(state, reason, path)
    for mode in (0o664, 0o646):
        silence.chmod(mode)
        assert settings.refusal(path, distinfo.lister) == (
            settings.WRITABLE_BY_OTHERS, "mode %04o" % mode)
    assert settings.refusal(settings.SYSTEM_FILE, distinfo.lister) is None


def test_acknowledged_findings_are_info_and_say_so(tmp_path, monkeypatch):
    monkeypatch.setenv("SITEWARDEN_SILENCE", "shadow:yaml")
    monkeypatch.setattr(shadowscan.pathfacts, "deployment_dirs", lambda paths: [])
    data = records.Shadowing.make(
        modules=[records.ShadowCase.from_json({"module": "yaml", "severity": "high"}),
                 records.ShadowCase.from_json({"module": "six", "severity": "medium"})],
        hidden_namespaces=[], distributions=[], violations=[])
    findings = [records.Finding("shadowed-module", "high", "yaml: ...", module="yaml"),
                records.Finding("shadowed-module", "medium", "six: ...", module="six"),
                records.Finding("requirement-violated", "high", "x requires yaml<6")]
    shadowscan._acknowledge(data, findings, [])
    yaml, six, violation = [f.as_json() for f in findings]
    assert yaml["severity"] == "info" and yaml["acknowledged"] is True
    assert yaml["acknowledged_by"] == "SITEWARDEN_SILENCE"
    assert yaml["unacknowledged_severity"] == "high"
    assert yaml["message"].endswith("; acknowledged (shadow:yaml in SITEWARDEN_SILENCE): "
                                    "no warning is shown")
    assert six["severity"] == "medium" and "acknowledged" not in six
    assert violation["severity"] == "high"
    modules = data.as_json()["modules"]
    assert modules[0]["severity"] == "info" and modules[0]["acknowledged"]
    assert "acknowledged" not in modules[1]


# ------------------------------------------------------------------ every target

@rotated()
def test_unknown_values_keep_the_guard_on_and_status_names_them(guarded_target):
    """``SITEWARDEN_DISABLE=false`` leaves the guard on, ``SITEWARDEN_SILENCE=path;shadow``
    silences both kinds, and ``status`` names every variable set, what it took it to
    mean, and which values it did not understand."""
    t = guarded_target
    t.add_shadowed(["swset_mod"])
    proc = t.python("-c", "import swset_mod", env={"SITEWARDEN_DISABLE": "false"})
    assert proc.returncode == 0 and about(proc) == {"swset_mod"}, proc.stderr
    proc = t.python("-c", "import swset_mod", env={"SITEWARDEN_SILENCE": "path;shadow"})
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr

    env = {"SITEWARDEN_DISABLE": "maybe", "SITEWARDEN_SILENCE": "shadw",
           "SITEWARDEN_DEBUG": "1"}
    proc = t.cli("status", "--python", t.executable, "--json", env=env)
    # swset_mod's shadow is a medium finding: check's default gate fails, status says so
    assert proc.returncode == 1 and json.loads(proc.stdout)["verdict"]["exit"] == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert data["active"] and data["disabled_by"] is None
    items = {i["name"]: i for i in data["environment"]}
    assert not items["SITEWARDEN_DISABLE"]["understood"]
    assert "the guard stays on" in items["SITEWARDEN_DISABLE"]["meaning"]
    assert not items["SITEWARDEN_SILENCE"]["understood"]
    assert "nothing is silenced; not understood, ignored: 'shadw'" in \
        items["SITEWARDEN_SILENCE"]["meaning"]
    assert items["SITEWARDEN_DEBUG"]["understood"]
    text = t.cli("status", "--python", t.executable, env=env).stdout
    assert "active at startup: yes" in text, text
    assert "    SITEWARDEN_SILENCE: shadw not understood\n" in text, text
    assert "SITEWARDEN_DISABLE=maybe: not understood: the guard stays on" in text, text
    assert "SITEWARDEN_DEBUG=1: a failure the guard swallows is told on stderr" in text, text


@rotated()
def test_shadows_acknowledged_by_name_and_by_the_silence_file(guarded_target):
    """A local six and a local yaml shadow the distro's: ``SITEWARDEN_SILENCE=shadow:yaml``
    leaves the warning about six alone; a silence file that acknowledges yaml does the
    same for a process with an empty environment (``env -i``: cron, systemd); ``check``
    lists yaml as acknowledged (severity info, the file named), six as a problem.
    The file: ``/etc/sitewarden/silence`` in the roots (their whole tree is
    overlaid), the deployment's ``sitewarden.silence`` elsewhere."""
    t = guarded_target
    ensure_distro(t, "six", "1.16.0", {"six.py": ""}, kind="egg-info")
    ensure_distro(t, "PyYAML", "6.0", {"yaml/__init__.py": ""})

    def local(stage):
        make_dist(stage, "six", "9.0", {"six.py": ""}, installer="pip")
        make_dist(stage, "PyYAML", "9.0", {"yaml/__init__.py": ""}, installer="pip")

    t.copy_in(local, t.local_dir)
    code = "import six, yaml"
    proc = t.python("-c", code, env={"SITEWARDEN_SILENCE": "shadow:yaml"})
    assert proc.returncode == 0 and about(proc) == {"six"}, proc.stderr

    if t.release is not None:
        t.put(Path("/etc/sitewarden"), "dir")
        silence = Path(settings.SYSTEM_FILE)
    else:
        silence = t.local_dir / settings.SITE_FILE
    t.put(silence, "file", b"# acknowledged by the administrator\nshadow:yaml\n")
    proc = t.run(["env", "-i", t.executable, "-c", code])
    assert proc.returncode == 0 and about(proc) == {"six"}, proc.stderr

    status, report, text = t.cli_check()
    shadows = {f["module"]: f for f in report["findings"] if f["kind"] == "shadowed-module"}
    assert shadows["yaml"]["acknowledged"] is True, shadows
    assert shadows["yaml"]["acknowledged_by"] == str(silence)
    assert shadows["yaml"]["severity"] == "info"
    assert shadows["yaml"]["unacknowledged_severity"] != "info"
    assert "acknowledged" not in shadows["six"] and shadows["six"]["severity"] != "info"
    assert status == 1
    (listed,) = [f for f in report["silence_files"] if f["path"] == str(silence)]
    assert listed["names"] == ["yaml"] and listed["understood"]
    # Acknowledged: only that, where (and when, under the comment acknowledge writes).
    assert "yaml (shadowed-module): acknowledged in %s\n" % silence in text, text
    assert "\n  %s: shadow:yaml acknowledged\n" % silence in text, text


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    """``swra-lib`` wheels that shadow the distro's ``swra_lib`` 1.0 (its distro consumer
    requires ``<2``): 2.0 ships the line that acknowledges the shadow as the deployment's
    silence file, 2.1 the same through ``.data/purelib``, 2.2 none."""
    out = tmp_path_factory.mktemp("shipped-silence")
    out.chmod(0o755)
    line = "shadow:swra_lib\n"
    return {
        "top": build_wheel(out, "swra-lib", "2.0", {"swra_lib/__init__.py": "",
                                                     settings.SITE_FILE: line}),
        "data": build_wheel(out, "swra-lib", "2.1", {
            "swra_lib/__init__.py": "", "swra_lib-2.1.data/purelib/%s" % settings.SITE_FILE:
            line}),
        "plain": build_wheel(out, "swra-lib", "2.2", {"swra_lib/__init__.py": ""}),
    }


@rotated()
def test_a_silence_file_a_package_ships_acknowledges_nothing(guarded_target, shipped):
    """A wheel that shadows a distro module and ships ``sitewarden.silence`` with
    ``shadow:NAME`` beside the guard (pip installs it there, as root): the warning still
    comes (``SITEWARDEN_DEBUG=1`` says why), ``check`` keeps the shadow high with what it
    breaks, names the record that lists the file, and exits 1; ``acknowledge
    --deployment`` refuses to add to it.  The same line, written by ``acknowledge
    --deployment`` once no package lists the file, holds; made group-writable, it holds
    no more."""
    t = guarded_target
    pips = [v for v in pip_versions_for(t.version) if can_install(v, t.version)]
    env = {"PYTHONPATH": str(pip_dir(pips[-1])), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}

    def pip(*args):
        proc = t.python("-m", "pip", *args, "--break-system-packages", env=env)
        assert proc.returncode == 0, proc.stdout + proc.stderr

    t.copy_in(lambda stage: (
        make_dist(stage, "swra-lib", "1.0", {"swra_lib/__init__.py": ""}),
        make_dist(stage, "swra-app", "1.0", {"swra_app/__init__.py": ""},
                  requires=["swra-lib<2"])), t.distro_dir)
    silence = t.local_dir / settings.SITE_FILE
    for wheel, version in (("top", "2.0"), ("data", "2.1")):
        pip("install", "--no-index", "--no-deps", str(shipped[wheel]))
        assert t.read_bytes(silence) == b"shadow:swra_lib\n"
        why = "a package put it there (swra-lib %s's RECORD lists it)" % version
        proc = t.python("-c", "import swra_lib")
        assert proc.returncode == 0 and about(proc) == {"swra_lib"}, proc.stderr
        proc = t.python("-c", "import swra_lib", env={"SITEWARDEN_DEBUG": "1"})
        assert about(proc) == {"swra_lib"}, proc.stderr
        assert "sitewarden: debug: shadow:swra_lib in %s acknowledges nothing: %s" % (
            silence, why) in proc.stderr, proc.stderr

        status, report, text = t.cli_check()
        assert status == 1, text
        (shadow,) = [f for f in report["findings"] if f["kind"] == "shadowed-module"
                     and f["module"] == "swra_lib"]
        assert shadow["severity"] == "high" and not shadow.get("acknowledged"), shadow
        assert [b["consumer"] for b in shadow["breaks"]] == ["swra-app"], shadow
        assert shadow["acknowledgement_refused"] == str(silence), shadow
        assert "NOT acknowledged: shadow:swra_lib in %s acknowledges nothing: %s" % (
            silence, why) in shadow["message"], shadow
        assert report["shadowing"]["refused_silence_files"] == [{
            "path": str(silence), "state": "placed-by-package",
            "reason": "swra-lib %s's RECORD lists it" % version, "names": ["swra_lib"]}]
        (listed,) = [f for f in report["silence_files"] if f["path"] == str(silence)]
        assert [(w["word"], w["state"]) for w in listed["words"]] == [
            ("shadow:swra_lib", "placed by package")], listed
        assert "NOT acknowledged: shadow:swra_lib in %s acknowledges nothing" % silence \
            in text, text
        assert "%s: shadow:swra_lib placed by package" % silence in text, text
        if wheel == "top":
            proc = t.cli("acknowledge", shadow["id"], "--python", t.executable,
                         "--deployment")
            assert proc.returncode == 2, proc.stdout + proc.stderr
            assert "--deployment: %s acknowledges nothing: %s" % (silence, why) in \
                proc.stderr, proc.stderr
            assert t.read_bytes(silence) == b"shadow:swra_lib\n"
        pip("uninstall", "-y", "swra-lib")
        assert not t.exists(silence)

    # No package lists the file acknowledge --deployment writes: it holds, as before.
    pip("install", "--no-index", "--no-deps", str(shipped["plain"]))
    status, report, text = t.cli_check()
    (shadow,) = [f for f in report["findings"] if f.get("module") == "swra_lib"]
    assert status == 1 and shadow["severity"] == "high", shadow
    proc = t.cli("acknowledge", shadow["id"], "--python", t.executable, "--deployment")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert t.read_bytes(silence).decode().splitlines()[-1] == "shadow:swra_lib"
    proc = t.python("-c", "import swra_lib")
    assert proc.returncode == 0 and about(proc) == set(), proc.stderr
    status, report, text = t.cli_check()
    (shadow,) = [f for f in report["findings"] if f.get("module") == "swra_lib"]
    assert shadow["severity"] == "info" and shadow["acknowledged_by"] == str(silence), shadow
    assert "refused_silence_files" not in report["shadowing"], report["shadowing"]
    assert status == 0, text

    # Group-writable: anyone of its group could have written it; it acknowledges nothing.
    t.chmod(silence, 0o664)
    proc = t.python("-c", "import swra_lib")
    assert about(proc) == {"swra_lib"}, proc.stderr
    status, report, text = t.cli_check()
    (shadow,) = [f for f in report["findings"] if f.get("module") == "swra_lib"]
    assert status == 1 and shadow["severity"] == "high", shadow
    assert "users other than its owner may change it (mode 0664); make it its owner's " \
        "alone (chmod go-w %s)" % silence in shadow["message"], shadow
    assert "%s: shadow:swra_lib writable by others" % silence in text, text
