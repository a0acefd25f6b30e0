"""The regular expressions `grep` takes: the subset that ripgrep's engine (Rust's `regex`) and
Python's `re` read alike, so a pattern finds the same lines whichever engine runs it.

In the subset: literal text; `.`; classes `[...]` with ranges and negation; `\\d \\w \\s \\b`, their
capitals, `\\A`; `^ $`; `* + ? {n} {n,} {n,m}` and their lazy forms; groups `(...)`, `(?:...)`,
`(?P<name>...)`; alternation; the flags `(?i) (?m) (?s) (?x)`; escaped punctuation and
`\\t \\r \\f \\v \\a \\xNN \\uNNNN`.

Refused, each with why: look-around and back-references (Rust has neither), `\\z \\Z` (each
engine reads one of them), `\\p{...}` and POSIX classes `[[:alpha:]]` (Rust only), a class
inside a class or set operations (`&&`, `--`, `~~`: Rust reads them, Python does not),
`{,n}`, a `{` that starts no count, possessive and atomic forms, other flags, and a line break
(a match lies within one line).
"""

from __future__ import annotations

import re

__all__ = ["refusal"]

_COUNT = re.compile(r"\{(\d+)(,(\d*))?\}")
_LETTER_ESCAPES = set("dDwWsSbBAtrfvaxuU")
_FLAGS = set("imsx")


def refusal(pattern: str) -> str | None:
    """Why `pattern` is outside the shared subset, or None when it is in it."""
    if "\n" in pattern or "\r" in pattern:
        return "it holds a line break: grep matches within one line"
    i, n = 0, len(pattern)
    in_class = class_start = False
    after_atom = False  # a quantifier may follow
    while i < n:
        c = pattern[i]
        if c == "\\":
            if i + 1 >= n:
                return "it ends in a lone backslash"
            e = pattern[i + 1]
            if e.isdigit():
                return f"\\{e} is a back-reference or an octal escape, which Rust's engine lacks"
            if e in "zZ":
                return "\\z and \\Z mean the end in one engine and nothing in the other: use $"
            if e in "pP":
                return "\\p{...} classes are Rust's only: use a class such as [a-z]"
            if e == "n":
                return "it holds \\n: grep matches within one line"
            if e.isalpha() and e not in _LETTER_ESCAPES:
                return f"\\{e} is not an escape both engines read"
            if e == "x" and pattern[i + 2 : i + 3] == "{":
                return "\\x{...} is Rust's only: use \\xNN or \\uNNNN"
            i += 2
            after_atom = True
            continue
        if in_class:
            if c == "[":
                return "a [ inside a class is a nested class in Rust and a character in Python: escape it"
            if pattern[i : i + 2] in ("&&", "--", "~~", "||"):
                return f"{pattern[i : i + 2]!r} inside a class is a set operation in Rust: escape one of them"
            if c == "]" and not class_start:
                in_class = False
                after_atom = True
            class_start = False
            i += 1
            continue
        if c == "[":
            in_class = True
            class_start = True
            i += 1
            if pattern[i : i + 1] == "^":
                i += 1
            if pattern[i : i + 2] == "[:":
                return "POSIX classes such as [[:alpha:]] are Rust's only: use [a-zA-Z]"
            continue
        if c == "(":
            if pattern.startswith("(?", i):
                rest = pattern[i + 2 :]
                if rest.startswith(":") or rest.startswith("P<"):
                    i += 3 if rest.startswith(":") else 4
                    after_atom = False
                    continue
                if rest[:1] in ("=", "!") or rest.startswith("<=") or rest.startswith("<!"):
                    return "look-around is Python's only: Rust's engine has none"
                if rest.startswith("P=") or rest.startswith("P>"):
                    return "a back-reference by name is Python's only"
                if rest.startswith(">"):
                    return "atomic groups are not in the shared subset"
                flags = re.match(r"-?([a-zA-Z-]*)([:)])", rest)
                if flags is None or not set(flags.group(1).replace("-", "")) <= _FLAGS:
                    return "the only flags both engines read are (?i), (?m), (?s) and (?x)"
                i += 2 + flags.end()
                after_atom = False
                continue
            i += 1
            after_atom = False
            continue
        if c == "{":
            m = _COUNT.match(pattern, i)
            if m is None or not after_atom:
                return "a { that starts no count {n}, {n,} or {n,m}: escape it as \\{"
            i = m.end()
            if pattern[i : i + 1] == "+":
                return "possessive counts are not in the shared subset"
            after_atom = False
            continue
        if c in "*+?":
            if pattern[i + 1 : i + 2] == "+":
                return "possessive quantifiers (*+, ++, ?+) are not in the shared subset"
            i += 2 if pattern[i + 1 : i + 2] == "?" else 1
            after_atom = False
            continue
        after_atom = c not in "|^"
        i += 1
    if in_class:
        return "a [ is not closed by a ]"
    return None
