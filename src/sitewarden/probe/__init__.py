"""Floor 4, the probe: the child the CLI and the install report run in a target.

Imports ``facts``, ``detect`` and ``audit``; ``guard`` and ``cli`` may import it.
"""
