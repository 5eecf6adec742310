"""The Debian package's apt hook reports what apt said it changes, not what file dates suggest.

apt tells its ``DPkg::Pre-Install-Pkgs`` hooks which packages it is about to change
(version 3 of its protocol); the report after the run covers those packages only, so a
``/var/lib/dpkg/info/<package>.list`` dated in the future (clock skew) no longer makes
every later run blame that package.  A ``dpkg -i`` that no apt started is reported by
dpkg's own ``post-invoke`` hook, from the ``.list`` files that run rewrote (never one
dated after the run).  The checks see root's user site, whose copies root's Python
programs import.

Real apt and dpkg in the debootstrapped roots (the fixtures and helpers of
``test_deb``): tiny ``.deb`` packages built here with ``dpkg-deb``, installed offline.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import test_deb
from harness.dists import make_dist
from harness.printed import runs_as_printed
from test_deb import (
    PATH,
    PYTHONS,
    VERSION,
    apt,
    distro_debs,
    need_dpkg_deb,
    ours,
    put_in_apt_cache,
    pythons,
    run,
)
from test_quarantine import FIX, MODULE

#: test_deb's fixtures: a namespace over each root (``ns``), this checkout's package (``debs``).
ns = test_deb.ns
debs = test_deb.debs

DISTRO = "usr/lib/python3/dist-packages"
SUSPECT = ("sitewarden: startup files of the packages this apt run changed are not what "
           "they should be:")


def tiny_deb(out: Path, module: str, version: str = "1.0", arch: str = "all",
             pth: str | None = None, body: str | None = None) -> Path:
    """``python3-<module>``: one module and its metadata in the distro directory, as
    Debian ships them (a dist-info without installer or record); ``Multi-Arch: same``
    when ``arch`` is not ``all`` (dpkg then names its ``.list`` ``<package>:<arch>``);
    ``pth``: the text of a ``<module>.pth`` it ships too; ``body``: the module's text."""
    need_dpkg_deb()
    name = "python3-" + module
    stage = out / ("stage-%s-%s" % (module, version))
    make_dist(stage / DISTRO, module, version, None if body is None else {
        module + ".py": body}, installer=None, record=False)
    if pth is not None:
        (stage / DISTRO / (module + ".pth")).write_text(pth)
    (stage / "DEBIAN").mkdir()
    (stage / "DEBIAN" / "control").write_text(
        "Package: %s\nVersion: %s\nArchitecture: %s\n%sMaintainer: t <t@example.org>\n"
        "Description: %s for the apt hook tests\n test\n"
        % (name, version, arch, "" if arch == "all" else "Multi-Arch: same\n", module))
    deb = out / ("%s_%s_%s.deb" % (name, version, arch))
    subprocess.run(["dpkg-deb", "--root-owner-group", "--build", str(stage), str(deb)],
                   check=True, capture_output=True)
    return deb


def shadow(namespace, tmp_path: Path, module: str, site: str) -> None:
    """A pip-installed ``module`` 2.0 in ``site`` (inside the root)."""
    stage = tmp_path / ("local-" + module)
    make_dist(stage, module, "2.0", installer="pip")
    proc = run(namespace, ["sh", "-c", 'mkdir -p "$1" && cp -a "$2"/. "$1"/', "-", site,
                           str(stage)])
    assert proc.returncode == 0, proc.stderr


