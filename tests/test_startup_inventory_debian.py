"""The startup inventory through the Debian package: the apt hook and ``check --all``.

Real apt and dpkg in the debootstrapped roots (Debian 12, 13, sid with 3.14 and 3.15;
``test_deb``'s fixtures): sitewarden's ``.deb`` and a tiny ``python3-swrstart`` built here
whose ``swrstart.pth`` imports a module nobody ships.  After the apt run that installs it,
the hook reports the line that now fails at every start of each ``python3.X``, with the
package; ``check --all`` lists the file in every interpreter's inventory, owned by that
package, with the same error.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import test_deb
from test_deb import PYTHONS, VERSION, apt, need_dpkg_deb, ours, run

ns = test_deb.ns
debs = test_deb.debs

PTH = "/usr/lib/python3/dist-packages/swrstart.pth"
ERROR = "ModuleNotFoundError: No module named 'swrstart_gone'"


def broken_deb(out: Path) -> Path:
    """``python3-swrstart``: a ``.pth`` in the distro directory whose import line fails."""
    need_dpkg_deb()
    stage = out / "stage-swrstart"
    target = stage / PTH.lstrip("/")
    target.parent.mkdir(parents=True)
    target.write_text("import swrstart_gone\n")
    (stage / "DEBIAN").mkdir()
    (stage / "DEBIAN" / "control").write_text(
        "Package: python3-swrstart\nVersion: 1.0\nArchitecture: all\n"
        "Maintainer: t <t@example.org>\nDescription: a failing .pth\n test\n")
    deb = out / "python3-swrstart_1.0_all.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", "--build", str(stage), str(deb)],
                   check=True, capture_output=True)
    return deb


def test_apt_hook_and_check_all_report_a_startup_line_that_now_fails(ns, debs, tmp_path):
    tmp_path.chmod(0o755)
    apt(ns, "install", str(debs[VERSION]))
    proc = apt(ns, "install", str(broken_deb(tmp_path)))
    lines = ours(proc)
    text = "\n".join(lines)
    assert ("sitewarden: startup code fails at every start of these interpreters after this "
            "apt run:") in lines, proc.stdout + proc.stderr
    for version in PYTHONS[ns.release]:
        said = ("Error in import line from %s: import swrstart_gone" % PTH
                if version >= "3.15" else "Error processing line 1 of %s" % PTH)
        assert [x for x in lines if x.startswith("  python%s: %s: %s" % (version, said, ERROR))
                and "Debian package python3-swrstart" in x], text

    check = run(ns, ["sitewarden", "check", "--all", "--json"])
    assert check.returncode == 1, check.stdout + check.stderr
    items = json.loads(check.stdout)["interpreters"]
    # docs/check-schema.md: each report of --all names the interpreter's other names
    by_exe = {i["interpreter"]["executable"]: i["aliases"] for i in items if "interpreter" in i}
    assert "/usr/bin/python3" in [a for aliases in by_exe.values() for a in aliases], by_exe
    seen = set()
    for item in items:
        files = [f for f in item["startup"]["files"] if f["path"] == PTH]
        if not files:
            continue
        seen.add(item["interpreter"]["version"][:4].rstrip("."))
        assert files[0]["owner"]["package"] == "python3-swrstart", files
        assert files[0]["lines"][0]["error"] == ERROR, files
        assert any(f["kind"] == "startup-line-fails" and f["file"] == PTH
                   for f in item["findings"]), item["findings"]
        # sitewarden's own Debian package files are listed as the package's, not flagged
        own = [f for f in item["startup"]["files"] if f["path"].endswith("/sitewarden.pth")]
        for f in own:
            assert f["owner"]["kind"] in ("dpkg", "sitewarden"), f
            assert not [x for x in item["findings"] if x.get("file") == f["path"]]
    assert seen >= set(PYTHONS[ns.release]), seen
    human = run(ns, ["sitewarden", "check", "--all", "--verbose"])  # each failing line
    assert human.stdout.count("fails at every start: " + ERROR) >= len(PYTHONS[ns.release])
