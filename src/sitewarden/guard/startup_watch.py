"""What an install could change of the code every start runs, watched by ``stat`` alone.

A start runs more than its startup files: the modules their import lines import, those
modules' bytecode, and whatever lies in the directories their path lines add.  An install
that adds the module an existing ``.pth`` imports, or writes into such a directory, or
ships its own ``_distutils_hack`` ahead of the one Debian's ``distutils-precedence.pth``
imports, changes what every start runs without adding a startup file.  :func:`snapshot`
names every place where such a change would show, each with the startup files it affects:

- the startup files of the site directories (``.pth``, ``.start``), as before;
- for each top-level module name a startup file's code names (its import lines' modules,
  a ``.start`` entry point's), and for ``sitecustomize`` and ``usercustomize``, every place
  on ``sys.path`` where the import system would find it: the module file, the package
  directory (its listing's ``mtime``, each module file in it, its ``__pycache__``), the
  extension modules, the sourceless and cached bytecode;
- each directory a path line adds (its listing's ``mtime``).

A place that does not exist is watched too (``None``): one appearing is a change.  The
cost is one read of each ``.pth`` file (a few hundred bytes, by the startup files' one
reader, :mod:`..facts.reader`), one listing of each ``sys.path`` directory and a ``stat``
per place found, no hashing, no child process; what the change does is for ``check``'s
probe to say, in the child the report starts only when something changed.
Standard-library names are not watched: the standard library comes first on
``sys.path``.  Runtime module (imported with
``startup_report``).
"""

import os
import sys

from ..facts import reader
from ..pathfacts import stdlib_names

#: The names a start reads in a site directory (``.pth``, ``.start``) or imports from one.
SUFFIXES = (".pth", ".start")
CUSTOMIZE = ("sitecustomize", "usercustomize")


def startup_dirs():
    """The directories a start of this interpreter reads startup files from: its site
    directories and, when enabled, the user site: the existing ones, as the startup
    files' reader lists them (``site``'s answers)."""
    return reader.site_dirs(sys.modules.get("site"))[1]


def _stat(path):
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino)


#: At most this many module files are read for the names they import (what a start runs
#: beyond them is still ``check``'s to read; the report is about what an install changed).
MAX_READ = 64


def snapshot():
    """``{place: (state, startup files it affects)}``: every startup file, and every place
    where a change would change what a start of this interpreter runs (module docstring).
    ``state``: ``(size, mtime_ns, inode)``, or None where nothing is."""
    places = {}
    names, directories = {}, {}
    for d in startup_dirs():
        try:
            entries = sorted(n for n in os.listdir(d) if n.endswith(SUFFIXES))
        except (OSError, ValueError):
            continue
        for name in entries:
            path = os.path.join(d, name)
            places[path] = (_stat(path), (path,))
            _code_of(path, d, names, directories)
    for name in CUSTOMIZE:
        names.setdefault(name, set()).add(name)
    search = [d for d in sys.path if isinstance(d, str) and d and os.path.isabs(d)]
    search += [d for d in directories if d not in search]
    _follow(places, names, search)
    for d, files in directories.items():
        _watch(places, d, files)
    for place, (state, _files) in places.items():
        if os.path.basename(place) in ("sitecustomize.py", "usercustomize.py"):
            places[place] = (state, (place,))  # a startup file of its own
    return places


def _follow(places, names, search):
    """Watch where each module ``names`` names would be found on ``search`` (a package:
    its files too), and where the modules their source imports at top level would be
    found in turn (their module files only; :data:`MAX_READ` files read at most)."""
    stdlib = set(stdlib_names()) - set(CUSTOMIZE)  # found in the standard library first
    listings, done, read = {}, set(), 0
    todo = [(name, True) for name in names]
    while todo:
        name, direct = todo.pop(0)
        if name in done or name in stdlib:
            continue
        done.add(name)
        files = names[name]
        for d in search:
            for place, present in _module_places(d, name, listings, direct):
                _watch(places, place, files, present)
                if present and place.endswith(".py") and read < MAX_READ:
                    read += 1
                    for found in _imported(place):
                        names.setdefault(found, set()).update(files)
                        todo.append((found, False))


def _imported(path):
    """The top-level names the module source at ``path`` imports at its top level (what
    importing it runs, not what its functions may), read as text."""
    data, _why = reader.read_bytes(path)
    out = []
    for line in (data or b"").decode("utf-8", "replace").splitlines():
        if line[:1] not in (" ", "\t", "#") and "import" in line:
            out.extend(n.partition(".")[0] for n in module_names(line.strip()))
    return [n for n in out if n.isidentifier()]


def _watch(places, place, files, present=True):
    if place in places:
        state, known = places[place]
        if not set(files) <= set(known):
            places[place] = (state, tuple(sorted(set(known) | set(files))))
    else:
        places[place] = (_stat(place) if present else None, tuple(sorted(files)))


