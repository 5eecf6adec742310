"""Who owns a file in dpkg's database, read from the ``.list`` files without spawning dpkg.

``detect.owners.dpkg_owners`` runs inside targets (``check``'s startup inventory) and in
the pip guard.  Tested on a dpkg database built here (every edge of the format) and on
this machine's real one, read only, against ``dpkg -S``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.guarded import running_under_ci
from sitewarden.detect.owners import dpkg_owners


def make_info(tmp_path: Path, lists: dict) -> str:
    info = tmp_path / "info"
    info.mkdir(parents=True)
    for name, paths in lists.items():
        (info / (name + ".list")).write_text("".join(p + "\n" for p in paths))
    (info / "python3-x.md5sums").write_text("0" * 32 + "  usr/lib/python3/dist-packages/x.pth\n")
    return str(info)


def test_owners_from_a_database_built_here(tmp_path):
    site = "/usr/lib/python3/dist-packages"
    info = make_info(tmp_path, {
        "python3-x": ["/.", "/usr", site, site + "/x.pth"],       # at the end of its list
        "libpython3.99-minimal:amd64": [site + "/first.pth", "/usr"],  # at the start
        "zz-other": ["/.", site, site + "/other.pth", "/usr/share"],  # not a likely package
        "python3-y": ["/.", site + "/x.pth.bak", site + "/y.pth-old"],  # prefixes do not match
    })
    paths = [site + n for n in ("/x.pth", "/first.pth", "/other.pth", "/y.pth", "/none.pth")]
    assert dpkg_owners(paths, info=info) == {
        site + "/x.pth": "python3-x",
        site + "/first.pth": "libpython3.99-minimal",  # the architecture is not the package's
        site + "/other.pth": "zz-other",
    }
    # A path whose owner matters less than the time is looked up in the likely lists only,
    # unless another path makes every list read anyway.
    assert dpkg_owners([site + "/other.pth"], info=info,
                       likely_only={site + "/other.pth"}) == {}
    assert dpkg_owners([site + "/other.pth", site + "/none.pth"], info=info,
                       likely_only={site + "/other.pth"}) == {site + "/other.pth": "zz-other"}
    # The caller's guess is read first and wins when two lists name one path.
    both = make_info(tmp_path / "both", {"python3-a": [site + "/x.pth"],
                                         "python3-b": [site + "/x.pth"]})
    assert dpkg_owners([site + "/x.pth"], info=both) == {site + "/x.pth": "python3-a"}
    assert dpkg_owners([site + "/x.pth"], info=both, guess="python3-b") == {
        site + "/x.pth": "python3-b"}
    # No database, an unreadable list, no paths: no owners, no error.
    assert dpkg_owners([site + "/x.pth"], info=str(tmp_path / "missing")) == {}
    assert dpkg_owners([], info=info) == {}
    if os.geteuid() != 0:
        os.chmod(os.path.join(info, "python3-x.list"), 0)
        assert dpkg_owners([site + "/x.pth"], info=info) == {}


def test_owners_through_a_symbolic_link(tmp_path):
    """Debian's ``sitecustomize.py`` is a link into ``/etc``: the list names the link."""
    target = tmp_path / "etc" / "sitecustomize.py"
    target.parent.mkdir()
    target.write_text("")
    link = tmp_path / "lib" / "sitecustomize.py"
    link.parent.mkdir()
    link.symlink_to(target)
    info = make_info(tmp_path, {"libpython3.99-minimal": [str(link)],
                                "python3.99-conf": [str(target)]})
    assert dpkg_owners([str(link)], info=info) == {str(link): "libpython3.99-minimal"}
    assert dpkg_owners([str(target)], info=info) == {str(target): "python3.99-conf"}


def test_owners_agree_with_dpkg_on_this_machine():
    """This machine's real database, read only: what ``dpkg -S`` says, for Python's files
    and for one file of a package that ships no Python."""
    if shutil.which("dpkg") is None or not os.path.isdir("/var/lib/dpkg/info"):
        if running_under_ci():
            pytest.fail("CI runs on Debian: dpkg's database is part of the contract")
        pytest.skip("no dpkg database here")
    paths = []
    for path in ("/usr/lib/python3/dist-packages/distutils-precedence.pth",
                 "/etc/python3.11/sitecustomize.py", "/usr/share/doc/dpkg/copyright",
                 "/usr/lib/python3/dist-packages/surely-nobody-owns-this.pth"):
        if os.path.exists(path) or "nobody" in path:
            paths.append(path)
    expected = {}
    for path in paths:
        proc = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True)
        if proc.returncode == 0:
            expected[path] = proc.stdout.split(":")[0].split(",")[0].strip()
    assert expected, "dpkg owns none of %s" % paths
    assert dpkg_owners(paths) == expected
