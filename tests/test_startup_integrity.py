"""``check`` verifies who installed a startup file: the owner's hash of it, not its word.

An owner is a claim: a Debian package's ``.list`` names the file, a distribution's RECORD
lists it.  ``check`` hashes each startup file it lists and compares the hash with the
owner's record (``integrity.verify_dpkg``: the package's ``.md5sums``, or for a conffile the
md5 in dpkg's status; ``integrity.verify_record``: the RECORD line's ``sha256=``):

- on Debian's pythons (Debian 12 in a namespace, the roots' 3.13, 3.14, 3.15; the overlays
  are the test's own): the stock files verify (no finding), Debian's
  ``distutils-precedence.pth`` is the template; its ``_distutils_hack/__init__.py`` changed
  (no capability shows it) is ``startup-module-modified``, high; setuptools'
  ``distutils-precedence.pth`` with a payload appended, replaced wholesale, or spliced into
  its line (then not the template: not its exact content) is ``startup-file-modified``,
  high, with the reinstall command (the three ways share the roots); Debian's conffile
  ``/etc/python3.X/sitecustomize.py`` with a line appended is "changed by the
  administrator", medium; a ``.pth`` planted with its path appended to
  ``python3-six.list`` (no ``.md5sums`` line) is "claimed, not verified", judged unowned;
- on a hermetic python: a wheel's ``.pth`` that matches its RECORD (verified), the module
  it runs edited (``startup-module-modified``, high), the ``.pth`` edited (high, with
  pip's reinstall command), a RECORD line without a hash and a RECORD
  that does not list itself (not verified: judged unowned).
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest

from harness.dists import make_dist
from harness.guarded import DebianGuarded, make_guarded
from harness.interpreters import pyenv_interpreters
from harness.spread import DEBIAN, target_params

DP = "/usr/lib/python3/dist-packages/distutils-precedence.pth"
HACK = "/usr/lib/python3/dist-packages/_distutils_hack/__init__.py"
PLANTED = "/usr/lib/python3/dist-packages/swr-integ-planted.pth"
SIX_LIST = "/var/lib/dpkg/info/python3-six.list"
PAYLOAD = b"import sys; exec('sys.swr_integ_payload = 1')\n"


@pytest.fixture(params=target_params("debian"))
def debian_dpkg(request):
    """``debian_any``'s targets (the host's Debian 12 python, id ``host``, then the roots',
    which are overlaid whole), dpkg's database writable in each."""
    if request.param == DEBIAN:
        target = DebianGuarded(extra_overlays=["/var/lib/dpkg"])
    else:
        target = make_guarded(request.param, deploy=False)
    target.param = request.param
    yield target
    target.close()


def _report(t) -> dict:
    """``sitewarden check --python <t> --json`` (the CLI's own run: its probe, its cache)."""
    proc = t.cli("check", "--python", t.executable, "--json")
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def _md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def _file(report, path):
    found = [f for f in report["startup"]["files"] if f["path"] == path]
    assert len(found) == 1, (path, [f["path"] for f in report["startup"]["files"]])
    return found[0]


def _about(report, path, kind=None):
    return [f for f in report["findings"] if f.get("file") == path
            and (kind is None or f["kind"] == kind)]


def _tampered(way: str, original: bytes) -> bytes:
    if way == "appended":
        return original + PAYLOAD
    if way == "replaced":
        return PAYLOAD
    spliced = original.replace(  # inside its one line: it starts and ends as the template
        b"enabled and __import__",
        b"__import__('os').environ.setdefault('SWR_INTEG', '1'); enabled and __import__", 1)
    assert spliced != original, original
    return spliced


