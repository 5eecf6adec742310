"""The records ``detect`` passes between its modules and prints: findings.

Imports nothing of sitewarden, so every collector and ``check`` can import it
at module level without a cycle.
"""


def finding(kind, severity, message, **details):
    """One finding: a stable ``kind`` id, a severity, a readable message, details."""
    item = {"kind": kind, "severity": severity, "message": message}
    item.update(details)
    return item
