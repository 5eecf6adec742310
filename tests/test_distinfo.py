"""Reading installed-distribution metadata by hand: dist-info, egg-info, eggs,
Fedora RPM and Debian specifics, stale and garbage metadata.

The metadata is written to real directories the way pip, Debian and Fedora
leave it; the code under test is the pure-Python reader (it runs the same in
every interpreter; the end-to-end tests run it inside 3.8-3.13).
"""

from __future__ import annotations

import zipfile

import pytest

from harness import make_dist
from sitewarden.facts import distinfo, distribution, metadata


def test_canonicalize_and_name_variants():
    assert distribution.canonicalize("ruamel.yaml") == distribution.canonicalize("ruamel_yaml") == \
        "ruamel-yaml"
    assert distribution.canonicalize("PyYAML") == distribution.canonicalize("pyyaml") == "pyyaml"
    assert distribution.canonicalize("  Foo__Bar--baz ") == "foo-bar-baz"
    assert "yaml" in distribution.name_variants("PyYAML")
    assert "dateutil" in distribution.name_variants("python-dateutil")
    assert "openssl" in distribution.name_variants("pyOpenSSL")


def test_requires_txt_sections_become_markers():
    text = ("requests>=2\n\n[:python_version < \"3.8\"]\nimportlib-metadata\n\n"
            "[Socks_Proxy]\nPySocks>=1.5.6\n\n[ssh:sys_platform == \"linux\"]\nparamiko\n"
            "# comment\n")
    assert distribution.requires_txt_to_requirements(text) == [
        "requests>=2",
        'importlib-metadata ; (python_version < "3.8")',
        'PySocks>=1.5.6 ; extra == "socks-proxy"',
        'paramiko ; (sys_platform == "linux") and extra == "ssh"',
    ]
    assert distribution.requires_txt_to_requirements("") == []
    assert distribution.requires_txt_to_requirements(None) == []


@pytest.mark.parametrize("requirement, version, status", [
    ('pyparsing (!=3.0.0,!=3.0.1,!=3.0.2,!=3.0.3,<4,>=2.4.2) ; python_version > "3.0"', "3.0.1",
     "violated"),
    ('pyparsing (!=3.0.0,!=3.0.1,!=3.0.2,!=3.0.3,<4,>=2.4.2) ; python_version > "3.0"', "3.0.9",
     "ok"),
    ('pyparsing (<3,>=2.4.2) ; python_version < "3.0"', "3.0.9", "not applicable"),
    ('urllib3<1; python_version == "3.4"', "2.0", "not applicable"),
    ('sphinx; extra == "docs"', "1.0", "not applicable"),
    ('sphinx; extra == "Docs_Extra"', "1.0", "not applicable"),
    ("docker[ssh]>=5", "4.4.4", "violated"),
    ("docker[ssh]>=5", "5.0.3", "ok"),
    ("cryptography>=38", "39.0.0rc1", "ok"),  # prereleases count
    ("foo>=1.0", "0.23ubuntu1", "cannot compare"),
    ("foo>=1.0", None, "cannot compare"),
    ("foo (>=", "1.0", "unparsable"),
    ("foo; python_version >", "1.0", "unparsable"),
])
def test_check_requirement(requirement, version, status):
    assert metadata.check_requirement(requirement, version)[0] == status


def test_compare_versions():
    assert metadata.compare_versions("3.0.1", "3.0.9") == "older"
    assert metadata.compare_versions("6.0.2", "6.0") == "newer"
    assert metadata.compare_versions("6.0", "6.0.0") == "same"
    assert metadata.compare_versions("1.16.0-unknown", "1.17.0") == "cannot compare"
    assert metadata.compare_versions("1:2.0", "1:2.0") == "same"


def test_dist_info_metadata(tmp_path):
    make_dist(tmp_path, "PyYAML", "6.0", {"yaml/__init__.py": "", "_yaml/__init__.py": "",
                                          "yaml/_yaml.cpython-311-x86_64-linux-gnu.so": b""},
              requires=['pyparsing>=2 ; python_version > "3.0"'])
    (dist,) = distinfo.distributions(str(tmp_path))
    assert (dist.name, dist.version, dist.kind, dist.installer) == (
        "PyYAML", "6.0", "dist-info", "debian")
    assert dist.top_level() is None  # make_dist writes no top_level.txt for dist-info
    assert dist.top_level_from_files() == {"yaml", "_yaml"}
    assert dist.requires() == ['pyparsing>=2 ; python_version > "3.0"']
    assert distinfo.owner("yaml", str(tmp_path / "yaml/__init__.py"), str(tmp_path)) is dist


