"""Floor 5, the guard: what runs inside an installer, its blocks and its install report.

Imports ``facts`` and the products below it (the report runs the probe); only ``cli``
may import it.
"""
