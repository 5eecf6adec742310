"""Text as every product prints it: no line wider than a screen, wrapped as pip wraps.

``check``, ``status``, the install-time report and the runtime warnings all wrap here,
at :data:`WIDTH`: greedy, at spaces, continuation lines indented under the text, a
command in parentheses or backquotes kept on one line when it fits one.  ``textwrap``
would cost ``check`` the import of ``re``; this costs nothing at import.  Imports
nothing.
"""

#: The widest line any text output of sitewarden prints (``check``, ``status``, the
#: install report, the runtime warnings): a line longer than this is wrapped.
WIDTH = 160
_ESCAPE = "\033"


def shown_len(text):
    """``text``'s width on a terminal: its ANSI colour sequences (``ESC[...m``) take none."""
    if _ESCAPE not in text:
        return len(text)
    n, inside = 0, False
    for c in text:
        if c == _ESCAPE:
            inside = True
        elif inside:
            inside = c != "m"
        else:
            n += 1
    return n


def _words(part, room):
    """The words of one line of text, a group in parentheses or backquotes (a command
    a message quotes) kept as one word while it fits a line: it is copied whole."""
    words = part.split(" ")
    out, n = [], 0
    while n < len(words):
        word, k = words[n], n
        if word[:1] in "(`":
            depth, quote = 0, 0
            for k in range(n, len(words)):
                depth += words[k].count("(") - words[k].count(")")
                quote += words[k].count("`")
                if depth <= 0 and quote % 2 == 0:
                    break
            group = " ".join(words[n:k + 1])
            if k > n and len(group) <= room and depth <= 0 and quote % 2 == 0:
                word = group
            else:
                k = n
        out.append(word)
        n = k + 1
    return out


#: What stands for a space inside a phrase :func:`wrap` keeps on one line (a control
#: character: the text output escapes every one it shows, so none is left in ``text``).
_KEPT_SPACE = "\x00"


def wrap(text, prefix="", indent=None, width=WIDTH, keep=()):
    """``prefix + text`` as lines of at most ``width`` characters, as pip (rich) wraps:
    broken at spaces, greedily, each line after the first indented by ``indent`` spaces
    (default: under the text, where ``prefix`` ends); a line feed in ``text`` starts a
    new line, indented so too.  A command in parentheses or backquotes, and each phrase
    of ``keep`` (a finding's fix, wherever its message says it), stays on one line when
    it fits one: it is copied whole; a word wider than a line of its own (a long path)
    is cut, never left to overflow.  The one wrapper of every text output: ``textwrap``
    would cost ``check`` the import of ``re``."""
    indent = shown_len(prefix) if indent is None else indent
    pad = " " * indent
    room = max(width - indent, 20)
    for phrase in keep:  # a command, copied whole: its spaces are no place to break
        if phrase and " " in phrase and len(phrase) <= room:
            text = text.replace(phrase, phrase.replace(" ", _KEPT_SPACE))
    out = []
    line, used = prefix, shown_len(prefix)
    for n, part in enumerate(text.split("\n")):
        if n:
            out.append(line.rstrip())
            line, used = pad, indent
        fresh = True  # nothing of this part on ``line`` yet
        for word in _words(part, room):
            size = shown_len(word)
            if not fresh and used + 1 + size > width:
                out.append(line.rstrip())
                line, used, fresh = pad, indent, True
            if not fresh:
                line, used = line + " ", used + 1
            while used + size > width and size > room and _ESCAPE not in word:
                cut = max(width - used, 1)
                out.append(line + word[:cut])
                word, size = word[cut:], size - cut
                line, used = pad, indent
            line, used, fresh = line + word, used + size, False
    out.append(line.rstrip())
    return [x.replace(_KEPT_SPACE, " ") for x in out] if keep else out


def fit(lines):
    """The text of ``lines`` (a list of texts, or one text), each of its lines no wider
    than :data:`WIDTH`: a longer one wrapped (:func:`wrap`), its continuation indented
    four spaces deeper than the line itself."""
    out = []
    for text in [lines] if isinstance(lines, str) else lines:
        for line in text.split("\n"):
            if shown_len(line) <= WIDTH:
                out.append(line)
                continue
            body = line.lstrip(" ")
            lead = len(line) - len(body)
            out.extend(wrap(body, " " * lead, indent=lead + 4))
    return "\n".join(out)


def unwrap(text, indent):
    """What :func:`wrap` joined with ``indent`` spaces, on one line again (a reader of
    the runtime warnings' text: the message as it was worded)."""
    return text.replace("\n" + " " * indent, " ")




def unwrap_lines(text, width=WIDTH):
    """``text`` as it was before :func:`wrap` and :func:`fit` broke its long lines (for
    a reader of the text: a script, a test).  A line continues the one above when it is
    indented as :func:`fit` indents (four spaces deeper) or under a finding's text (past
    its severity and id), and its first word could not have fit at the end of the line
    above.  A word :func:`wrap` had to cut (wider than a line) stays cut."""
    out, last, hangs = [], None, ()
    for line in text.split("\n"):
        body = line.lstrip(" ")
        if last is not None and body and len(line) - len(body) in hangs and \
                shown_len(last) + 1 + shown_len(_words(body, width)[0]) > width:
            out[-1] += " " + body
        else:
            out.append(line)
            lead = len(line) - len(body)
            head = body.split(" ", 1)[0]
            after = body[len(head):].lstrip(" ")
            ident = after.split(" ", 1)[0]
            hangs = (lead + 4, len(line) - len(after) + len(ident) + 1)
        last = line
    return "\n".join(out)
