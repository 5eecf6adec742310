"""PEP 668 on Debian's real /usr/bin/python3, in a private mount namespace.

For every pip that runs on it: installs are refused with the real marker's
text; the flag, the variable and a config file override it; and upgrading
the distro's own six (a single module) and pyparsing (a package) leaves every
file of /usr/lib/python3/dist-packages byte-identical while the new versions
import from /usr/local.
"""

from __future__ import annotations

import sys

import pytest

from harness import debian_system_python, pip_dir, pip_versions_for

CLI = [sys.executable, "-m", "sitewarden"]
DEBIAN = debian_system_python()
VERSIONS = pip_versions_for(DEBIAN.version) if DEBIAN else ["24.0"]


@pytest.mark.parametrize("version", VERSIONS)
def test_debian_pip_matrix(debian_ns, version, wheelhouse, tmp_path):
    ns = debian_ns
    proc = ns.run([*CLI, "install", "--python", ns.executable])
    assert proc.returncode == 0, proc.stderr
    marker_text = "To install Python packages system-wide, try apt install"
    distro_before = ns.tree_digest(str(ns.distro_dir))
    offline = ["--no-index", "--find-links", str(wheelhouse), "--no-deps"]
    base_env = {"PYTHONPATH": str(pip_dir(version)), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}

    def pip(*args, **env):
        return ns.run([ns.executable, "-m", "pip", *args], env={**base_env, **env})

    proc = pip("install", *offline, "six==1.17.0")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1 and marker_text in out and "Traceback" not in out, out
    assert out.count("externally-managed-environment") == 1

    conf = tmp_path / "pip.conf"
    conf.write_text("[install]\nbreak-system-packages = true\n")
    for how in ("flag", "env", "config"):
        args, env = ["install", "--upgrade", *offline, "six==1.17.0", "pyparsing==3.1.4"], {}
        if how == "flag":
            args.insert(1, "--break-system-packages")
        elif how == "env":
            env = {"PIP_BREAK_SYSTEM_PACKAGES": "1"}
        else:
            env = {"PIP_CONFIG_FILE": str(conf)}
        proc = pip(*args, **env)
        assert proc.returncode == 0, (how, proc.stdout + proc.stderr)
        assert ns.tree_digest(str(ns.distro_dir)) == distro_before, how
        # PEP 668's recommended end-of-run warning, with both versions.
        assert "distro packages are now shadowed" in proc.stderr, proc.stderr
        assert "six 1.17.0" in proc.stderr and "six 1.16.0" in proc.stderr, proc.stderr
        probe = ns.run([ns.executable, "-c",
                        "import six, pyparsing; print(six.__file__, six.__version__, "
                        "pyparsing.__file__, pyparsing.__version__)"])
        files = probe.stdout.split()
        assert files[0] == str(ns.local_dir / "six.py") and files[1] == "1.17.0", probe.stdout
        assert files[2].startswith(str(ns.local_dir)) and files[3] == "3.1.4", probe.stdout
        proc = pip("uninstall", "-y", "--break-system-packages", "six", "pyparsing")
        assert proc.returncode == 0, proc.stdout + proc.stderr
    # The distro's pyparsing is not pip's to remove: refused, naming the directory and apt.
    proc = pip("uninstall", "-y", "--break-system-packages", "pyparsing")
    assert proc.returncode == 1
    assert "/usr/lib/python3/dist-packages" in proc.stderr and "apt remove" in proc.stderr
    assert ns.tree_digest(str(ns.distro_dir)) == distro_before