def _code_of(path, sitedir, names, directories):
    """Note the top-level module names ``path``'s code imports (``names``: name -> the
    startup files naming it) and the directories its path lines add."""
    start = path.endswith(".start")
    read = reader.read_file(path, start=start)  # the startup files' one reader
    for line in (read[0] or ()) if read else ():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if start:
            found = [line.partition(":")[0]]
        elif line.startswith(("import ", "import\t")):
            found = module_names(line)
        else:
            directories.setdefault(os.path.normpath(os.path.join(sitedir, line)),
                                   set()).add(path)
            continue
        for name in found:
            top = name.partition(".")[0]
            if top.isidentifier():
                names.setdefault(top, set()).add(path)


def module_names(code):
    """The modules a line of code names for import, read as text (no syntax tree: the
    report must stay cheap): ``import a.b as c, d``, ``from a import b``, and
    ``__import__``/``import_module`` of a string literal.  Over-reading costs a ``stat``
    or two; a name missed is one ``check`` still reads."""
    out = []
    for stmt in code.replace("\t", " ").split(";"):
        words = stmt.split()
        for i, word in enumerate(words):
            if word == "import" and i + 1 < len(words) and (i == 0 or words[i - 1] not in (
                    "from",)):
                if i >= 2 and words[i - 2] == "from":
                    out.append(words[i - 1])
                    continue
                rest = " ".join(words[i + 1:]).split(",")
                out.extend(part.split()[0] for part in rest if part.split())
    for call in ("__import__(", "import_module("):
        at = code.find(call)
        while at >= 0:
            tail = code[at + len(call):].lstrip()
            if tail[:1] in ("'", '"'):
                out.append(tail[1:].partition(tail[0])[0])
            at = code.find(call, at + 1)
    return [n for n in out if n and not n.startswith(".")]


def _module_places(directory, name, listings, package=True):
    """Where the import system would look for the top-level module ``name`` in
    ``directory``: the package (``package``: its files too, else its ``__init__``), the
    source, the bytecode, the extension modules; each
    place that is not in the directory's listing (one ``listdir`` per directory, kept in
    ``listings``) is watched as missing, without a ``stat``."""
    base = os.path.join(directory, name)
    tag = getattr(sys.implementation, "cache_tag", None) or "cpython"
    external = sys.modules.get("_frozen_importlib_external")
    suffixes = list(getattr(external, "EXTENSION_SUFFIXES", None) or [".so"])
    listed = _listing(directory, listings)
    out = [(base + s, (base + s)[len(directory) + 1:] in listed)
           for s in ["", ".py", ".pyc"] + suffixes]
    if name + ".py" in listed:
        cached = _listing(os.path.join(directory, "__pycache__"), listings)
        pyc = "%s.%s.pyc" % (name, tag)
        out.append((os.path.join(directory, "__pycache__", pyc), pyc in cached))
    if name in listed and os.path.isdir(base):
        init = os.path.join(base, "__init__.py")
        out += [(p, True) for p in _package_places(base)] if package else [
            (init, os.path.isfile(init))]
    return out


def _listing(directory, listings):
    if directory not in listings:
        try:
            listings[directory] = frozenset(os.listdir(directory))
        except (OSError, ValueError):  # missing, or a NUL in a path line's text
            listings[directory] = frozenset()
    return listings[directory]


def _package_places(package):
    """A package's listing, each of its module files and its cached bytecode's listing;
    a subpackage by its listing alone (what a start runs of it is ``check``'s to read)."""
    out = []
    for name in _names(package):
        path = os.path.join(package, name)
        if name.endswith((".py", ".pyc", ".so", ".pth")) or name == "__pycache__" or (
                "." not in name and os.path.isdir(path)):
            out.append(path)
    return out


def _names(directory):
    try:
        return sorted(os.listdir(directory))
    except (OSError, ValueError):
        return []


def changes(before, after):
    """``(added, changed, removed, affected)``: the startup files added, changed and
    removed, and ``{startup file: [(place, "added" | "changed" | "removed")]}`` for the
    other places that changed (a module a line imports, its bytecode, a path line's
    directory); a ``sitecustomize`` or ``usercustomize`` file is a startup file."""
    added, changed, removed, affected = [], [], [], {}
    for place in sorted(set(before) | set(after)):
        old, files = before.get(place, (None, ()))
        new, files_after = after.get(place, (None, ()))
        if old == new:
            continue
        how = "added" if old is None else "removed" if new is None else "changed"
        if (place,) in (files, files_after):
            {"added": added, "changed": changed, "removed": removed}[how].append(place)
            continue
        for f in sorted(set(files) | set(files_after)):
            affected.setdefault(f, []).append((place, how))
    for f in added + changed + removed:
        affected.pop(f, None)
    return added, changed, removed, affected
