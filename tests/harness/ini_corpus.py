"""A differential check of ``marker.simple_ini`` against the target's own configparser.

:data:`CHECK` runs in a target interpreter (``python -I -S -c CHECK <src> <seed>
<count>``): it builds the corpus there (the edge cases below, then ``count`` texts
of random lines drawn from :data:`PIECES`), reads each with
``configparser.ConfigParser(interpolation=None)`` as pip reads the marker, and with
``simple_ini``; wherever ``simple_ini`` answers (not None), the two must agree, and
configparser must have read the text without an error.  It prints one JSON object:
``checked``, ``simple`` (how many texts took the fast path: a check that never
takes it proves nothing) and ``mismatches`` (each text with both answers).
"""

CHECK = r'''
import configparser, json, random, sys
sys.path.insert(0, sys.argv[1])
from sitewarden.facts.marker import simple_ini

PIECES = [
    "[externally-managed]", "[other]", "[DEFAULT]", "[a]b]", "[]", "[a] ; c", "[[x]",
    " [externally-managed]", "\t[other]", "Error=x", "error = y", "ERROR: z",
    "Error-de_DE = deutsch", "Error=", "Error:", "=novalue", ":novalue", "key", "  continued",
    "\tcont tab", " \t mixed", "", "   ", "\t", "# comment", "; comment", "  # indented",
    "\t; indented", "#", "\x0cError=ff", "\xa0x=1", "\x1cz=1", "  \x0cz", "a=b=c", "a:b=c",
    "a = b : c", "Error = x\r", "\r", " \r", "key with space = v", "k\tey = v", "x=%(y)s",
    "Error=  spaced  ", "dup=1", "dup=2", "Dup=3", "\u2028", "Error=\u00e9t\u00e9",
    "[Externally-Managed]", "Error = a\rb", "  [not a section]", "key = [x]", "  =x",
]
#: Lines the fast path takes: half the random texts are a section and these.
PLAIN = ["Error=x", "error = y", "ERROR: z", "Error-de_DE = deutsch", "Error=", "a=b=c",
         "a:b=c", "a = b : c", "Error = x\r", "\r", " \r", "", "   ", "  continued",
         "\tcont tab", " \t mixed", "# comment", "; comment", "  # indented", "x=%(y)s",
         "k\tey = v", "key with space = v", "Error=  spaced  ", "Error = a\rb", "key = [x]",
         "[other]", "dup=1"]
EDGES = [
    "", "\n", "[externally-managed]", "[externally-managed]\nError=x",
    "[externally-managed]\nError=line 1\n  line 2\n\n  line 4\n\n\n",
    "[externally-managed]\nError=a\n# c\n  b\n", "[externally-managed]\nError=a\n\nnext=b\n",
    "\ufeff[externally-managed]\nError=x", "Error=x\n[externally-managed]",
    "[externally-managed]\nError=x\n[externally-managed]\nError=y",
    "[DEFAULT]\nError=d\n[externally-managed]\n",
    "[externally-managed]\r\nError=crlf\r\n  more\r\n",
]


def reference(text):
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except Exception as exc:
        return "error: %s" % type(exc).__name__
    return {name: dict(parser[name]) for name in parser.sections()}


rng = random.Random(int(sys.argv[2]))
texts = list(EDGES)
for i in range(int(sys.argv[3])):
    if i % 2:
        lines = [rng.choice(PIECES) for _ in range(rng.randint(1, 8))]
    else:
        lines = ["[externally-managed]"] + [rng.choice(PLAIN) for _ in range(rng.randint(0, 8))]
    texts.append("\n".join(lines) + rng.choice(["", "\n", "\n\n"]))
simple, mismatches = 0, []
for text in texts:
    fast = simple_ini(text)
    if fast is None:
        continue
    simple += 1
    ref = reference(text)
    if fast != ref:
        mismatches.append({"text": text, "simple_ini": fast, "configparser": ref})
print(json.dumps({"checked": len(texts), "simple": simple, "mismatches": mismatches[:5]}))
'''


def run_check(run, python, src, seed=668, count=4000):
    """The check's JSON from ``python`` (``run(argv)`` -> CompletedProcess, text)."""
    import json

    proc = run([python, "-I", "-S", "-c", CHECK, str(src), str(seed), str(count)])
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)
