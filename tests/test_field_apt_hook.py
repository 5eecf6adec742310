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

import subprocess
from pathlib import Path

import test_deb
from harness.dists import make_dist
from test_deb import PYTHONS, VERSION, apt, need_dpkg_deb, ours, run

#: test_deb's fixtures: a namespace over each root (``ns``), this checkout's package (``debs``).
ns = test_deb.ns
debs = test_deb.debs

DISTRO = "usr/lib/python3/dist-packages"
SUSPECT = ("sitewarden: startup files of the packages this apt run changed are not what "
           "they should be:")


def tiny_deb(out: Path, module: str, version: str = "1.0", arch: str = "all",
             pth: str | None = None) -> Path:
    """``python3-<module>``: one module and its metadata in the distro directory, as
    Debian ships them (a dist-info without installer or record); ``Multi-Arch: same``
    when ``arch`` is not ``all`` (dpkg then names its ``.list`` ``<package>:<arch>``);
    ``pth``: the text of a ``<module>.pth`` it ships too."""
    need_dpkg_deb()
    name = "python3-" + module
    stage = out / ("stage-%s-%s" % (module, version))
    make_dist(stage / DISTRO, module, version, installer=None, record=False)
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
