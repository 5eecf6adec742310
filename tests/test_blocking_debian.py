"""PEP 668 on Debian's real pythons: the host's /usr/bin/python3 (Debian 12) in a
private mount namespace, and Debian 13's python3, sid's python3 and python3.15 in
their debootstrapped roots.

For every pip that runs on them (the Debian-patched pip each release ships, and
the pips of the matrix run from their wheels): installs are refused with the
real marker's text; the flag, the variable and a config file override it; and
upgrading the distro's own six (a single module) and pyparsing (a package)
leaves every file of /usr/lib/python3/dist-packages byte-identical while the
new versions import from /usr/local.  On the host each pip is its own test; in
a root one test per interpreter runs them all (every pip blocked, each
overridden one of the three ways in turn, the shipped pip all three ways), so
each property is checked on each interpreter without a namespace per pip.
"""

from __future__ import annotations

import re

import pytest

from harness import debian_system_python, pip_dir, pip_versions_for

DEBIAN = debian_system_python()
VERSIONS = pip_versions_for(DEBIAN.version) if DEBIAN else ["24.0"]
MARKER_TEXT = "To install Python packages system-wide, try apt install"
HOWS = ("flag", "env", "config")


def distro_versions(digest) -> dict:
    """``{name: version}`` of the distributions in a digest of the distro directory."""
    out = {}
    for rel in digest:
        m = re.fullmatch(r"([A-Za-z0-9_.]+)-([0-9][^-/]*?)(?:\.dist-info|\.egg-info)", rel)
        if m:
            out[m.group(1).lower()] = m.group(2)
    return out


def local_pins(distro: dict) -> dict:
    """Versions from the wheelhouse that differ from the distro's (so pip installs them)."""
    return {"six": "1.16.0" if distro.get("six") == "1.17.0" else "1.17.0",
            "pyparsing": "3.1.4"}


def check_pip(ns, pip_env, wheelhouse, conf, hows, distro_before, refuse_distro=False):
    """Blocked with the marker's text, then overridden each way of ``hows``: the new
    versions import from the local directory, the distro directory stays byte-identical,
    the end-of-run warning names both versions.  (Byte-identical but for ``__pycache__``:
    Debian ships bytecode for its default python only, so sid's python3.15 writes its own
    there when it imports the shipped pip; that is the interpreter, not an installer.)"""
    offline = ["--no-index", "--find-links", str(wheelhouse), "--no-deps"]
    distro = distro_versions(distro_before)
    pins = local_pins(distro)

    def pip(*args, **env):
        return ns.run([ns.executable, "-m", "pip", *args], env={**pip_env, **env})

    proc = pip("install", *offline, "six==%s" % pins["six"])
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1 and MARKER_TEXT in out and "Traceback" not in out, out
    assert out.count("externally-managed-environment") == 1

    for how in hows:
        args = ["install", "--upgrade", *offline, "six==%s" % pins["six"],
                "pyparsing==%s" % pins["pyparsing"]]
        env = {}
        if how == "flag":
            args.insert(1, "--break-system-packages")
        elif how == "env":
            env = {"PIP_BREAK_SYSTEM_PACKAGES": "1"}
        else:
            env = {"PIP_CONFIG_FILE": str(conf)}
        proc = pip(*args, **env)
        assert proc.returncode == 0, (how, proc.stdout + proc.stderr)
        assert ns.tree_digest(str(ns.distro_dir), skip_pycache=True) == distro_before, how
        # PEP 668's recommended end-of-run warning, with both versions.
        assert "distro packages are now shadowed" in proc.stderr, proc.stderr
        assert "six %s" % pins["six"] in proc.stderr, proc.stderr
        assert "six %s" % distro["six"] in proc.stderr, proc.stderr
        probe = ns.run([ns.executable, "-c",
                        "import six, pyparsing; print(six.__file__, six.__version__, "
                        "pyparsing.__file__, pyparsing.__version__)"])
        files = probe.stdout.split()
        assert files[0] == str(ns.local_dir / "six.py") and files[1] == pins["six"], probe.stdout
        assert files[2].startswith(str(ns.local_dir)) and files[3] == pins["pyparsing"], (
            probe.stdout)
        proc = pip("uninstall", "-y", "--break-system-packages", "six", "pyparsing")
        assert proc.returncode == 0, proc.stdout + proc.stderr
    if refuse_distro:
        # The distro's pyparsing is not pip's to remove: refused, naming the directory and apt.
        proc = pip("uninstall", "-y", "--break-system-packages", "pyparsing")
        assert proc.returncode == 1
        assert "/usr/lib/python3/dist-packages" in proc.stderr and "apt remove" in proc.stderr
    assert ns.tree_digest(str(ns.distro_dir), skip_pycache=True) == distro_before


