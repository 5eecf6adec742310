"""Who owns a file in dpkg's database, read from the ``.list`` files without spawning dpkg.

``facts.owners.dpkg_owners`` runs inside targets (``check``'s startup inventory) and in
the pip guard.  Tested on a dpkg database built here (every edge of the format) and on
this machine's real one, read only, against ``dpkg -S``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.guarded import running_under_ci
from sitewarden.audit import provenance
from sitewarden.facts import integrity
from sitewarden.facts.owners import dpkg_owners


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


def linked_sitecustomize(tmp_path: Path) -> tuple:
    """``(link, target)``: a ``sitecustomize.py`` linked into an ``etc``, as Debian's."""
    target = tmp_path / "etc" / "sitecustomize.py"
    target.parent.mkdir()
    target.write_text("")
    link = tmp_path / "lib" / "sitecustomize.py"
    link.parent.mkdir()
    link.symlink_to(target)
    return link, target


def test_owners_through_a_symbolic_link(tmp_path):
    """Debian's ``sitecustomize.py`` is a link into ``/etc``: the list names the link."""
    link, target = linked_sitecustomize(tmp_path)
    info = make_info(tmp_path, {"libpython3.99-minimal": [str(link)],
                                "python3.99-conf": [str(target)]})
    assert dpkg_owners([str(link)], info=info) == {str(link): "libpython3.99-minimal"}
    assert dpkg_owners([str(target)], info=info) == {str(target): "python3.99-conf"}


def test_the_index_ranks_lists_as_the_search_reads_them(tmp_path):
    """Where two lists name one startup file (a diversion), or a link and its target are
    named by different packages, the index answers what the search answers: the list the
    search reads first (a likely package's before the others', each in name order), not
    the first in name order, and the same whatever the hash seed."""
    site = "/usr/lib/python3/dist-packages"
    link, target = linked_sitecustomize(tmp_path)
    info = make_info(tmp_path / "db", {
        "aaa-divert": [site + "/x.pth"], "python3-x": [site + "/x.pth"],
        "aaa-link": [str(link)], "python3-target": [str(target)],
    })
    Path(tmp_path / "db" / "status").write_text("")
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    paths = [site + "/x.pth", str(link)]
    expected = {site + "/x.pth": "python3-x", str(link): "python3-target"}
    assert dpkg_owners(paths, info=info) == expected
    for _ in range(2):  # built, then read back
        assert dpkg_owners(paths, info=info, index_dir=str(cache)) == expected
    code = ("import sys; sys.path[:0] = [%r]; from sitewarden.facts.owners import "
            "dpkg_owners; print(sorted(dpkg_owners(%r, info=%r, index_dir=%r).items()))"
            % (str(Path(__file__).resolve().parents[1] / "src"), paths, info, str(cache)))
    for seed in ("1", "2", "3"):
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              env=dict(os.environ, PYTHONHASHSEED=seed), check=True)
        assert proc.stdout.strip() == str(sorted(expected.items()))


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


def _dpkg_run(info: str, lists: dict) -> None:
    """What dpkg does to its database when it installs or upgrades: each new list renamed
    into place, the status file rewritten."""
    for name, paths in lists.items():
        new = os.path.join(info, name + ".list-new")
        Path(new).write_text("".join(p + "\n" for p in paths))
        os.replace(new, os.path.join(info, name + ".list"))
    status = os.path.join(os.path.dirname(info), "status")
    Path(status + "-new").write_text("Package: %s\n" % ",".join(lists))
    os.replace(status + "-new", status)