def _stock_is_verified(report) -> None:
    """Every file a Debian package or a RECORD claims verifies; nothing is flagged for it."""
    files = report["startup"]["files"]
    for f in files:
        owner = f["owner"]
        if owner["kind"] in ("dpkg", "distribution"):
            assert owner["verified"] is True, f
            assert owner["expected"] == owner["actual"] and owner["mismatch"] is None, f
        else:
            assert owner["verified"] is None, f
    assert not [x for x in report["findings"] if x["kind"] == "startup-file-modified"
                or (x["kind"] == "unowned-startup-code" and "owner" in x)], report["findings"]
    # what Debian's files reach beyond their templates' own (setuptools behind
    # _distutils_hack) is read whole and does nothing dangerous
    assert not [x for x in report["findings"] if x["kind"] == "unread-startup-code"
                or x["severity"] == "high"], report["findings"]


def _stock_checked(t, conf: str):
    """Debian's stock startup files: verified, the conffile's, setuptools' the template;
    ``(the sitecustomize's entries, the .pth's stock bytes)``."""
    stock = _report(t)
    _stock_is_verified(stock)
    sc = [f for f in stock["startup"]["files"] if f["kind"] == "sitecustomize"]
    assert sc and sc[0]["realpath"] == conf, sc
    assert sc[0]["owner"]["record"] == "conffile", sc
    assert sc[0]["owner"]["package"].startswith("libpython3"), sc
    hack = _file(stock, DP)
    assert hack["owner"]["package"] == "python3-setuptools", hack
    assert hack["owner"]["record"] == "md5sums", hack
    original = t.read_bytes(Path(DP))
    assert hack["owner"]["expected"] == _md5(original), hack
    assert hack["template"] == "setuptools distutils-precedence", hack  # Debian's, pinned
    return sc, original


def _changed_module_is_found(t) -> None:
    """The module behind Debian's verified .pth, changed in a way no capability shows:
    checked against python3-setuptools' md5sums, high, never the template."""
    module = Path(HACK)
    stock_module = t.read_bytes(module)
    t.write_bytes(module, stock_module + b"\n# swr-integ: changed\n")
    report = _report(t)
    assert _file(report, DP)["owner"]["verified"] is True
    assert _file(report, DP)["template"] is None, _file(report, DP)
    (changed,) = _about(report, DP, "startup-module-modified")
    assert changed["severity"] == "high" and changed["path"] == HACK, changed
    assert changed["owner"] == {"kind": "dpkg", "package": "python3-setuptools",
                                "verified_against": None}, changed  # it does not match
    assert changed["command"] == "sitewarden quarantine %s --python %s && apt-get install " \
        "--reinstall -y python3-setuptools" % (changed["id"][:12], t.executable), changed
    assert changed["expected"] == _md5(stock_module), changed
    t.write_bytes(module, stock_module)


def test_debian_startup_files_verify_and_tampering_is_found(debian_dpkg):
    t = debian_dpkg
    conf = "/etc/python%d.%d/sitecustomize.py" % t.version[:2]
    sc, original = _stock_checked(t, conf)
    _changed_module_is_found(t)

    # Tampered: setuptools' file (this target's share of the three ways), Debian's
    # conffile, and a .pth whose path was appended to python3-six's list by hand.
    conf_text = t.read_bytes(Path(conf))
    t.write_bytes(Path(conf), conf_text + b"import os  # swr-integ: an administrator's line\n")
    six = t.read_bytes(Path(SIX_LIST))
    t.put(Path(PLANTED), data=PAYLOAD)
    t.put(Path(SIX_LIST), data=six + PLANTED.encode() + b"\n")
    for n, way in enumerate(t.share(["appended", "replaced", "spliced"])):
        data = _tampered(way, original)
        t.write_bytes(Path(DP), data)
        if n == 0:
            status, report, text = t.cli_check()
            assert status == 1, text
        else:
            report, text = _report(t), None
        f = _file(report, DP)
        assert f["owner"]["verified"] is False, (way, f)
        assert (f["owner"]["expected"], f["owner"]["actual"]) == (_md5(original), _md5(data))
        assert f["template"] is None, (way, f)  # not the template's exact content
        (found,) = _about(report, DP, "startup-file-modified")
        assert found["severity"] == "high", found
        assert found["owner"]["package"] == "python3-setuptools", found
        assert found["command"] == "sitewarden quarantine %s --python %s && apt-get " \
            "install --reinstall -y python3-setuptools" % (found["id"][:12], t.executable)
        assert found["command"] in found["message"], found
        assert _md5(original) in found["message"] and _md5(data) in found["message"], found
        assert found["conffile"] is False, found
        assert not [x for x in _about(report, DP) if x["kind"] != "startup-file-modified"]
        if text is None:
            continue
        assert "%s [Debian package python3-setuptools, MODIFIED" % DP in text, text
        _conffile_and_planted(report, text, sc, conf_text)


