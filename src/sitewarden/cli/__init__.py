"""Top floor, the command line: ``sitewarden`` and ``python3 -m sitewarden``.

May import every package; nothing outside it imports it.
"""
