"""Floor 2, detection: shadowing and ``sys.path`` order, in a guarded process or a probe.

Imports the ground floor (``facts``) only; ``audit``, ``probe``, ``guard`` and ``cli`` may
import it.
"""