def _conffile_and_planted(report, text: str, sc, conf_text: bytes) -> None:
    """The conffile, changed by the administrator: medium; a .pth python3-six's list
    claims (no hash of it): judged as unowned."""
    (changed,) = _about(report, sc[0]["path"], "startup-file-modified")
    assert changed["severity"] == "medium" and changed["conffile"] is True, changed
    assert "changed by the administrator" in changed["message"], changed
    # The conffile out of every start, then the package's own back (confmiss: dpkg
    # installs a missing conffile without asking).
    assert changed["command"].startswith("sitewarden quarantine %s --python " % (
        changed["id"][:12])) and changed["command"].endswith(
        " && apt-get install --reinstall -y -o Dpkg::Options::=--force-confmiss %s"
        % sc[0]["owner"]["package"]), changed
    owner = _file(report, sc[0]["path"])["owner"]
    assert owner["verified"] is False and owner["record"] == "conffile", owner
    assert owner["expected"] == _md5(conf_text), owner
    assert not [x for x in _about(report, sc[0]["path"]) if x is not changed]
    assert "conffile changed since installed]" in text, text

    # Claimed by python3-six's list, which has no hash of it: judged as unowned.
    planted = _file(report, PLANTED)
    assert planted["owner"]["kind"] == "dpkg", planted
    assert planted["owner"]["package"] == "python3-six", planted
    assert planted["owner"]["verified"] is None, planted
    (unowned,) = _about(report, PLANTED)
    assert unowned["kind"] == "unowned-startup-code", unowned
    assert unowned["severity"] == "medium", unowned
    assert unowned["owner"] == {"kind": "dpkg", "package": "python3-six",
                                "verified_against": None}, unowned
    assert "claimed by the Debian package python3-six, not verified" in unowned["message"]
    assert "%s [claimed by Debian package python3-six, unverified]" % PLANTED in text


# ------------------------------------------------------------ a distribution's RECORD


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(
        hashlib.sha256(data).digest()).rstrip(b"=").decode()