def test_apt_hook_reports_what_apt_changed_never_a_future_dated_list(ns, debs, tmp_path):
    tmp_path.chmod(0o755)
    arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True,
                          check=True).stdout.strip()
    swtiny = [tiny_deb(tmp_path, "swtiny", v) for v in ("1.0", "1.1")]
    # swthree ships a .pth whose line would start a process (never: "0 and").
    swtwo = tiny_deb(tmp_path, "swtwo", arch=arch)
    swthree = tiny_deb(tmp_path, "swthree", pth="import os; 0 and os.system('true')\n")
    proc = apt(ns, "install", str(debs[VERSION]), str(swtiny[0]))
    assert "Setting up sitewarden" in proc.stdout and ours(proc) == [], proc.stdout
    version = PYTHONS[ns.release][0]
    local = ns.local_dir.as_posix()
    user_site = "/root/.local/lib/python%s/site-packages" % version
    # six (python3-six) shadowed by a local copy, its .list dated tomorrow; swtiny shadowed
    # by a local copy, swtwo by one in root's user site; swthree by none.
    shadow(ns, tmp_path, "six", local)
    shadow(ns, tmp_path, "swtiny", local)
    shadow(ns, tmp_path, "swtwo", user_site)
    touch = run(ns, ["touch", "-d", "+1 day", "/var/lib/dpkg/info/python3-six.list"])
    assert touch.returncode == 0, touch.stderr
    # Startup code that prints: the checks' reports come through a channel of their own.
    printing = run(ns, ["sh", "-c", 'echo "import sys; print(\'hello from a .pth\')" > "$1"',
                        "-", local + "/printing.pth"])
    assert printing.returncode == 0, printing.stderr

    proc = apt(ns, "install", str(swtiny[1]), str(swtwo), str(swthree))
    lines = ours(proc)
    text = "\n".join(lines)
    assert lines and lines[0] == (
        "sitewarden: local Python copies affect what this apt run installed: "
        "python3-swtiny 1.1 (upgraded from 1.0), python3-swtwo 1.0 (new)"), text
    python = "python" + version
    assert ("  %s: 'swtiny' is imported from %s/swtiny.py (swtiny 2.0), which shadows "
            "/usr/lib/python3/dist-packages/swtiny.py (swtiny 1.1) (python3-swtiny)"
            % (python, local)) in lines, text
    assert ("  %s: 'swtwo' is imported from %s/swtwo.py (swtwo 2.0), which shadows "
            "/usr/lib/python3/dist-packages/swtwo.py (swtwo 1.0) (python3-swtwo)"
            % (python, user_site)) in lines, text
    shadows = lines[:lines.index(SUSPECT)] if SUSPECT in lines else lines
    assert "six" not in "\n".join(shadows) and "swthree" not in "\n".join(shadows), text
    # ... and the startup file swthree ships: dangerous, named with its package.
    suspect = lines[lines.index(SUSPECT) + 1:]
    assert len(suspect) == len(PYTHONS[ns.release]), text
    assert all(("/usr/lib/python3/dist-packages/swthree.pth (Debian package "
                "python3-swthree" in x and "starts-processes" in x) for x in suspect), text
    assert "rror" not in proc.stderr, proc.stderr

    # A dpkg run no apt started: dpkg's own hook, from the .list files this run rewrote
    # (python3-six's, dated tomorrow, is not one of them).
    proc = run(ns, ["dpkg", "-i", str(swtiny[1])])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = ours(proc)
    text = "\n".join(lines)
    assert lines and lines[0] == ("sitewarden: local Python copies affect what this dpkg "
                                  "run installed (python3-swtiny):"), text
    assert "'swtiny' is imported from %s/swtiny.py" % local in text
    assert "six" not in text and "swtwo" not in text, text
    assert proc.stderr == "", proc.stderr

    # A failure inside the report: dpkg still succeeds; SITEWARDEN_DEBUG=1 tells it.
    targets = "/usr/lib/python3/dist-packages/sitewarden/cli/targets.py"
    ns.write_bytes(targets, ns.read_bytes(targets)
                   + b"\ndef machine_interpreters(*a):\n    raise OSError('boom')\n")
    proc = run(ns, ["dpkg", "-i", str(swtiny[1])], env={"SITEWARDEN_DEBUG": "1"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert ("sitewarden: debug: sitewarden.cli.dpkg_hook.main failed (OSError: boom); "
            "skipped: the apt hook's report") in proc.stderr, proc.stdout + proc.stderr


def _count(counter: Path) -> int:
    return len(counter.read_text().splitlines()) if counter.exists() else 0


def _check(namespace, python: str, cli=None) -> dict:
    proc = run(namespace, [*(cli or ["sitewarden"]), "check", "--python", python, "--json"])
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def test_the_hooks_fixes_run_as_printed(ns, debs, tmp_path):
    """The apt hook's fixes, each run as printed with no terminal and stdin closed, with
    the package's own ``/usr/bin/sitewarden``: a shadow's removes the local copy whole and
    leaves the distro's as it was; the one for a dangerous ``.pth`` a package ships takes
    it out of every start, and its payload runs zero more times."""
    tmp_path.chmod(0o777)
    counter = tmp_path / "counter"
    swfix = tiny_deb(tmp_path, "swfix")
    swpay = tiny_deb(tmp_path, "swpay", pth="import swpay\n", body=MODULE % str(counter))
    apt(ns, "install", str(debs[VERSION]))
    local = ns.local_dir.as_posix()
    shadow(ns, tmp_path, "swfix", local)
    proc = apt(ns, "install", str(swfix), str(swpay))
    text = "\n".join(ours(proc))
    assert _count(counter) == 0, text  # the hook's probes run nothing of it
    assert run(ns, ["python3", "-c", "pass"]).returncode == 0 and _count(counter) == 1

    # The shadow's fix (python3's local directory: the interpreter whose it is).
    fixes = re.findall(r"^    fix: (.+)$", text, re.M)
    assert fixes == ["sitewarden quarantine %s --python /usr/bin/python%s" % (
        FIX.match(fixes[0]).group(1), PYTHONS[ns.release][0])], text
    assert all(FIX.fullmatch(f) for f in fixes), fixes
    distro = {name: ns.read_bytes("/%s/%s" % (DISTRO, name))
              for name in ("swfix.py", "swfix-1.0.dist-info/METADATA")}
    done = runs_as_printed(ns, fixes[0], {"PATH": PATH}, shim=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not ns.exists(local + "/swfix.py") and not ns.exists(local + "/swfix-2.0.dist-info")
    assert {name: ns.read_bytes("/%s/%s" % (DISTRO, name)) for name in distro} == distro
    for python in pythons(ns):
        assert not [f for f in _check(ns, python)["findings"] if f.get("module") == "swfix"]

    # The .pth's fix, from the lines about the startup files this run changed.
    suspect = text[text.index(SUSPECT):]
    commands = re.findall(r"\((sitewarden quarantine [0-9a-f]{12} --python \S+)\)", suspect)
    assert len(set(commands)) == len(PYTHONS[ns.release]), suspect
    pth = "/%s/swpay.pth" % DISTRO
    done = runs_as_printed(ns, commands[0], {"PATH": PATH}, shim=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "is what the Debian package python3-swpay ships" in done.stdout, done.stdout
    assert _count(counter) == 1, "the fix ran the payload"
    assert not ns.exists(pth)
    assert run(ns, ["python3", "-c", "pass"]).returncode == 0 and _count(counter) == 1
    for python in pythons(ns):
        assert not [f for f in _check(ns, python)["findings"] if f.get("file") == pth]


def test_a_changed_debian_startup_file_is_fixed_as_printed(ns, tmp_path):
    """python3-setuptools' ``distutils-precedence.pth``, with a payload appended: its
    fix (the quarantine, then apt's reinstall from its archive, found in apt's cache
    here: offline) works as printed, the payload never runs (apt's maintainer scripts
    start python3 normally: by then it is out of every start), the package's file is
    back; ``--restore`` refuses to overwrite it."""
    tmp_path.chmod(0o777)
    counter = tmp_path / "counter"
    put_in_apt_cache(ns, distro_debs(ns.release, ("python3-setuptools",)))
    pth = "/%s/distutils-precedence.pth" % DISTRO
    original = ns.read_bytes(pth)
    ns.write_bytes(pth, original + b"import os; open(%r, 'a').write('ran\\n')\n" % (
        str(counter).encode()))
    assert run(ns, ["python3", "-c", "pass"]).returncode == 0 and _count(counter) == 1
    (found,) = [f for f in _check(ns, "/usr/bin/python3", ns.cli)["findings"]
                if f["kind"] == "startup-file-modified" and f.get("file") == pth]
    command = found["command"]
    assert command == "sitewarden quarantine %s --python /usr/bin/python3 && apt-get install " \
        "--reinstall -y python3-setuptools" % found["id"][:12], found
    done = runs_as_printed(ns, command, {"PATH": PATH})
    assert done.returncode == 0, done.stdout + done.stderr
    assert _count(counter) == 1, "the fix ran the payload"
    assert ns.read_bytes(pth) == original
    assert not [f for f in _check(ns, "/usr/bin/python3", ns.cli)["findings"]
                if f.get("file") == pth and f["severity"] != "info"]
    undo = runs_as_printed(ns, "sitewarden quarantine --restore %s" % found["id"][:12],
                           {"PATH": PATH})
    assert undo.returncode == 2 and "exists now with other content" in undo.stderr, undo
    assert ns.read_bytes(pth) == original