def test_metadata_headers_continuation_and_body(tmp_path):
    meta = tmp_path / "foo-1.0.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: foo\nVersion: 1.0\nSummary: a\n        continued\n"
        "Requires-Dist: bar>=1\n\nRequires-Dist: not-a-header-in-the-body\n")
    (dist,) = distinfo.distributions(str(tmp_path))
    assert dist.header("summary") == "a\ncontinued"
    assert dist.requires() == ["bar>=1"]


def test_egg_info_debian_style(tmp_path):
    make_dist(tmp_path, "pyOpenSSL", "23.0.0", {"OpenSSL/__init__.py": ""}, kind="egg-info",
              requires=["", "[docs]", "sphinx!=5.2.0"])
    make_dist(tmp_path, "six", "1.16.0", {"six.py": ""}, kind="egg-info")
    dists = {d.name: d for d in distinfo.distributions(str(tmp_path))}
    assert dists["pyOpenSSL"].requires() == ['sphinx!=5.2.0 ; extra == "docs"']
    assert dists["pyOpenSSL"].top_level() == {"OpenSSL"}
    assert distinfo.owner("six", str(tmp_path / "six.py"), str(tmp_path)).name == "six"
    assert distinfo.owner("OpenSSL", str(tmp_path / "OpenSSL/__init__.py"),
                          str(tmp_path)).name == "pyOpenSSL"


