"""Calibration of the startup audit on real tools: wheels from PyPI that ship startup
files, and what ``check`` should say of each.

Each :class:`Tool` is a release whose wheel (pure, small, cached by ``harness.wheels``)
installs a startup file, with the severities a right verdict lies between and a word the
verdict must give as its reason (in a finding about the file, its message, the file's
template, or its lines' capabilities and evidence).  The bounds are what an administrator
needs to hear of the tool (high: it runs what its text does not show, or something
dangerous; medium at most: benign code nothing proves benign), not what one reader of it
says today.  The oracle's payloads are made up;
these are what administrators really find in their site directories, so a prover that
flags them wrongly, or right for the wrong reason, is caught here
(``tests/test_startup_oracle.py::test_real_tools_get_right_reasons``).

What is not here, and why: ``coverage``'s own ``.pth`` is written by its users (its
``process_startup`` line is covered as a template by ``test_startup_capabilities``);
``virtualenv``'s ``_virtualenv.pth`` needs a virtual environment made by virtualenv and
its dependencies; ``ddtrace``'s and ``elastic-apm``'s ``sitecustomize`` bootstraps are
put on ``PYTHONPATH`` by their launchers, not installed as startup files, and their wheels
are large platform builds; ``debugpy`` ships no startup file; ``pip-system-certs``'
``.pth`` needs ``wrapt``, an extension module (read as ``unread-startup-code``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Tuple


@dataclass(frozen=True)
class Tool:
    """A release that ships startup files (``files``, as installed), the severities its
    worst finding about each must lie between, and the reason's word."""

    name: str
    version: str
    files: Tuple[str, ...]
    lowest: str
    highest: str
    reason: str
    why: str

    @property
    def spec(self) -> str:
        return "%s==%s" % (self.name, self.version)


TOOLS = (
    Tool("pytest-cov", "5.0.0", ("pytest-cov.pth",), "info", "medium", "pytest-cov",
         "exec of a literal that imports pytest_cov.embed and starts coverage only when "
         "COV_CORE_SOURCE is set: the distribution's own code, verified by its RECORD; no "
         "process, network or data run: not provable (methods of a coverage object) is "
         "medium at most"),
    Tool("pytest-cov", "4.1.0", ("pytest-cov.pth",), "info", "medium", "pytest-cov",
         "the same line as 5.0.0, another release of the modules it imports"),
    Tool("coverage-enable-subprocess", "1.0", ("coverage_enable_subprocess.pth",), "info",
         "info", "coverage-enable-subprocess",
         "exec of a literal: coverage.process_startup() when coverage imports (here it is "
         "not installed: the ImportError is caught)"),
    Tool("future-fstrings", "1.2.0", ("aaaaa_future_fstrings.pth",), "info", "medium",
         "future-fstrings",
         "registers a codec (codecs.register) that rewrites f-strings in sources declaring "
         "it: the prover cannot show its module harmless (methods of values of unknown "
         "type: high), so only its template, the .pth and module byte for byte a pinned "
         "release's (template_digests.FUTURE_FSTRINGS), names it benign"),
    Tool("manhole", "1.8.1", ("manhole.pth",), "high", "high", "eval",
         "eval() of code built from the PYTHONMANHOLE environment variable: whoever sets "
         "the variable runs code at every start"),
    Tool("setuptools", "69.5.1", ("distutils-precedence.pth",), "info", "info",
         "setuptools distutils-precedence",
         "the known template, shipped by setuptools and verified by its RECORD"),
)

#: The tools the test installs (small pure wheels; one pytest-cov release).
QUICK = tuple(t for t in TOOLS if t.spec != "pytest-cov==4.1.0")

__all__ = ["QUICK", "TOOLS", "Tool"]