def test_a_wheels_pth_is_checked_against_its_record(make_hermetic):
    t = make_hermetic(pyenv_interpreters()[-1])
    local = t.local_dir
    line = b"import swr_integ_ok; swr_integ_ok.hello()\n"

    def build(stage: Path) -> None:
        make_dist(stage, "swr-integ-ok", "1.0", {
            "swr_integ_ok.py": "def hello():\n    pass\n",
            "swr_integ_ok.pth": line.decode()}, installer="pip")
        for name, how in (("swr-integ-nohash", "no hash"), ("swr-integ-noself", "no self")):
            mod = name.replace("-", "_")
            meta = make_dist(stage, name, "2.0", {
                mod + ".py": "", mod + ".pth": "import %s\n" % mod}, installer="pip")
            record = meta / "RECORD"
            rows = record.read_text().splitlines()
            if how == "no hash":
                rows = [mod + ".pth,," if r.startswith(mod + ".pth,") else r for r in rows]
            else:
                rows = [r for r in rows if not r.endswith("/RECORD,,")]
            record.write_text("\n".join(rows) + "\n")

    t.copy_in(build, local)
    ok, nohash, noself = (str(local / n) for n in (
        "swr_integ_ok.pth", "swr_integ_nohash.pth", "swr_integ_noself.pth"))
    report = _report(t)
    owner = _file(report, ok)["owner"]
    assert owner["verified"] is True and owner["record"] == "RECORD", owner
    assert owner["expected"] == owner["actual"] == _record_hash(line), owner
    assert [x["kind"] for x in _about(report, ok)] == ["distribution-startup-code"]
    for path, name, why in ((nohash, "swr-integ-nohash", "no hash"),
                            (noself, "swr-integ-noself", "does not list itself")):
        owner = _file(report, path)["owner"]
        assert owner["kind"] == "distribution" and owner["verified"] is None, owner
        assert why in owner["mismatch"], owner
        (found,) = _about(report, path)
        assert found["kind"] == "unowned-startup-code" and found["severity"] == "medium"
        assert found["owner"] == {"kind": "distribution", "distribution": name,
                                  "version": "2.0", "verified_against": None}, found
        assert "claimed by the distribution %s 2.0, not verified" % name in found["message"]

    # The module the .pth runs, changed where no capability shows it: its RECORD says so.
    module = local / "swr_integ_ok.py"
    stock = t.read_bytes(module)
    t.write_bytes(module, stock + b"# changed\n")
    report = _report(t)
    assert _file(report, ok)["owner"]["verified"] is True
    (found,) = _about(report, ok, "startup-module-modified")
    assert found["severity"] == "high" and found["path"] == str(module), found
    assert (found["owner"]["distribution"], found["expected"]) == (
        "swr-integ-ok", _record_hash(stock))
    assert found["command"] == "sitewarden quarantine %s --python %s" % (
        found["id"][:12], t.executable), found
    t.write_bytes(module, stock)

    edited = line + PAYLOAD
    t.write_bytes(Path(ok), edited)
    status, report, text = t.cli_check()
    assert status == 1, text
    owner = _file(report, ok)["owner"]
    assert owner["verified"] is False, owner
    assert (owner["expected"], owner["actual"]) == (_record_hash(line), _record_hash(edited))
    (found,) = _about(report, ok)
    assert found["kind"] == "startup-file-modified" and found["severity"] == "high", found
    assert (found["owner"]["distribution"], found["owner"]["version"]) == (
        "swr-integ-ok", "1.0"), found
    assert found["command"] == "sitewarden quarantine %s --python %s" % (
        found["id"][:12], t.executable), found
    assert found["command"] in found["message"] and "-m pip" not in found["message"], found
    assert _record_hash(edited) in found["message"], found
    assert "%s [swr-integ-ok 1.0, MODIFIED: does not match its RECORD]" % ok in text, text
    assert "%s [claimed by swr-integ-nohash 2.0, unverified]" % nohash in text, text


# ------------------------------------------------------------ the readers, on a fake database


