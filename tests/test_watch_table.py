"""The finder's one table of watched names (``sitewarden.HOOKS``), on real interpreters.

Once started, the finder passes every import whose name is not a key of
``HOOKS`` through with one dict membership test (no thread ident, no
re-entrancy bookkeeping, no check list): the shadow index, the standard-library
shadow watch and the installer hooks must therefore all be keys of that one
dict, and nothing else may reach the watch.  Measured in benchmarks/ (imports).
The installers' modules are written in it (``"hook [starts] [entry ...]"``);
detection adds the functions it watches with (``sitewarden._watch_module``).
"""

from __future__ import annotations

import json
import textwrap

import pytest

from harness import make_dist
from harness.spread import spread

PROBE = textwrap.dedent("""
    import sys
    s = sys.modules["sitewarden"]  # loaded at startup: no import, the watch not started
    before = s.find_spec is s._find_spec
    calls = []
    real = s._watched
    def spy(fullname, path, target):
        calls.append(fullname)
        return real(fullname, path, target)
    s._watched = spy
    import wt_plain, wt_shadowed, email.mime
    s._watched = real
    import json
    hooks = s.HOOKS
    def named(hook):  # a function detection registered: its module and name
        return hook if isinstance(hook, str) else hook.__module__ + ":" + hook.__name__
    print(json.dumps({
        "before_start": before,
        "fast": s.find_spec is s._find_spec,
        "started": s._started,
        "watched": calls,
        "index_in_hooks": [n for n in ("wt_shadowed", "wt_distro", "wt_pkg") if n in hooks],
        "index_values": [hooks.get(n) for n in ("wt_shadowed", "wt_distro", "wt_pkg")],
        "plain_in_hooks": "wt_plain" in hooks,
        "installer_hooks": [hooks[n] for n in ("pip._internal.commands.install", "ensurepip")],
        "stdlib_hook": named(hooks.get("colorsys")),
        "busy": sorted(s._busy),
    }))
""")


@pytest.mark.parametrize("interp", spread(targets="hermetic"))
def test_watched_names_are_one_table(interp, guarded, tmp_path):
    g = guarded(interp)
    make_dist(g.distro_dir, "wt-shadowed", "1.0", {"wt_shadowed.py": "X = 1\n"})
    make_dist(g.distro_dir, "wt-distro", "1.0", {"wt_distro.py": "X = 1\n"})
    make_dist(g.distro_dir, "wt-pkg", "1.0", {"wt_pkg/__init__.py": ""})
    make_dist(g.local_dir, "wt-shadowed", "2.0", {"wt_shadowed.py": "X = 2\n"}, installer="pip")
    make_dist(g.local_dir, "wt-plain", "1.0", {"wt_plain.py": "X = 3\n"}, installer="pip")
    # A copy of a standard library module ahead of the standard library: watched.
    ahead = tmp_path / "ahead"
    ahead.mkdir()
    (ahead / "colorsys.py").write_text("X = 1\n")
    ahead.chmod(0o755)
    proc = g.python("-c", PROBE, env={"PYTHONPATH": str(ahead)})
    assert proc.returncode == 0, proc.stderr
    facts = json.loads(proc.stdout.strip().splitlines()[-1])
    # `import sitewarden` is no import after startup: the finder is still the starting one.
    assert facts["before_start"] is False
    assert facts["started"] is True and facts["fast"] is True
    # The first import after startup starts the watch; after it, only the watched name
    # reached the watch (not email, email.mime, nor the modules warnings imported).
    assert facts["watched"] == ["wt_plain", "wt_shadowed"]
    assert facts["index_in_hooks"] == ["wt_shadowed", "wt_distro", "wt_pkg"]
    assert facts["index_values"] == [None, None, None]
    assert facts["plain_in_hooks"] is False
    install, ensurepip = facts["installer_hooks"]
    assert install == "guard.pip_guard:on_install_module starts InstallCommand.run"
    assert ensurepip == "guard.ensurepip_guard:on_module starts bootstrap _bootstrap"
    assert facts["stdlib_hook"] == "sitewarden.detect.pathcheck:on_stdlib_loaded"
    assert facts["busy"] == []
    assert "'wt_shadowed'" in proc.stderr and "ShadowWarning" in proc.stderr
