"""Public names (warning categories, ``deactivate``), loaded on first use (PEP 562).

Beside the ground floor: imports nothing of the products.
"""