def test_verify_dpkg_reads_md5sums_and_conffiles(tmp_path):
    """``integrity.verify_dpkg`` on a database made here: an ``.md5sums`` line (also a
    ``Multi-Arch: same`` package's ``<package>:<arch>.md5sums``), a conffile's md5 in the
    status file (also ``newconffile``: no hash yet), no line (not verified), and a link
    re-pointed at another file of the package (its hash is not borrowed)."""
    from sitewarden.facts import integrity

    info = tmp_path / "info"
    info.mkdir()
    site = tmp_path / "usr" / "lib" / "python3" / "dist-packages"
    etc = tmp_path / "etc" / "python3.99"
    site.mkdir(parents=True)
    etc.mkdir(parents=True)
    pth, other, conf = site / "x.pth", site / "other.py", etc / "sitecustomize.py"
    pth.write_bytes(b"import os\n")
    other.write_bytes(b"import sys\n")
    conf.write_bytes(b"# conf\n")
    link = site / "sitecustomize.py"
    link.symlink_to(conf)
    rel = str(pth).lstrip("/")
    (info / "python3-x.md5sums").write_text("%s  %s\n%s  %s\n" % (
        _md5(b"import os\n"), rel, _md5(b"import sys\n"), str(other).lstrip("/")))
    (info / "libpython3.99-minimal:amd64.md5sums").write_text(
        "%s  %s\n" % (_md5(b"import os\n"), rel))
    status = tmp_path / "status"
    status.write_text(
        "Package: python3-x\nStatus: install ok installed\n\n"
        "Package: libpython3.99-minimal\nArchitecture: amd64\nConffiles:\n"
        " %s %s\n /etc/other.conf newconffile\nDescription: x\n\n" % (conf, _md5(b"# conf\n")))

    def verify(package, path):
        return integrity.verify_dpkg(package, str(path), info=str(info), status=str(status))

    v = verify("python3-x", pth)
    assert (v.verified, v.record, v.expected) == (True, "md5sums", _md5(b"import os\n"))
    assert verify("libpython3.99-minimal", pth).verified is True  # <package>:<arch>.md5sums
    pth.write_bytes(b"import os\nimport evil\n")
    v = verify("python3-x", pth)
    assert v.verified is False and v.actual == _md5(pth.read_bytes()), v.mismatch
    assert "python3-x.md5sums records %s" % _md5(b"import os\n") in v.mismatch
    v = verify("python3-six", pth)
    assert v.verified is None and v.mismatch == "python3-six.md5sums has no line for it"
    # Debian's sitecustomize: a link into /etc... (the status names the path as resolved,
    # which here is below tmp_path, not /etc: checked through a path that is)
    assert integrity._conffile_hash("libpython3.99-minimal", str(conf).encode(), str(status)) \
        == (True, _md5(b"# conf\n"))
    assert integrity._conffile_hash("libpython3.99-minimal", b"/etc/other.conf", str(status)) \
        == (True, None)
    assert integrity._conffile_hash("python3-x", str(conf).encode(), str(status)) == (False, None)
    # A link re-pointed at another file the package owns does not borrow its hash.
    pth.unlink()
    pth.symlink_to(other)
    v = verify("python3-x", pth)
    assert v.verified is False, (v.verified, v.mismatch)
    assert verify("python3-x", link).verified is None  # not under /etc: no conffile here


def _debian_deb(name: str) -> Path:
    """``name``'s .deb at the host's candidate version (``apt-get download``, cached)."""
    import subprocess  # reason: only this test downloads a package
    directory = Path.home() / ".cache" / "sitewarden-tests" / "debs" / "bookworm"
    directory.mkdir(parents=True, exist_ok=True)
    found = sorted(directory.glob("%s_*.deb" % name))
    if not found:
        proc = subprocess.run(["apt-get", "download", name], cwd=str(directory),
                              capture_output=True, text=True, timeout=300)
        found = sorted(directory.glob("%s_*.deb" % name))
        assert found, proc.stdout + proc.stderr
    return found[-1]


@pytest.mark.debian
def test_debians_coverage_is_pinned_and_its_line_is_benign():
    """Debian 12's python3-coverage (dpkg -i in the host's namespace), and coverage's
    documented line in a .pth of the user's: the coverage template (its modules verified
    against the package's md5sums, whose rows are pinned; its C tracer's md5 too): nothing
    of coverage's is flagged."""
    t = DebianGuarded(extra_overlays=["/var/lib/dpkg", "/var/log", "/usr/bin", "/usr/share"])
    try:
        deb = _debian_deb("python3-coverage")
        inside = "/tmp/" + deb.name
        t.put(Path(inside), data=deb.read_bytes())
        proc = t.run(["dpkg", "-i", "--force-depends", inside])
        assert proc.returncode == 0, proc.stdout + proc.stderr
        pth = t.local_dir / "zz-swr-coverage.pth"
        t.put(pth, data=b"import coverage; coverage.process_startup()\n")
        report = _report(t)
        f = _file(report, str(pth))
        assert f["template"] == "coverage.py process_startup", f
        bad = [x for x in report["findings"] if x["severity"] in ("medium", "high")]
        # coverage's own code is excused; Debian's coverage imports six, beyond coverage's
        # own files: what six hides (a computed import, __path__ changes) is unread as any
        # module's is (unread-startup-code), nothing else
        assert all(x["kind"] == "unread-startup-code" and all(
            u.startswith("six ") for u in x["unread"]) for x in bad), "\n".join(
                x["message"] for x in bad)
    finally:
        t.close()
