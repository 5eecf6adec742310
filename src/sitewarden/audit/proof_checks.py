"""What the proofs of one piece of startup code add up to: its calls into the modules it
imports held to definitions there, and the reasons left once trusted files are set aside.

:mod:`.prover` proves one text at a time; a call into another module it imports
(``mypkg.setup()``) is proved only once that module is read and ``setup`` is a ``def`` or
``class`` there (:func:`discharge`).  :func:`reasons` gathers what a startup file's code
could not be proved to be, less what is trusted as the standard library is: files a
verified Debian package or sitewarden's deployment installed, a known template's own files,
a known tool's pinned content.  Runs in ``check``'s probe; module level: ``os``, ``sys``.
"""

import os

from .. import pathfacts
from . import modules, prover

#: How many imports a call is followed through before it counts as unresolved.
MAX_HOPS = 8


def line_key(text):
    """The key of an import line's proof in :data:`.analysis.PROOFS` (a file's is its path)."""
    return "\0line\0" + text


def _resolve(module, attr, names, proofs, stdlib, hops, trusted=frozenset()):
    """None when calling ``module.attr`` runs a definition the proofs cover (or a harmless
    callable of the standard library, or a module file ``trusted`` as it is), else
    ``(severity, text)``.  ``names``: module name -> key of its proof in ``proofs``."""
    call = "%s.%s" % (module, attr) if attr else module
    if module.partition(".")[0] in stdlib:
        return prover.judge(call)
    if names.get(module) in trusted:
        return None
    if hops > MAX_HOPS:
        return "high", "calls %s through more than %d imports: not resolved" % (call, MAX_HOPS)
    key = names.get(module)
    proof = proofs.get(key) if key is not None else None
    first, _, rest = attr.partition(".")
    if proof is None:
        sub = "%s.%s" % (module, first)
        if first and sub in names:  # a namespace package's portion
            return _resolve(sub, rest, names, proofs, stdlib, hops + 1, trusted) if rest else None
        if modules.locate(module) is None:
            return None  # not importable: its import fails first, the call never runs
        return "high", "calls %s, but %s was not read: the audit cannot resolve what it " \
            "calls" % (call, module)
    bound = [(kind, origin) for name, kind, origin in proof.defines if name == first]
    if not bound:
        sub = "%s.%s" % (module, first)
        if sub in names:
            return _resolve(sub, rest, names, proofs, stdlib, hops + 1, trusted) if rest else None
        return "high", "calls %s, which %s does not define: the audit cannot resolve what " \
            "it calls" % (call, module)
    for kind, origin in bound:
        if kind in ("def", "class"):
            continue
        if kind != "import":
            return "high", "calls %s, a value the audit cannot resolve to a definition" % call
        target = origin + ("." + rest if rest else "")
        found = _split(target, names, stdlib)
        if found is None:
            return "high", "calls %s (%s), which the audit did not read: not resolved" % (
                call, target)
        why = _resolve(found[0], found[1], names, proofs, stdlib, hops + 1, trusted)
        if why is not None:
            return why
    return None


#: The directories whose startup files the inventory read (set by ``findings``, normcased).
LISTED_DIRS = set()


def _startup_files_in(directory):
    try:
        return any(n.endswith((".pth", ".start")) for n in os.listdir(directory))
    except (OSError, TypeError, ValueError):
        return False


def _path_reasons(proof, stdlib):
    """Medium reasons for the evaluated ``sys.path`` changes of ``proof`` that put a
    directory ahead of the standard library holding modules of its names: from then on
    they replace the standard library's (a debugger's hijack of ``pdb``, say)."""
    out = []
    for target, op, values, line in proof.path_changes:
        if op == "addsitedir" and values and isinstance(values[0], str) and \
                os.path.normcase(os.path.abspath(values[0])) not in LISTED_DIRS and \
                _startup_files_in(values[0]):
            out.append(("high", line, "site.addsitedir(%r) runs the startup files there, "
                        "which check did not list: where imports come from is not named"
                        % values[0]))
            continue
        if target != "sys.path" or op != "insert" or len(values) != 2 or values[0] > 0:
            continue
        directory = values[1]
        try:
            names = os.listdir(directory)
        except (OSError, TypeError, ValueError):
            continue
        replaced = sorted({n.partition(".")[0] for n in names if n.partition(".")[0] in stdlib
                           and (n.endswith(".py") or "." not in n)})
        if replaced:
            out.append(("medium", line, "puts %s ahead of the standard library on sys.path: "
                        "its %s replace%s the standard library's in every program" % (
                            directory, ", ".join(replaced[:5]),
                            "s" if len(replaced) == 1 else "")))
    return out


def _split(dotted, names, stdlib):
    """``(module, attribute)`` of ``dotted``: the longest prefix read (or the standard
    library's top name), or None."""
    if dotted.partition(".")[0] in stdlib:
        return dotted.partition(".")[0], dotted.partition(".")[2]
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        module = ".".join(parts[:i])
        if module in names:
            return module, ".".join(parts[i:])
    return None


def reasons(f, proofs, excused, own_template):
    """``[(severity, where, text)]``: what the code of the startup file ``f`` (its lines
    and the modules they run, or a ``sitecustomize`` whole) could not be proved to be,
    each call into another module held to a definition there; ``where`` is ``FILE:LINE``.
    Set aside: ``excused`` module files (a template's own, a pinned tool's), the lines
    themselves (and a ``sitecustomize`` itself) when ``own_template``, and module files
    that a verified Debian package or sitewarden's deployment installed (trusted as the
    standard library is)."""
    out, seen, stdlib, lines = [], set(), pathfacts.stdlib_names(), {}

    def trusted_file(path):
        owner = f.modules.get(path)
        return path in excused or (owner is not None and owner.kind in ("dpkg", "sitewarden")
                                   and owner.verified is True)

    def add(names, key, where, numbered, trusted):
        proof = proofs.get(key)
        if proof is None:
            return
        found = list(proof.reasons) + _path_reasons(proof, stdlib)
        for module, attr, line in proof.calls:
            why = _resolve(module, attr, names, proofs, stdlib, 0, trusted)
            if why is not None:
                found.append((why[0], line, why[1]))
        for severity, line, text in found:
            item = (severity, "%s:%d" % (where, line) if line and numbered else where, text)
            if item not in seen:
                seen.add(item)
                out.append(item)

    if f.kind in ("sitecustomize", "usercustomize"):
        places = [(f.module_names, {f.path, f.realpath} if own_template else set())]
    else:
        places = [(dict(x.module_names, **{line_key(x.text): line_key(x.text)}),
                   {line_key(x.text)} if own_template else set())
                  for x in f.executable() if not x.error]  # a failing line: said as such
        lines = {line_key(x.text): "%s line %d" % (f.path, x.number) for x in f.executable()}
    for names, own in places:
        trusted = own | {k for k in names.values() if trusted_file(k)}
        for key in names.values():
            if key in trusted:
                continue
            where = lines.get(key) if key.startswith("\0line\0") else key
            add(names, key, where, not key.startswith("\0line\0"), trusted)
    return out


def effects(f, proofs, excused):
    """What the code of ``f`` changes, said by its proofs (``Proof.effects``), once each."""
    out = []
    files = list(f.module_files)
    keys = [line_key(x.text) for x in f.executable()] + [
        m for x in f.executable() for m in x.module_files] + files
    for key in keys:
        proof = proofs.get(key)
        if key in excused or proof is None:
            continue
        out.extend(text for _line, text in proof.effects if text not in out)
    return out