def _conf(tmp_path):
    conf = tmp_path / "pip.conf"
    conf.write_text("[install]\nbreak-system-packages = true\n")
    return conf


@pytest.mark.parametrize("version", VERSIONS)
def test_debian_pip_matrix(debian_ns, version, wheelhouse, tmp_path):
    ns = debian_ns
    proc = ns.run([*ns.cli_argv, "install", "--python", ns.executable])
    assert proc.returncode == 0, proc.stderr
    pip_env = {"PYTHONPATH": str(pip_dir(version)), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    check_pip(ns, pip_env, wheelhouse, _conf(tmp_path), HOWS,
              ns.tree_digest(str(ns.distro_dir), skip_pycache=True), refuse_distro=True)


#: The Debian-patched pip each release ships (python3-pip, in the distro directory).
SHIPPED_PIP = {(3, 13): "25.1.1", (3, 14): "26.2.2", (3, 15): "26.2.2"}


def test_root_pips(root_ns, wheelhouse, tmp_path):
    ns = root_ns
    shipped = ns.run([ns.executable, "-m", "pip", "--version"])
    assert shipped.returncode == 0, shipped.stderr
    assert shipped.stdout.split()[1] == SHIPPED_PIP[ns.interp.version[:2]], shipped.stdout
    assert "/usr/lib/python3/dist-packages/pip" in shipped.stdout
    # The matrix's pips that start here: as on the hermetic pythons (measured once for all
    # of them; the shipped setuptools' distutils shim does not make older ones start: the
    # newest one left out still fails here).
    starting = pip_versions_for(ns.interp.version)
    older = [v for v in pip_versions_for(ns.interp.version, start_rules=False)
             if v not in starting]
    if older:
        proc = ns.run([ns.executable, "-m", "pip", "--version"],
                      env={"PYTHONPATH": str(pip_dir(older[-1]))})
        assert proc.returncode != 0, "pip %s starts on %s" % (older[-1], ns.interp)

    proc = ns.run([*ns.cli_argv, "install", "--python", ns.executable])
    assert proc.returncode == 0, proc.stderr
    distro_before = ns.tree_digest(str(ns.distro_dir), skip_pycache=True)
    conf = _conf(tmp_path)
    env = {"PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    check_pip(ns, env, wheelhouse, conf, HOWS, distro_before, refuse_distro=True)
    for n, version in enumerate(starting):
        # Some pips only start here (see can_install): the guard refuses before their
        # install would crash; nothing to override.
        hows = [HOWS[n % len(HOWS)]] if can_install(version, ns.interp.version) else []
        check_pip(ns, {**env, "PYTHONPATH": str(pip_dir(version))}, wheelhouse, conf, hows,
                  distro_before)


def can_install(pip: str, python) -> bool:
    """Whether that pip can install anything there at all (measured in the roots): before
    23.2 not on 3.12+ (pkg_resources needs pkgutil.ImpImporter), 24.0 not on 3.15
    (importlib.metadata.Distribution.locate_file became abstract)."""
    pip_v, py = tuple(map(int, pip.split(".")[:2])), tuple(python[:2])
    return not ((py >= (3, 12) and pip_v < (23, 2)) or (py >= (3, 15) and pip_v < (25, 0)))