def test_debian_cryptography_has_dist_info_and_egg_info(tmp_path):
    make_dist(tmp_path, "cryptography", "38.0.4", {"cryptography/__init__.py": ""})
    egg = tmp_path / "cryptography.egg-info"  # Debian's, without a version in its name
    egg.mkdir()
    (egg / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: cryptography\nVersion: 38.0.4\n")
    (egg / "top_level.txt").write_text("cryptography\n")
    owner = distinfo.owner("cryptography", str(tmp_path / "cryptography/__init__.py"),
                           str(tmp_path))
    assert owner.kind == "dist-info" and owner.version == "38.0.4"
    make_dist(tmp_path, "consumer", "1", {"c.py": ""}, requires=["cryptography>=35"])
    found = distinfo.requirers({"cryptography"}, [str(tmp_path)])
    assert [(d.name, text) for d, text in found] == [("consumer", "cryptography>=35")]


def test_fedora_rpm_metadata_without_record_or_top_level(tmp_path):
    make_dist(tmp_path, "python-dateutil", "2.8.2", {"dateutil/__init__.py": ""},
              installer="rpm", record=False)
    make_dist(tmp_path, "PyYAML", "6.0.1", {"yaml/__init__.py": ""}, installer="rpm",
              record=False)
    d = distinfo.owner("dateutil", str(tmp_path / "dateutil/__init__.py"), str(tmp_path))
    assert (d.name, d.installer, d.files()) == ("python-dateutil", "rpm", None)
    assert distinfo.owner("yaml", str(tmp_path / "yaml/__init__.py"),
                          str(tmp_path)).name == "PyYAML"


def test_ownership_by_module_location_not_first_metadata(tmp_path):
    """A stale, empty foo-1.0.dist-info beside foo-1.5's real one: the RECORD
    that lists the file wins; alone, the stale one still names a version."""
    stale = tmp_path / "foo-1.0.dist-info"
    stale.mkdir()
    (stale / "METADATA").write_text("")
    alone = distinfo.owner("foo", str(tmp_path / "foo.py"), str(tmp_path))
    assert (alone.name, alone.version) == ("foo", "1.0")
    distinfo.clear_cache()
    make_dist(tmp_path, "foo", "1.5", {"foo.py": ""}, installer="pip")
    assert distinfo.owner("foo", str(tmp_path / "foo.py"), str(tmp_path)).version == "1.5"


def test_namespace_submodule_owner(tmp_path):
    make_dist(tmp_path, "lazr.uri", "1.0.6", {"lazr/uri/__init__.py": ""}, kind="egg-info")
    make_dist(tmp_path, "lazr.restfulclient", "0.14.5",
              {"lazr/restfulclient/__init__.py": ""}, kind="egg-info")
    for module in ("lazr.uri", "lazr.restfulclient"):
        origin = tmp_path / module.replace(".", "/") / "__init__.py"
        assert distinfo.owner(module, str(origin), str(tmp_path)).name == module


def test_eggs_directory_and_zip(tmp_path):
    egg = tmp_path / "pyparsing-3.0.4-py3.11.egg"
    (egg / "EGG-INFO").mkdir(parents=True)
    (egg / "EGG-INFO/PKG-INFO").write_text("Metadata-Version: 1.1\nName: pyparsing\n"
                                           "Version: 3.0.4\n")
    (egg / "EGG-INFO/requires.txt").write_text("[diagrams]\njinja2\n")
    (egg / "pyparsing.py").write_text("")
    d = distinfo.owner("pyparsing", str(egg / "pyparsing.py"), str(egg))
    assert (d.name, d.version, d.kind) == ("pyparsing", "3.0.4", "egg")
    assert d.requires() == ['jinja2 ; extra == "diagrams"']
    zegg = tmp_path / "six-1.17.0-py3.egg"
    with zipfile.ZipFile(zegg, "w") as zf:
        zf.writestr("six.py", "")
        zf.writestr("EGG-INFO/PKG-INFO", "Name: six\nVersion: 1.17.0\n")
    d = distinfo.owner("six", str(zegg / "six.py"), str(zegg))
    assert (d.name, d.version) == ("six", "1.17.0")
    bare = tmp_path / "bare-2.0-py3.egg"
    bare.mkdir()
    d = distinfo.owner("bare", str(bare / "bare.py"), str(bare))
    assert (d.name, d.version) == ("bare", "2.0")  # from the file name


def test_garbage_never_raises(tmp_path):
    junk = b"\xff\xfe\x00\x01garbage\n\n\x00"
    for name in ("a-1.dist-info", "b.dist-info", "c-2.egg-info"):
        d = tmp_path / name
        d.mkdir()
        for f in ("METADATA", "PKG-INFO", "RECORD", "top_level.txt", "requires.txt",
                  "installed-files.txt", "INSTALLER"):
            (d / f).write_bytes(junk)
    (tmp_path / "d-1.egg-info").write_bytes(junk)  # an egg-info file (distutils)
    (tmp_path / "e-1.dist-info").write_text("a file, not a directory")
    (tmp_path / "f.egg").write_bytes(b"not a zip")
    for dist in distinfo.distributions(str(tmp_path)) + distinfo.distributions(
            str(tmp_path / "f.egg")):
        dist.name, dist.version, dist.installer, dist.top_level(), dist.files()
        dist.top_level_from_files(), dist.requires(), dist.as_json(), dist.claims("a")
    assert distinfo.owner("a", str(tmp_path / "a.py"), str(tmp_path)) is not None
    assert distinfo.distributions(str(tmp_path / "missing")) == []
    assert distinfo.requirers({"x"}, [str(tmp_path), "/nonexistent"]) == []


def test_fifo_and_directory_metadata_neither_hang_nor_raise(tmp_path):
    """A FIFO planted as METADATA (no writer) would block a plain ``open()`` forever."""
    import os

    d = tmp_path / "fifo-1.0.dist-info"
    d.mkdir()
    os.mkfifo(d / "METADATA")
    os.mkfifo(d / "RECORD")
    e = tmp_path / "dir-1.0.egg-info"
    (e / "PKG-INFO").mkdir(parents=True)
    (e / "requires.txt").mkdir()
    dists = distinfo.distributions(str(tmp_path))
    assert [(x.name, x.version) for x in dists] == [("dir", "1.0"), ("fifo", "1.0")]
    for dist in dists:
        assert dist.requires() == [] and not dist.may_require([b"fifo", b"dir"])
        dist.files(), dist.top_level(), dist.as_json()
    assert distinfo.requirers({"fifo"}, [str(tmp_path)]) == []


def test_requirers_read_only_what_mentions_the_name(tmp_path):
    """The byte pre-filter folds case and separators as PEP 503 does, so every spelling
    of a requirement is found, and distributions that do not mention it are not parsed."""
    make_dist(tmp_path, "a", "1", requires=["Ruamel_Yaml>=0.17"])
    make_dist(tmp_path, "b", "1", requires=['ruamel..yaml ; extra == "x"'], kind="egg-info")
    make_dist(tmp_path, "c", "1", requires=["other"])
    found = distinfo.requirers({"ruamel-yaml"}, [str(tmp_path)])
    assert sorted((d.name, t) for d, t in found) == [
        ("a", "Ruamel_Yaml>=0.17"), ("b", 'ruamel..yaml ; (extra == "x")')]
    c = [d for d in distinfo.distributions(str(tmp_path)) if d.file_name == "c"][0]
    assert not c.may_require([b"ruamel-yaml"]) and "headers" not in c._cache


def test_requirement_prefilter_reads_only_the_header_block(tmp_path):
    """``may_require`` searches a METADATA's headers, up to the first empty line: a long
    description that names a project is not a requirement on it (and is not parsed);
    a header block with CRLF line ends (no ``\\n\\n``) is searched whole."""
    body = tmp_path / "body-1.dist-info"
    body.mkdir()
    (body / "METADATA").write_bytes(b"Metadata-Version: 2.1\nName: body\nVersion: 1\n\n"
                                    b"Works well with Ruamel.YAML and ruamel-yaml.\n")
    crlf = tmp_path / "crlf-1.dist-info"
    crlf.mkdir()
    (crlf / "METADATA").write_bytes(b"Metadata-Version: 2.1\r\nName: crlf\r\nVersion: 1\r\n"
                                    b"Requires-Dist: RUAMEL.yaml>=0.17\r\n\r\nBody\r\n")
    found = distinfo.requirers({"ruamel-yaml"}, [str(tmp_path)])
    assert [(d.name, t) for d, t in found] == [("crlf", "RUAMEL.yaml>=0.17")]
    b = [d for d in distinfo.distributions(str(tmp_path)) if d.file_name == "body"][0]
    assert not b.may_require([b"ruamel-yaml"]) and "headers" not in b._cache


def test_owner_named_after_the_module_among_many(tmp_path):
    """The distributions named after a module are found by their metadata file names in
    every spelling (case, ``.``/``-``/``_``, a ``python``/``py`` prefix), in prefix
    order, among a directory of others; when one's metadata claims the module, the
    others' metadata is not read."""
    for i in range(50):
        make_dist(tmp_path, "other-%d" % i, "1.0", {"other_%d.py" % i: ""})
    d = tmp_path / "Python.DateUtil-2.8.2.dist-info"
    d.mkdir()
    (d / "METADATA").write_text("Metadata-Version: 2.1\nName: python-dateutil\n"
                                "Version: 2.8.2\n")
    (d / "top_level.txt").write_text("dateutil\n")
    (tmp_path / "dateutil").mkdir()
    (tmp_path / "dateutil" / "__init__.py").write_text("")
    dist = distinfo.owner("dateutil", str(tmp_path / "dateutil" / "__init__.py"),
                          str(tmp_path))
    assert dist is not None and dist.name == "python-dateutil"
    dists = distinfo.distributions(str(tmp_path))
    assert [x.path.rpartition("/")[2] for x in distribution.named_after(dists, "dateutil")] \
        == ["Python.DateUtil-2.8.2.dist-info"]
    assert [x.file_name for x in distribution.named_after(dists, "other_7")] == ["other_7"]
    assert all("headers" not in x._cache for x in dists if x.file_name != "Python.DateUtil")


def test_pth_owner_parses_only_the_file_lists_that_name_it(tmp_path):
    """The owner of a ``.pth`` is the distribution whose RECORD (or egg-info
    ``installed-files.txt``) lists it; the file lists whose text lacks its name are not
    parsed (an unowned ``.pth`` beside 60 distributions costs 60 substring searches)."""
    for i in range(5):
        make_dist(tmp_path, "plain-%d" % i, "1", {"plain_%d.py" % i: ""})
    make_dist(tmp_path, "owner", "2.0", {"owner_init.pth": "import os\n", "owner.py": ""})
    egg = make_dist(tmp_path, "old", "1.0", {"old-nspkg.pth": "import sys\n"}, kind="egg-info")
    (egg / "installed-files.txt").write_text("../old-nspkg.pth\nPKG-INFO\n")  # setup.py's
    comma = make_dist(tmp_path, "comma", "1.0", {"a,b.pth": "import os\n"}, record=False)
    (comma / "RECORD").write_text('"a,b.pth",,\ncomma-1.0.dist-info/METADATA,,\n')  # csv's quoting
    (tmp_path / "nobody.pth").write_text("import os\n")
    owner = distinfo.pth_owner(str(tmp_path / "owner_init.pth"))
    assert owner is not None and (owner.name, owner.version) == ("owner", "2.0")
    assert distinfo.pth_owner(str(tmp_path / "old-nspkg.pth")).name == "old"
    assert distinfo.pth_owner(str(tmp_path / "a,b.pth")).name == "comma"
    assert distinfo.pth_owner(str(tmp_path / "nobody.pth")) is None
    # Only the lists that hold the name were parsed (each Dist is cached per directory).
    parsed = sorted(d.file_name for d in distinfo.distributions(str(tmp_path))
                    if "files" in d._cache)
    assert parsed == ["comma", "old", "owner"], parsed


def test_owner_by_record_parses_only_the_lists_that_hold_the_path(tmp_path):
    """A package's ``__init__.py`` is in nearly every RECORD: the owner is found by the
    whole relative path, so the other distributions' RECORDs are searched, not parsed."""
    for i in range(20):
        make_dist(tmp_path, "plain-%d" % i, "1", {"plain_%d/__init__.py" % i: ""})
    make_dist(tmp_path, "target", "3.1", {"target_pkg/__init__.py": ""})
    dist = distinfo.owner("target_pkg", str(tmp_path / "target_pkg" / "__init__.py"),
                          str(tmp_path))
    assert dist is not None and (dist.name, dist.version) == ("target", "3.1")
    parsed = sorted(d.file_name for d in distinfo.distributions(str(tmp_path))
                    if "files" in d._cache)
    assert parsed == ["target"], parsed


@pytest.mark.parametrize("text, name", [
    ("requests>=2", "requests"), ("  zope.interface ; python_version>'3'", "zope.interface"),
    ("foo_bar-baz[x]", "foo_bar-baz"), ("caf\u00e9-lib>1", "caf\u00e9-lib"),
    ("a\u00e9b.c==1", "a\u00e9b.c"), (">=1", ""), ("", ""), ("x\u00a0y", "x"),
])
def test_requirement_name(text, name):
    """The leading name characters, non-ASCII letters included (as ``str.isalnum``)."""
    assert metadata.requirement_name(text) == name


def test_headers_end_at_a_blank_line_of_any_kind():
    """A line of blanks ends the headers, whatever the blanks; a line starting with a
    space continues the previous header, and starts one when none came before."""
    assert distribution.parse_headers("Name: a\r\n\r\nVersion: 1") == [("name", "a")]
    assert distribution.parse_headers("Name: a\n\x0b\nVersion: 1") == [("name", "a")]
    assert distribution.parse_headers("Name: a\n \t\nVersion: 1") == [("name", "a")]
    assert distribution.parse_headers("Name: a\nDescription: x\n  y\nVersion: 1") == [
        ("name", "a"), ("description", "x\ny"), ("version", "1")]
    assert distribution.parse_headers(" Name: a\nVersion: 1") == [("name", "a"), ("version", "1")]


def test_listing_agrees_with_asking_each_distribution(tmp_path):
    """``distinfo.listing`` (one search of a directory's file lists, joined) keeps, in
    directory order, every distribution whose ``records`` says yes: RECORDs,
    ``installed-files.txt`` (by the last part), no list at all, csv quoting, a path in
    several lists or at a list's very end, a path in none, the empty path."""
    for i in range(4):
        make_dist(tmp_path, "plain-%d" % i, "1", {"shared/__init__.py": "", "p%d.py" % i: ""})
    egg = make_dist(tmp_path, "old", "1.0", {"old-nspkg.pth": "import sys\n"}, kind="egg-info")
    (egg / "installed-files.txt").write_text("../old-nspkg.pth\nPKG-INFO")
    make_dist(tmp_path, "norecord", "1.0", {"norecord.py": ""}, record=False)
    comma = make_dist(tmp_path, "comma", "1.0", {"a,b.pth": "import os\n"}, record=False)
    (comma / "RECORD").write_text('"a,b.pth",,\ncomma-1.0.dist-info/METADATA,,')
    dists = distinfo.distributions(str(tmp_path))
    for path in ("shared/__init__.py", "p2.py", "old-nspkg.pth", "PKG-INFO", "a,b.pth",
                 "comma-1.0.dist-info/METADATA", "norecord.py", "nowhere.py", '"a,b.pth"', ""):
        listed = distinfo.listing(dists, path)
        assert [d for d in listed if d.records(path)] == [d for d in dists if d.records(path)]
        assert listed == [d for d in dists if d in listed]  # directory order
    assert [d.file_name for d in distinfo.listing(dists, "shared/__init__.py")] == [
        "norecord", "plain_0", "plain_1", "plain_2", "plain_3"], "no list: always asked"
