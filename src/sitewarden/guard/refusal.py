"""PEP 668 refusals: when to refuse, the override, and pip's message.

Runtime module (imported only once an installer starts).  Semantics are pip
23's, for every installer: refused outside a virtual environment when the
marker exists, unless overridden by ``--break-system-packages``,
``PIP_BREAK_SYSTEM_PACKAGES`` (pip's true values) or ``break-system-packages
= true`` in the ``[global]``, ``[install]`` or ``[uninstall]`` section of a
pip configuration file pip itself reads.
"""

import os
import sys

from .. import _swallowed
from ..facts import marker
from ..settings import break_system_packages_env, is_true

FLAG = "--break-system-packages"
CONFIG_KEY = "break-system-packages"
#: Set by the guard, to its own process id, in a process whose install it
#: allowed through an override, so that the build subprocesses it starts
#: (pip's ``setup.py install``/``develop``) are allowed too, and nothing else.
INHERITED = "_SITEWARDEN_OVERRIDE"

PIP_ERROR_STATUS = 1

NOTE = (
    "note: If you believe this is a mistake, please contact your Python installation or OS "
    "distribution provider. You can override this, at the risk of breaking your Python "
    "installation or OS, by {how}."
)
#: How each installer takes the override (ensurepip, setup.py and installer reject
#: pip's option: they read the variable and pip's configuration files).
OVERRIDES = {
    "pip": "passing --break-system-packages or setting PIP_BREAK_SYSTEM_PACKAGES=1",
}
OTHER_OVERRIDE = ("setting PIP_BREAK_SYSTEM_PACKAGES=1 in its environment (or "
                  "break-system-packages = true in a pip configuration file)")
HINT = "hint: See PEP 668 for the detailed specification."


def pip_config_files(environ=None):
    """The configuration files pip reads, in pip's order (later wins)."""
    environ = os.environ if environ is None else environ
    explicit = environ.get("PIP_CONFIG_FILE")
    if explicit is not None and os.path.abspath(explicit) == os.devnull:
        return []
    if is_true(environ.get("PIP_ISOLATED", "")):
        files = []
    else:
        xdg_dirs = environ.get("XDG_CONFIG_DIRS", "") or "/etc/xdg"
        files = [os.path.join(d, "pip", "pip.conf") for d in xdg_dirs.split(os.pathsep) if d]
        files.append("/etc/pip.conf")
        home = os.path.expanduser("~")
        files.append(os.path.join(home, ".pip", "pip.conf"))
        config_home = environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
        files.append(os.path.join(config_home, "pip", "pip.conf"))
    files.append(os.path.join(sys.prefix, "pip.conf"))
    if explicit:
        files.append(explicit)
    return files


def config_override(command, environ=None):
    """``break-system-packages = true`` in a pip config file, for ``command``.

    pip applies ``[global]`` then the command's own section; a later file wins.
    """
    import configparser  # stdlib, read only when an override is looked for in pip's files

    value = None
    for path in pip_config_files(environ):
        if not os.path.isfile(path):
            continue
        parser = configparser.RawConfigParser()
        try:
            parser.read(path, encoding="utf-8")
        except (OSError, UnicodeError, configparser.Error):  # as pip: an unreadable file
            continue
        for section in ("global", command):
            if parser.has_option(section, CONFIG_KEY):
                value = parser.get(section, CONFIG_KEY)
    return value is not None and is_true(value)


def override_active(environ=None):
    """Is PEP 668 overridden for an install, for installers other than pip (pip
    reads its own flag, variable and configuration into its options)?"""
    environ = os.environ if environ is None else environ
    if break_system_packages_env(environ) or inherited_override(environ):
        return True
    try:
        return config_override("install", environ)
    except Exception:
        _swallowed("pip's configuration files (no override read from them)")
        return False


def applies():
    """Does the marker apply to this interpreter (outside a venv)?  Fails closed."""
    try:
        return marker.applies()
    except Exception:
        _swallowed("the marker (applies outside a virtual environment)")
        return sys.prefix == getattr(sys, "base_prefix", sys.prefix)


def _marker_lines():
    try:
        text = marker.read().message
    except Exception:
        _swallowed("the marker's message (the default message is shown)")
        text = marker.DEFAULT_MESSAGE.format(reason="it could not be read")
    lines = text.splitlines() or [""]
    body = "\u2570\u2500> " + lines[0] + "".join("\n    " + ln if ln else "\n" for ln in lines[1:])
    return ["\u00d7 This environment is externally managed", body]


def message(installer="pip"):
    """pip's ``externally-managed-environment`` error, with the marker's text and the
    override ``installer`` accepts."""
    how = OVERRIDES.get(installer, OTHER_OVERRIDE)
    return "\n".join(["error: externally-managed-environment", ""] + _marker_lines()
                     + ["", NOTE.format(how=how), HINT])


def protected_message(directory, local=None):
    """The refusal of an install whose files would land in ``directory``, which belongs
    to the distro (or is the standard library): no override lifts it (PEP 668, rule 2)."""
    lines = ["error: externally-managed-environment", ""]
    if applies():
        lines += _marker_lines() + [""]
    lines.append(
        "note: the files would land in %s, which belongs to the operating system's package "
        "manager (or is the standard library): installers modify only the directories of the "
        "scheme they install into, so this is refused with or without an override. Install "
        "into a virtual environment%s." % (directory, ", or into %s" % local if local else ""))
    lines.append(HINT)
    return "\n".join(lines)


def write(text):
    """Print a refusal on stderr as pip does (with its fallback in an ASCII locale)."""
    stream = sys.stderr
    try:
        stream.write(text + "\n")
    except UnicodeEncodeError:  # a C/ASCII locale: pip falls back the same way
        stream.write(text.replace("\u00d7", "x").replace("\u2570\u2500>", "+->") + "\n")
    stream.flush()


def inherited_override(environ=None):
    """The parent process is an installer the guard let through an override."""
    environ = os.environ if environ is None else environ
    try:
        return environ.get(INHERITED) == str(os.getppid())
    except (AttributeError, OSError):  # no getppid, or an environ of another kind
        return False


def allow_children():
    """Let direct subprocesses of an overridden install (builds, ``setup.py``) through,
    until :func:`restore_children` with the value returned here: an override covers
    one command and the subprocesses it starts, nothing after it."""
    previous = os.environ.get(INHERITED)
    os.environ[INHERITED] = str(os.getpid())
    return previous


def restore_children(previous):
    if previous is None:
        os.environ.pop(INHERITED, None)
    else:
        os.environ[INHERITED] = previous
