"""User text inside generated Python source: only as escaped comments or table lookups.

The compiler writes Python source (a plan per ``Session.run`` signature, the stepper's
generator, fused kernels written to disk and imported). Node names, scope names and
attributes are the user's text, and text pasted into source is code: a node named
``"d\\n__import__('os').system(...)\\n#"`` would run when the graph runs. So every generator
goes through this module:

- :func:`comment` gives the form of a name that may follow ``#``: the name itself when it
  is printable, short and cannot be read as anything else, else an escaped one-line form;
- :func:`identifier` and :class:`Namespace` turn names derived from user text (kernel names
  made of op names) into plain ASCII identifiers bound to their objects, never reused for
  another object; values reach the source as ``repr`` literals of plain types or through
  the namespace, never as text;
- :func:`register` shows a generated source in tracebacks (``linecache``) for as long as
  the object that runs it lives.

>>> comment("layer1/relu")
'layer1/relu'
>>> comment("d\\n__import__('os')\\n#")
"d\\\\n__import__('os')\\\\n#"
>>> ns = Namespace(reserved=("_run",))
>>> ns.bind("_add", len), ns.bind("_add", len), ns.bind("_add", abs), ns.bind("_run", min)
('_add', '_add', '_add_2', '_run_2')
"""

from __future__ import annotations

import keyword
import linecache
import re
import weakref

#: Characters of a name kept in a comment; a longer name is cut and says how long it was.
COMMENT_LIMIT = 200
#: Characters of a text kept in an identifier made from it (:func:`identifier`).
IDENTIFIER_LIMIT = 48

# PEP 263: a comment on a file's first two lines that matches this names the file's source
# encoding, and ``unicode_escape`` would turn escaped text back into line breaks.
_CODING = re.compile(r"coding[:=]")
_NON_IDENTIFIER = re.compile(r"[^0-9A-Za-z_]")
_SHORT = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escaped(text: str) -> str:
    """Backslash escapes for everything that is not printable (line breaks of any kind,
    NUL, controls, lone surrogates, format characters) and for backslashes themselves, so
    the escaped form of two different names is never the same text."""
    out = []
    for c in text:
        if c in _SHORT:
            out.append(_SHORT[c])
        elif c.isprintable():
            out.append(c)
        else:
            code = ord(c)
            out.append(f"\\x{code:02x}" if code < 0x100 else
                       f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    return "".join(out)


def comment(text, limit: int = COMMENT_LIMIT) -> str:
    """``text`` (a node name) as it may stand after ``#`` in generated source.

    A printable name of at most ``limit`` characters without backslashes is itself, so
    plan listings show plain names as written. Anything else is escaped as in a Python
    string literal (``\\n``, ``\\x00``, ``\\ud800``, ``\\\\``), cut to ``limit`` characters
    with its length appended, and never reads as an encoding declaration: the result is
    one line of printable characters whatever ``text`` is.

    >>> comment("a\\u2028b"), comment("x" * 300, limit=4)
    ('a\\\\u2028b', 'xxxx... (300 characters)')
    """
    text = str(text)
    plain = text.isprintable() and "\\" not in text and len(text) <= limit
    if plain and not _CODING.search(text):
        return text
    shown = _escaped(text[:limit])
    shown = _CODING.sub(lambda m: "coding\\x" + format(ord(m.group()[-1]), "02x"), shown)
    return shown if len(text) <= limit else f"{shown}... ({len(text)} characters)"


def is_identifier(text) -> bool:
    """Whether ``text`` can stand in source as a name meaning exactly itself: an ASCII
    identifier and no keyword (non-ASCII identifiers are NFKC-normalised by the parser, so
    ``"ﬁ"`` would name ``fi``).

    >>> [is_identifier(t) for t in ("axis", "lambda", "\\ufb01", "a b")]
    [True, False, False, False]
    """
    return (isinstance(text, str) and text.isascii() and text.isidentifier()
            and not keyword.iskeyword(text))


def identifier(text: str) -> str:
    """An ASCII identifier made from ``text``: ``text`` itself when it is one, else its
    first :data:`IDENTIFIER_LIMIT` letters, digits and underscores (others become ``_``).
    Different texts may give the same identifier: :meth:`Namespace.bind` keeps them apart.

    >>> identifier("_add_float32"), identifier("_my op\\n"), identifier("9")
    ('_add_float32', '_my_op_', '_9')
    """
    if is_identifier(text):
        return text
    name = _NON_IDENTIFIER.sub("_", str(text)[:IDENTIFIER_LIMIT])
    if not name or name[0].isdigit() or keyword.iskeyword(name):
        name = "_" + name
    return name


class Namespace:
    """The globals of one generated function, filled only through :meth:`bind`.

    ``env`` is the dict handed to ``exec``; ``reserved`` are names the source itself
    defines or assigns (the function's own name, its locals), which no object may take.
    """

    def __init__(self, reserved=()):
        self.env: dict = {}
        self._reserved = set(reserved)

    def bind(self, name: str, value) -> str:
        """The name under which the source reads ``value``: ``identifier(name)``, or that
        with a suffix ``_2``, ``_3`` ... when it already means another object (two ops
        called alike must never share a kernel) or is reserved."""
        base = identifier(name)
        candidate, k = base, 1
        while candidate in self._reserved or (candidate in self.env
                                              and self.env[candidate] is not value):
            k += 1
            candidate = f"{base}_{k}"
        self.env[candidate] = value
        return candidate


_COLLECTED: list = []  # filenames whose owners were collected, for drop_collected


def drop_collected() -> None:
    """Drop the ``linecache`` entries of collected owners. Not done by the finalizer itself:
    a collection may run it in the middle of ``linecache.checkcache`` walking the cache's
    keys (a debugger or doctest starting), which then fails on the key gone."""
    while _COLLECTED:
        linecache.cache.pop(_COLLECTED.pop(), None)


def register(owner, filename: str, source: str) -> None:
    """Show ``source`` as ``filename`` in tracebacks and ``linecache`` while ``owner``
    lives: the entry goes after ``owner`` is collected (at the next register), so compiled
    plans do not pile up."""
    drop_collected()
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    weakref.finalize(owner, _COLLECTED.append, filename)