def test_the_startup_file_index_answers_as_every_list_would(tmp_path):
    """With ``index_dir`` (the probe's payload), startup files are answered from an index
    of every list's startup files, as the lists answer: made once, brought up to date
    after a dpkg run by reading only the lists that changed, never trusted from a
    directory or file another user could write."""
    site = "/usr/lib/python3/dist-packages"
    info = make_info(tmp_path / "db", {
        "python3-x": [site, site + "/x.pth"],
        "zz-other": [site, site + "/other.pth", "/etc/zz/sitecustomize.py"],
        "aa-first": ["/usr/share/doc/aa-first"],
    })
    Path(tmp_path / "db" / "status").write_text("")
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o755)
    paths = [site + "/x.pth", site + "/other.pth", site + "/payload.pth",
             "/etc/zz/sitecustomize.py"]
    expected = dpkg_owners(paths, info=info)
    assert expected == {site + "/x.pth": "python3-x", site + "/other.pth": "zz-other",
                        "/etc/zz/sitecustomize.py": "zz-other"}
    assert dpkg_owners(paths, info=info, index_dir=str(cache)) == expected
    (index,) = cache.iterdir()
    text = index.read_bytes()
    assert b"P\tzz-other.list\t%s/other.pth\n" % site.encode() in text
    assert b"x.pth" in text and b"/usr/share/doc" not in text  # startup files only
    assert oct(index.stat().st_mode & 0o777) == "0o600"

    # Answered from the index: a list changed behind dpkg's back is not read again...
    other = os.path.join(info, "zz-other.list")
    st = os.stat(other)
    Path(other).write_text(site + "/payload.pth\n")
    os.utime(other, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert dpkg_owners(paths, info=info, index_dir=str(cache)) == expected
    # ...and after a dpkg run, the lists that changed are (inode, size, times).
    _dpkg_run(info, {"zz-new": [site + "/new.pth"]})
    assert dpkg_owners(paths + [site + "/new.pth"], info=info, index_dir=str(cache)) == {
        site + "/x.pth": "python3-x", site + "/payload.pth": "zz-other",
        site + "/new.pth": "zz-new"}
    _dpkg_run(info, {"zz-other": [site + "/other.pth"]})  # an upgrade
    assert dpkg_owners(paths, info=info, index_dir=str(cache)) == {
        site + "/x.pth": "python3-x", site + "/other.pth": "zz-other"}
    os.unlink(os.path.join(info, "zz-other.list"))  # a removal
    _dpkg_run(info, {})
    assert dpkg_owners(paths, info=info, index_dir=str(cache)) == {site + "/x.pth": "python3-x"}
    assert dpkg_owners(paths, info=info) == {site + "/x.pth": "python3-x"}

    # An index another user could have written is not read, and none is kept where
    # another user could write: the lists are read instead, with the same answers.
    index.write_bytes(index.read_bytes().replace(b"zz-new", b"python3-x"))
    index.chmod(0o622)
    assert dpkg_owners([site + "/new.pth"], info=info, index_dir=str(cache)) == {
        site + "/new.pth": "zz-new"}
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    assert dpkg_owners(paths, info=info, index_dir=str(shared)) == {
        site + "/x.pth": "python3-x"}
    assert list(shared.iterdir()) == []
    # Files that are not startup files are looked up in the lists, as without an index.
    assert dpkg_owners(["/usr/share/doc/aa-first"], info=info, index_dir=str(cache)) == {
        "/usr/share/doc/aa-first": "aa-first"}


def test_the_index_of_this_machine_agrees_with_its_lists(tmp_path):
    """On this machine's real database, read only: the index answers what reading every
    list answers, for Debian's startup files and for one nobody owns."""
    if not os.path.isfile("/var/lib/dpkg/status"):
        if running_under_ci():
            pytest.fail("CI runs on Debian: dpkg's database is part of the contract")
        pytest.skip("no dpkg database here")
    paths = ["/usr/lib/python3/dist-packages/distutils-precedence.pth",
             "/usr/lib/python3/dist-packages/surely-nobody-owns-this.pth",
             "/usr/lib/python3.11/sitecustomize.py", "/etc/python3.11/sitecustomize.py"]
    expected = dpkg_owners(paths)
    for _ in range(2):  # made, then read
        assert dpkg_owners(paths, index_dir=str(tmp_path)) == expected
    assert len(list(tmp_path.iterdir())) == 1


def test_a_packages_md5sums_and_a_virtualenvs_pyvenv_cfg(tmp_path):
    """A module is the startup file's package's when that package's ``md5sums`` lists it
    (``integrity.md5sums_lists``); virtualenv's template needs the ``virtualenv`` (or
    ``uv``) key of the environment's ``pyvenv.cfg`` (``python -m venv`` writes none)."""
    info = make_info(tmp_path, {"python3-x": ["/usr/lib/python3/dist-packages/x.pth"]})
    assert integrity.md5sums_lists("python3-x", "/usr/lib/python3/dist-packages/x.pth", info)
    assert not integrity.md5sums_lists("python3-x", "/usr/lib/python3/dist-packages/y.pth",
                                       info)
    assert not integrity.md5sums_lists("python3-none", "/usr/lib/x.pth", info)
    for name, cfg, author in (("ve", "home = /usr/bin\nvirtualenv = 20.21.1\n", "virtualenv"),
                              ("uv", "home = /usr/bin\nuv = 0.13.9\n", "uv"),
                              ("venv", "home = /usr/bin\nversion = 3.11.2\n", None)):
        site = tmp_path / name / "lib" / "python3.11" / "site-packages"
        site.mkdir(parents=True)
        (tmp_path / name / "pyvenv.cfg").write_text(cfg)
        assert provenance._venv_author(str(site)) == author, name
