"""A check run in a target interpreter (``python -I -S -c KNOWN_CHECK <src>``): each of
``line_checks.KNOWN_LINES`` is what ``line_imports`` reads from the line's syntax
tree there, and the line judged through the table is printed (``-S``: no site-packages,
so setuptools' ``_distutils_hack`` is missing and the line fails)."""

KNOWN_CHECK = (
    "import sys; sys.path.insert(0, sys.argv[1])\n"
    "from sitewarden.audit import line_checks as sc\n"
    "for line, table in sc.KNOWN_LINES.items():\n"
    "    assert sc.line_imports(line + ' ') == table, (line, sc.line_imports(line))\n"
    "    print(sc.line_error(line + ' '))\n")
