"""Classifying ``sys.path`` entries: fake distro trees, and real interpreters.

The distro layouts this machine does not have (Fedora, Homebrew, Ubuntu) are
built as real directory trees (with their symlinks) and classified from the
facts their interpreter would report; every real interpreter found (pyenv's
CPythons, Debian's ``/usr/bin/python3`` read-only, hermetic Debian-shaped
copies, venvs with and without system site packages) classifies its own
``sys.path``.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from harness import debian_system_python, pyenv_interpreters
from sitewarden import pathfacts
from sitewarden.detect import layout

SRC = Path(__file__).resolve().parent.parent / "src"

#: Run inside a target: classify its own sys.path (sitewarden imported from the
#: checkout, then removed from sys.path so that it is not classified).
CLASSIFY = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from sitewarden import pathfacts
from sitewarden.detect import layout
sys.path.pop(0)
f, entries = layout.current(read_pth=True)
print(json.dumps({"facts": f.as_json(), "entries": [e.as_json() for e in entries],
                  "candidates": pathfacts.distro_candidates()}))
"""


def classify_in(python, env=None, cwd="/", flags=()):
    full = {k: v for k, v in os.environ.items()
            if not k.startswith(("PYTHON", "SITEWARDEN_", "VIRTUAL_ENV"))}
    full.update(env or {})
    full["PYTHONDONTWRITEBYTECODE"] = "1"  # keep the checkout free of other versions' .pyc
    proc = subprocess.run([str(python), *flags, "-c", CLASSIFY, str(SRC)], capture_output=True,
                          text=True, env=full, cwd=cwd, stdin=subprocess.DEVNULL, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def classes(result):
    return [(e["path"], e["class"]) for e in result["entries"]]


def mkdirs(*paths):
    for p in paths:
        Path(p).mkdir(parents=True, exist_ok=True)


def base_facts(sys_path, **kw):
    f = {
        "version": [3, 12], "abiflags": "", "sys_path": [str(p) for p in sys_path],
        "cwd": "/", "venv": False, "prefix": "/usr", "base_prefix": "/usr",
        "scheme": "posix_prefix", "stdlib": [], "local": [], "user": None,
        "user_enabled": True, "system": [], "site_dirs": [], "pythonpath": [],
        "script": True, "safe_path": False, "pth": {}, "pth_importers": [],
    }
    for key, value in kw.items():
        if key in ("stdlib", "local", "system", "site_dirs", "pythonpath"):
            value = [str(x) for x in value]
        elif key == "user":
            value = str(value)
        f[key] = value
    return layout.LayoutFacts.from_json(f)


# ---------------------------------------------------------------- fake distro trees


def test_fedora_layout_with_lib64_symlink(tmp_path):
    """Fedora: pip writes to /usr/local/lib{,64}/python3.X/site-packages, RPMs
    to /usr/lib{,64}/...; a lib64 -> lib symlink makes two entries one directory."""
    usr = tmp_path / "usr"
    stdlib = usr / "lib64" / "python3.12"
    dynload = stdlib / "lib-dynload"
    dist64, dist = usr / "lib64/python3.12/site-packages", usr / "lib/python3.12/site-packages"
    local = usr / "local" / "lib" / "python3.12" / "site-packages"
    mkdirs(dynload, dist64, dist, local)
    (usr / "local" / "lib64").symlink_to("lib")
    local64 = usr / "local" / "lib64" / "python3.12" / "site-packages"
    f = base_facts(
        ["", usr / "lib64/python312.zip", stdlib, dynload, local64, local, dist64, dist],
        stdlib=[stdlib, dynload], local=[local, local64],
        site_dirs=[local64, local, dist64, dist], base_prefix=str(usr), prefix=str(usr))
    entries = layout.classify(f)
    assert [e.cls for e in entries] == [
        "script", "stdlib", "stdlib", "stdlib", "local", "local", "distro", "distro"]
    assert entries[5].same_as == 4  # lib64 -> lib: the same directory twice
    assert not entries[1].exists


def test_debian_ubuntu_layout(tmp_path):
    usr = tmp_path / "usr"
    stdlib = usr / "lib/python3.11"
    local = usr / "local/lib/python3.11/dist-packages"
    distro = usr / "lib/python3/dist-packages"
    user = tmp_path / "home/.local/lib/python3.11/site-packages"
    mkdirs(stdlib / "lib-dynload", local, distro, user)
    f = base_facts(["", usr / "lib/python311.zip", stdlib, stdlib / "lib-dynload", user, local,
                    distro], version=[3, 11], stdlib=[stdlib, stdlib / "lib-dynload"],
                   local=[local], user=user,
                   site_dirs=[local, distro, usr / "lib/python3.11/dist-packages"])
    assert [e.cls for e in layout.classify(f)] == [
        "script", "stdlib", "stdlib", "stdlib", "user", "local", "distro"]


def test_homebrew_layout_cellar_symlink_is_local(tmp_path):
    """Homebrew: the Cellar's site-packages is a symlink to HOMEBREW_PREFIX's,
    which its sitecustomize puts on sys.path instead: still the scheme's directory."""
    prefix = tmp_path / "homebrew"
    cellar = prefix / "Cellar/python@3.12/3.12.1/lib/python3.12"
    shared = prefix / "lib/python3.12/site-packages"
    mkdirs(cellar / "lib-dynload", shared)
    (cellar / "site-packages").symlink_to(shared)
    f = base_facts(["", cellar.parent / "python312.zip", cellar, cellar / "lib-dynload", shared],
                   stdlib=[cellar, cellar / "lib-dynload"], local=[cellar / "site-packages"],
                   site_dirs=[cellar / "site-packages"], prefix=str(cellar.parent.parent),
                   base_prefix=str(cellar.parent.parent))
    assert [e.cls for e in layout.classify(f)] == [
        "script", "stdlib", "stdlib", "stdlib", "local"]


def test_pythonpath_pth_foreign_and_duplicates(tmp_path):
    stdlib = tmp_path / "lib/python3.12"
    local = stdlib / "site-packages"
    pp = tmp_path / "pp"
    py27 = tmp_path / "old/lib/python2.7/dist-packages"
    egg = local / "thing-1.0-py2.7.egg"
    added = tmp_path / "added"
    mkdirs(local, pp, py27, egg, added)
    pth = {layout.path_key(str(added)): str(local / "added.pth")}
    f = base_facts(["", pp, py27, stdlib, local, added, egg, pp, tmp_path / "gone"],
                   stdlib=[stdlib], local=[local], site_dirs=[local], pythonpath=[pp, py27],
                   pth=pth, pth_importers=[])
    entries = layout.classify(f)
    assert [e.cls for e in entries] == [
        "script", "pythonpath", "foreign", "stdlib", "local", "pth", "foreign", "pythonpath",
        "other"]
    assert entries[2].foreign == "2.7" and entries[2].source == "PYTHONPATH"
    assert entries[5].source == str(local / "added.pth")
    assert entries[7].duplicate_of == 1
    assert not entries[8].exists
    f.script = False  # -P / -I: sys.path[0] is not the script directory
    f.sys_path = [str(pp), str(stdlib)]
    assert [e.cls for e in layout.classify(f)] == ["pythonpath", "stdlib"]


@pytest.mark.parametrize("path, version, expected", [
    ("/usr/lib/python2.7/dist-packages", (3, 11), "2.7"),
    ("/usr/lib/python3/dist-packages", (3, 11), None),
    ("/usr/lib/python2/dist-packages", (3, 11), "2"),
    ("/usr/local/lib/python3.9/site-packages", (3, 11), "3.9"),
    ("/usr/local/lib/python3.11/site-packages", (3, 11), None),
    ("/opt/py/lib/python310.zip", (3, 11), "3.10"),
    ("/opt/py/lib/python311.zip", (3, 11), None),
    ("/x/foo-1.0-py2.7.egg", (3, 11), "2.7"),
    ("/x/foo-1.0-py3.11-linux-x86_64.egg", (3, 11), None),
    ("/home/me/python3.9-tools/lib", (3, 11), None),
    ("/root/.pyenv/versions/3.9.18/lib/python3.9", (3, 11), "3.9"),
    ("/usr/lib/python3.13t/site-packages", (3, 13), "3.13t"),
    ("", (3, 11), None),
])
def test_foreign_version(path, version, expected):
    assert pathfacts.foreign_version(path, version, "") == expected


# ---------------------------------------------------------------- real interpreters


@pytest.mark.parametrize("interp", [pytest.param(i, id=i.id) for i in pyenv_interpreters()])
def test_real_interpreter_classifies_its_path(interp, tmp_path):
    """pyenv/python.org layout: stdlib, the scheme's site-packages (local), no
    distro; PYTHONPATH, a user-site .pth path line and a foreign entry."""
    user_base = tmp_path / "userbase"
    user = user_base / "lib" / ("python%s" % interp.short_version) / "site-packages"
    pp, added = tmp_path / "pp", tmp_path / "added"
    old = tmp_path / "lib" / "python2.7" / "site-packages"
    mkdirs(user, pp, added, old)
    (user / "extra.pth").write_text("%s\n%s\n" % (added, old))
    result = classify_in(interp.executable, {"PYTHONUSERBASE": str(user_base),
                                             "PYTHONPATH": str(pp)}, cwd=str(tmp_path))
    got = classes(result)
    v = "%d%d" % interp.version[:2]
    assert [c for _, c in got] == ["script", "pythonpath", "stdlib", "stdlib", "stdlib", "user",
                                   "pth", "foreign", "local"], got
    assert got[0][0] == "" and result["entries"][0]["realpath"] == str(tmp_path)
    assert got[2][0].endswith("python%s.zip" % v)
    assert result["entries"][6]["source"] == str(user / "extra.pth")
    assert result["candidates"] == []  # nothing can be distro-owned here
    # -I: no script entry, no PYTHONPATH, no user site.
    result = classify_in(interp.executable, {"PYTHONPATH": str(pp)}, flags=["-I"])
    assert [c for _, c in classes(result)] == ["stdlib", "stdlib", "stdlib", "local"]


@pytest.mark.parametrize("interp", [pytest.param(i, id=i.id) for i in
                                    (pyenv_interpreters()[0], pyenv_interpreters()[-1])])
def test_venvs_with_and_without_system_site_packages(interp, make_hermetic, tmp_path):
    h = make_hermetic(interp)
    plain, system = tmp_path / "plain", tmp_path / "system"
    for venv, flags in ((plain, []), (system, ["--system-site-packages"])):
        subprocess.run([str(h.executable), "-m", "venv", "--without-pip", *flags, str(venv)],
                       check=True, capture_output=True, env=h.env())
    env = {"PYTHONUSERBASE": str(tmp_path / "nouser")}
    result = classify_in(plain / "bin" / "python", env)
    assert [c for _, c in classes(result)] == ["script", "stdlib", "stdlib", "stdlib", "local"]
    assert result["facts"]["venv"] and result["candidates"] == []
    result = classify_in(system / "bin" / "python", env)
    got = classes(result)
    assert [c for _, c in got] == ["script", "stdlib", "stdlib", "stdlib", "local", "system",
                                   "distro"], got
    assert got[5][0] == str(h.local_dir) and got[6][0] == str(h.distro_dir)
    assert result["candidates"] == [str(h.distro_dir)]


def test_hermetic_debian_shaped_interpreter(make_hermetic):
    h = make_hermetic(pyenv_interpreters()[-1])
    result = classify_in(h.executable, {"PYTHONUSERBASE": str(h.user_base)})
    assert classes(result)[-2:] == [(str(h.local_dir), "local"), (str(h.distro_dir), "distro")]
    assert result["candidates"] == [str(h.distro_dir)]


def test_real_debian_system_python_read_only():
    """Debian's /usr/bin/python3 as it is (only read): /usr/local is local, the
    version-less dist-packages is the distro's."""
    debian = debian_system_python()
    if debian is None:
        pytest.skip("no Debian system python here")
    result = classify_in(debian.executable, {"PYTHONNOUSERSITE": "1"})
    got = dict(classes(result))
    assert got["/usr/lib/python3/dist-packages"] == "distro"
    assert got["/usr/local/lib/python%s/dist-packages" % debian.short_version] == "local"
    assert got["/usr/lib/python%s" % debian.short_version] == "stdlib"
    assert "/usr/lib/python3/dist-packages" in result["candidates"]
    assert not any(c.startswith("/usr/local/") for c in result["candidates"])
    assert result["facts"]["scheme"] == "posix_local"
