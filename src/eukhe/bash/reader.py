"""What a bash command runs: its simple commands, read from tree-sitter-bash's syntax tree
(as Codex reads `bash -lc` scripts), for the permission rule to judge. This module only
reads; the rule decides. Where bash would read the text otherwise than the tree does, or
where the text alone cannot say what runs (a name from a variable, a function, an alias,
arithmetic on a variable's value), the result is not whole and says why: the rule then
asks, never allows.

Total on any string: the input is capped at 64 KiB, nested shell scripts at 8 levels,
simple commands at 256 and all text parsed in one call at 256 KiB; the parser gets 1 s
in all (its error recovery is quadratic: 64 KiB of `)` would take it 40 s); the tree is walked
with an explicit stack (a valid command can nest 20,000 levels deep)."""

from __future__ import annotations

import bisect
import itertools
import time
from dataclasses import dataclass
from types import MappingProxyType

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from eukhe.rules.permission import BASH_LIKE as SHELLS
from eukhe.rules.permission import OTHER_SHELLS

MAX_BYTES = 64 * 1024
MAX_DEPTH = 8
MAX_COMMANDS = 256
MAX_PARSED = 4 * MAX_BYTES
PARSE_SECONDS = 1.0

# Immutable: the compiled grammar. Parsers are made once per call to `split`.
_BASH = Language(tree_sitter_bash.language())

# tree-sitter-bash 0.25.1's scanner passes a character to C's `isdigit` after `{` and `${`,
# which reads out of bounds and crashes the process on a large code point (tree-sitter-bash
# #337; fix in PR #348, unreleased). So the parser sees every non-ASCII byte as `.`: like a
# non-ASCII character, a plain word character to bash (not an operator, not part of a
# name), so the tree keeps its shape and byte offsets; words are read from the real bytes.
_ASCII_ONLY = bytes(b if b < 0x80 else 0x2E for b in range(256))


@dataclass(frozen=True)
class Split:
    """A bash command's simple commands: each one's words as the shell would pass them
    (quotes removed; a word holding an expansion kept as written), in source order, a
    command before the ones nested in it, nested ones included. `whole` is False when the
    command cannot be read whole, and `why` then says what could not be read."""

    commands: tuple[tuple[str, ...], ...]
    whole: bool
    why: str = ""
    writes: tuple[str, ...] = ()  # what its redirections write (not /dev/null, not a descriptor)


def split(command: str) -> Split:
    """The simple commands `command` runs, or what keeps it from being read whole."""
    if not isinstance(command, str):  # a caller past the type checker still gets an answer
        return Split((), False, "the command is not text")
    if not command.strip():
        return Split((), False, "an empty command")
    reading = _Reading(Parser(_BASH))
    reading.script(command, 0, top=True)
    return Split(tuple(reading.commands), not reading.why, reading.why, tuple(reading.writes))


# ---------------------------------------------------------------- names that matter

CHANGES_WHAT_RUNS = frozenset(
    {"PATH", "BASH_ENV", "ENV", "IFS", "PS4", "SHELLOPTS", "BASHOPTS", "BASH_ALIASES", "BASH_CMDS",
     "BASH_LOADABLES_PATH", "GCONV_PATH", "PYTHONPATH", "PYTHONHOME", "NODE_OPTIONS", "PERL5OPT",
     "PERL5LIB", "PERLLIB", "RUBYOPT", "RUBYLIB", "GIT_EXEC_PATH", "LESSOPEN", "LESSCLOSE"}
)  # fmt: skip
"""Variables whose value changes which program a name runs or what it loads first."""

CHANGES_WHAT_RUNS_PREFIXES = ("LD_", "BASH_FUNC_", "GIT_CONFIG")

HOLDS_A_COMMAND = frozenset(
    {"PAGER", "GIT_PAGER", "MANPAGER", "EDITOR", "VISUAL", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR",
     "GIT_SSH_COMMAND", "GIT_SSH", "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS", "GIT_EXTERNAL_DIFF",
     "GIT_PROXY_COMMAND", "BROWSER"}
)  # fmt: skip
"""Variables whose value a program runs as a command line: the value is read as a script."""

SETS_VARIABLES = frozenset({"env", "sudo", "doas", "make", "gmake"})
"""Commands that take `NAME=value` words and set them for what they run."""

RESERVED = frozenset(
    {"!", "{", "}", "[[", "]]", "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for",
     "function", "if", "in", "select", "then", "until", "while", "time"}
)  # fmt: skip
"""Bash's reserved words: one where the tree has a command name means the tree and bash differ."""

NAMES_A_VARIABLE = frozenset(
    {"read", "mapfile", "readarray", "printf", "getopts", "wait", "unset", "test", "["}
)
"""Builtins that take variable names, whose subscripts bash evaluates (`a[$(id)]` runs `id`)."""

DECLARES = frozenset({"declare", "typeset", "local", "export", "readonly"})

ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})

_ARITHMETIC_PURE = frozenset(
    {"number", "binary_expression", "unary_expression", "parenthesized_expression", "ternary_expression",
     "postfix_expression"}
)  # fmt: skip
_TEST_EXPRESSIONS = frozenset({"binary_expression", "unary_expression", "parenthesized_expression"})
_LET_CHARS = frozenset("0123456789+-*/%()<>=!&|^~?:, \t")
_BLANKS = b" \t\n"
WRITES_TO = frozenset({">", ">>", ">|", "&>", "&>>", ">&", "<>"})
"""Redirection operators that write their target (`>&` to a file name, not a number)."""


# ---------------------------------------------------------------- words


@dataclass(frozen=True)
class _Word:
    text: str  # quotes removed when literal; the source text when it holds an expansion
    literal: bool  # no expansion: `text` is what the shell passes
    pattern: bool = False  # an unquoted glob or brace character (`*?[{`)


def _unquoted(raw: str) -> tuple[str, bool]:
    """Bash's quote removal on unquoted text, and whether a glob or brace character is
    left unescaped in it."""
    out: list[str] = []
    pattern = False
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == "\\" and i + 1 < len(raw):
            if raw[i + 1] != "\n":  # a line continuation vanishes
                out.append(raw[i + 1])
            i += 2
            continue
        pattern = pattern or c in "*?[{"
        out.append(c)
        i += 1
    return "".join(out), pattern


def _double_quoted(raw: str) -> str:
    """Quote removal inside double quotes: a backslash escapes only `$`, a backtick, `"`,
    a backslash and a newline."""
    out: list[str] = []
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == "\\" and i + 1 < len(raw) and raw[i + 1] in '$`"\\\n':
            if raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


_SIMPLE_ESCAPES = MappingProxyType({
    "a": 7, "b": 8, "e": 27, "E": 27, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11,
    "\\": 92, "'": 39, '"': 34, "?": 63,
})  # fmt: skip


def _ansi_c_whole(raw: str) -> bool:
    """Whether bash ends the `$'…'` string `raw` (its text between the quotes) where the
    parser does: bash skips the character after each backslash, so `$'\\'\'` is `$'\\'`
    then `\'` to it, while tree-sitter-bash reads one string up to the last quote."""
    i = 0
    while i < len(raw):
        if raw[i] == "\\":
            i += 2
        elif raw[i] == "'":
            return False
        else:
            i += 1
    return True


def _ansi_c(raw: str) -> str:
    """A `$'…'` string's text as bash decodes it; a NUL ends it, as in bash."""
    out = bytearray()
    i = 0
    n = len(raw)
    while i < n:
        c = raw[i]
        if c != "\\" or i + 1 >= n:
            out += c.encode("utf-8", "replace")
            i += 1
            continue
        e = raw[i + 1]
        i += 2
        if e in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[e])
        elif e in "01234567":
            j = i - 1
            while j < n and j < i + 2 and raw[j] in "01234567":
                j += 1
            out.append(int(raw[i - 1 : j], 8) & 0xFF)
            i = j
        elif e in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[e]
            j = i
            while j < n and j < i + width and raw[j] in "0123456789abcdefABCDEF":
                j += 1
            if j == i:
                out += ("\\" + e).encode()
            elif e == "x":
                out.append(int(raw[i:j], 16))
            else:
                point = int(raw[i:j], 16)
                ok = point <= 0x10FFFF and not 0xD800 <= point <= 0xDFFF
                out += (chr(point) if ok else "\ufffd").encode("utf-8")
            i = j
        elif e == "c" and i < n:
            out.append(ord(raw[i]) & 0x1F if ord(raw[i]) < 128 else 0x3F)
            i += 1
        else:
            out += ("\\" + e).encode("utf-8", "replace")
    text = out.decode("utf-8", "replace")
    return text.partition("\0")[0]


def _variable_names(name: str, args: list[_Word]) -> list[_Word]:
    """The words of a builtin that name a variable (it sets it, or reads it by name)."""
    if name in ("printf", "test", "[", "wait"):
        flag = "-p" if name == "wait" else "-v"
        return [b for a, b in itertools.pairwise(args) if a.text == flag]
    if name == "getopts":
        return args[1:2]
    if name not in NAMES_A_VARIABLE and name not in DECLARES:
        return []
    takes = _OPTION_TAKES_A_WORD.get(name, "")
    out: list[_Word] = []
    skip = False
    for a in args:
        if skip:  # an option's own word (`read -p PROMPT`)
            skip = False
            continue
        if a.text.startswith("-") and len(a.text) > 1:
            skip = a.text[-1] in takes
            continue
        out.append(a)
    return out


_OPTION_TAKES_A_WORD = MappingProxyType({"read": "dinNptu", "mapfile": "dnOsuCc", "readarray": "dnOsuCc"})


def _opens(node: Node, token: str) -> bool:
    return node.child_count > 0 and node.children[0].type == token


def _changes_what_runs(name: str) -> bool:
    return name in CHANGES_WHAT_RUNS or name.startswith(CHANGES_WHAT_RUNS_PREFIXES)


def _base(word: str) -> str:
    return word.rpartition("/")[2]


# ---------------------------------------------------------------- the reading


class _Reading:
    """One call's reading: the commands found, the first reason it is not whole, and the
    budgets. Made per call to `split`, never shared."""

    def __init__(self, parser: Parser) -> None:
        self.parser = parser
        self.deadline = time.monotonic() + PARSE_SECONDS
        self.commands: list[tuple[str, ...]] = []
        self.writes: list[str] = []  # the files its output redirections write
        self.why = ""
        self.parsed = 0
        self.full = False  # the command cap is reached: stop reading

    def refuse(self, why: str) -> None:
        if not self.why:
            self.why = why

    def add(self, words: tuple[str, ...]) -> None:
        if len(self.commands) >= MAX_COMMANDS:
            self.refuse(f"more than {MAX_COMMANDS} simple commands")
            self.full = True
            return
        self.commands.append(words)

    # ------------------------------------------------------------ a script

    def script(self, text: str, depth: int, top: bool = False) -> None:
        """Read one script (the command, or a string bash would run: `bash -c`, `eval`,
        a backtick body, a variable that holds a command)."""
        if self.full:
            return
        if depth > MAX_DEPTH:
            self.refuse(f"shell scripts nested deeper than {MAX_DEPTH}")
            return
        if "\0" in text:
            self.refuse("a NUL byte in the command")
            return
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            self.refuse("text that is not valid Unicode (a lone surrogate)")
            return
        if len(data) > MAX_BYTES:
            self.refuse("the command is over 64 KiB")
            return
        if self.parsed + len(data) > MAX_PARSED:
            self.refuse("nested scripts over 256 KiB in all")
            return
        self.parsed += len(data)
        shown = data.translate(_ASCII_ONLY)
        try:
            tree = self.parser.parse(
                lambda at, _point: shown[at:],
                progress_callback=lambda _at, _error: time.monotonic() > self.deadline,
            )
        except ValueError:  # the progress callback cancelled the parse
            self.parser.reset()
            self.refuse(f"the parser did not finish within {PARSE_SECONDS:g} s")
            return
        root = tree.root_node
        if top and not root.has_error and not any(c.type != "comment" for c in root.named_children):
            self.refuse("an empty command")
            return
        _Walk(self, data, depth).run(root)
        if root.has_error:  # an error the walk did not reach still makes it not whole
            self.refuse("a syntax error")


class _Walk:
    """The walk over one script's tree, in source order, with an explicit stack."""

    def __init__(self, reading: _Reading, src: bytes, depth: int) -> None:
        self.r = reading
        self.src = src
        self.depth = depth
        self.opaque: list[tuple[int, int]] = []  # single quotes, comments, quoted here-doc bodies
        self.quoted: list[tuple[int, int]] = []  # double quotes, unquoted here-doc bodies

    def text(self, node: Node) -> str:
        return self.src[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def line(self, node: Node) -> int:
        return node.start_point[0] + 1

    def run(self, root: Node) -> None:
        self.gap(0, root.start_byte)
        self.gap(root.end_byte, len(self.src))
        stack = [root]
        while stack and not self.r.full:
            node = stack.pop()
            children = self.visit(node)
            stack.extend(reversed(children))
        self.continuations()

    # ------------------------------------------------------------ dispatch

    def visit(self, node: Node) -> list[Node]:
        """Check one node; the children still to walk."""
        kind = node.type
        if node.is_missing:
            self.r.refuse(f"an incomplete command (a missing {kind!r} at line {self.line(node)})")
            return []
        if node.is_error:
            self.r.refuse(f"a syntax error at line {self.line(node)}")
            return list(node.children)
        if kind == "ansi_c_string" and not _ansi_c_whole(self.text(node)[2:-1]):  # anywhere: a word, a target
            self.r.refuse(f"a $'…' string bash ends before the parser does: {self.text(node)}")
        if kind in ("raw_string", "ansi_c_string", "comment"):
            self.opaque.append((node.start_byte, node.end_byte))
            return []
        if kind in ("string", "heredoc_body"):
            self.quoted.append((node.start_byte, node.end_byte))
        if kind == "command":
            return self.command(node)
        if kind == "declaration_command":
            return self.declaration(node)
        if kind == "unset_command":
            words = [self.text(node.children[0])] + [self.word([c]).text for c in node.children[1:]]
            self.builtin(words, [self.word([c]) for c in node.children[1:]])
            self.r.add(tuple(words))
            return list(node.children)
        if kind == "function_definition":
            self.r.refuse("a function definition (a later word could call it)")
        elif kind == "variable_assignment":
            self.assignment(node)
        elif kind == "heredoc_redirect":
            return self.heredoc(node)
        elif kind == "file_redirect":
            self.redirect(node)
        elif kind == "command_substitution":
            return self.substitution(node)
        elif kind == "arithmetic_expansion" or (kind == "compound_statement" and _opens(node, "((")):
            self.arithmetic(node.named_children)
        elif kind == "c_style_for_statement":
            parts = [node.child_by_field_name(f) for f in ("initializer", "condition", "update")]
            self.arithmetic([p for p in parts if p is not None])
        elif kind == "test_command" and _opens(node, "["):
            self.bracket(node)
        elif kind == "test_command":
            self.test(node)
        elif kind == "subscript":
            index = node.child_by_field_name("index")
            if index is not None and not (
                self.text(index).lstrip("-").isdigit() or self.text(index) in ("@", "*")
            ):
                self.r.refuse("an array subscript that is not a number (bash evaluates it)")
        elif kind == "expansion":
            self.expansion(node)
        self.gaps(node)
        return list(node.children)

    def redirect(self, node: Node) -> None:
        """An output redirection to a file is a write the command makes (a read-only command
        with one is not read-only); a duplication (`>&2`) or /dev/null is none."""
        ops = {c.type for c in node.children}
        if not ops & WRITES_TO:
            return
        target = node.child_by_field_name("destination")
        if target is None or target.type == "number":
            return
        where = self.word([target]).text
        if where != "/dev/null":
            self.r.writes.append(where)

    # ------------------------------------------------------------ simple commands

    def command(self, node: Node) -> list[Node]:
        parts: list[Node] = []  # the name and arguments, in order
        for i, child in enumerate(node.children):
            field = node.field_name_for_child(i)
            if field in ("name", "argument"):
                parts.append(child)
            elif field != "redirect" and child.type not in ("variable_assignment", "comment", "ERROR"):
                self.r.refuse(f"an unexpected {child.type!r} in a command at line {self.line(child)}")
        groups = self.groups(parts)
        words = [self.word(g) for g in groups]
        if words and groups[0][0].type == "command_name":
            words = self.name(groups[0][0], words)
        if words and groups[0][0].end_byte > groups[0][0].start_byte:  # not a missing name
            self.r.add(tuple(w.text for w in words))
            self.inner(words)
        self.gaps(node)
        return list(node.children)

    def name(self, node: Node, words: list[_Word]) -> list[_Word]:
        """Check the command name; drop the `time` keyword."""
        first = words[0]
        plain = node.named_child_count == 1 and node.named_children[0].type == "word"
        if plain and first.text == "time":
            rest = words[1:]
            while rest and rest[0].literal and rest[0].text in ("-p", "--"):
                rest = rest[1:]
            if rest and rest[0].literal and rest[0].text in RESERVED:
                self.r.refuse(f"time before {rest[0].text!r} (the parser does not read it as bash does)")
            if not rest:
                return []
            return self.name_checks(rest, plain=False)
        return self.name_checks(words, plain)

    def name_checks(self, words: list[_Word], plain: bool) -> list[_Word]:
        first = words[0]
        if not first.literal:
            self.r.refuse(f"a command name that is not a literal: {first.text}")
        elif first.pattern and first.text != "[":
            self.r.refuse(f"a pattern in a command name: {first.text}")
        elif plain and first.text in RESERVED:
            self.r.refuse(f"the reserved word {first.text!r} where a command was expected")
        return words

    def groups(self, parts: list[Node]) -> list[list[Node]]:
        """Nodes with nothing (or only line continuations) between them are one word."""
        out: list[list[Node]] = []
        for p in parts:
            if out and self.src[out[-1][-1].end_byte : p.start_byte].replace(b"\\\n", b"") == b"":
                out[-1].append(p)
            else:
                out.append([p])
        return out

    def word(self, nodes: list[Node]) -> _Word:
        """One shell word from its parts: the text bash passes, or its source if it expands."""
        texts: list[str] = []
        literal = True
        pattern = False
        flat: list[Node] = []
        pending = list(reversed(nodes))
        while pending:
            n = pending.pop()
            if n.type in ("command_name", "concatenation"):
                pending.extend(reversed(n.children))
            else:
                flat.append(n)
        for i, n in enumerate(flat):
            kind = n.type
            raw = self.text(n)
            if kind == "word":
                t, p = _unquoted(raw)
                texts.append(t)
                pattern = pattern or p
            elif kind in ("number", "variable_name"):
                texts.append(raw)
            elif kind == "raw_string":
                texts.append(raw[1:-1])
            elif kind == "ansi_c_string":
                texts.append(_ansi_c(raw[2:-1]))
            elif kind in ("string", "translated_string"):
                if any(c.is_named and c.type != "string_content" for c in n.children):
                    literal = False
                else:
                    texts.append(_double_quoted(raw[raw.index('"') + 1 : -1]))
            elif kind in ("==", "=~", "!=") and not n.is_named:  # tokens to tree-sitter, text to bash
                texts.append(raw)
            elif kind == "$" and not n.is_named:
                if not (raw == "$" and i + 1 < len(flat) and flat[i + 1].type == "string"):
                    texts.append(_unquoted(raw)[0])  # `$` or `\$`; a `$"…"` is a string
            else:
                literal = False
                pattern = pattern or kind in ("brace_expression", "extglob_pattern")
        if not nodes:
            return _Word("", True)
        if not literal:
            source = self.src[nodes[0].start_byte : nodes[-1].end_byte].decode("utf-8", "replace")
            return _Word(source, False, pattern)
        return _Word("".join(texts), True, pattern)

    # ------------------------------------------------------------ strings bash runs

    def inner(self, words: list[_Word]) -> None:
        """The scripts a simple command hands to a shell (`bash -c`, `eval`, `trap`), and
        the builtins whose words change what runs."""
        last_c = max((i for i, x in enumerate(words) if x.text.lower().startswith("-c")), default=-1)
        setter = False  # the first command that sets variables reads every word after it
        for i, w in enumerate(words):
            if not w.literal:
                continue
            name = _base(w.text)
            if name in SHELLS:
                self.shell(words, i)
            elif name in OTHER_SHELLS and last_c > i:
                self.r.refuse(f"a {name} script (not bash syntax)")
            if name in SETS_VARIABLES and not setter:
                setter = True
                self.settings(words[i + 1 :])
            if name == "env":
                self.env_options(words, i)
        k = 0
        while k < len(words) and words[k].literal and words[k].text in ("command", "builtin"):
            k += 1
            while k < len(words) and words[k].text == "-p":
                k += 1
        if k < len(words) and words[k].literal:
            self.builtin([w.text for w in words[k:]], words[k + 1 :])

    def shell(self, words: list[_Word], i: int) -> None:
        """`bash [options] -c SCRIPT [args]`: read SCRIPT too."""
        j = i + 1
        c = False
        while j < len(words):
            w = words[j]
            if not w.literal:
                if c:
                    break
                self.r.refuse(f"options of {words[i].text} that are not literals: {w.text}")
                return
            t = w.text
            if t in ("--", "-"):
                j += 1
                break
            if t.startswith("--"):
                j += 2 if t in ("--rcfile", "--init-file") else 1
                continue
            if len(t) > 1 and t[0] in "-+":
                c = c or (t[0] == "-" and "c" in t[1:])
                j += 1 + t.count("o") + t.count("O")  # -o NAME and -O NAME take a word
                continue
            break
        if not c or j >= len(words):
            return
        script = words[j]
        if not script.literal or script.pattern:
            self.r.refuse(f"a {_base(words[i].text)} -c script that is not a literal: {script.text}")
            return
        if i > 0 and "{}" in script.text:
            self.r.refuse("{} in a shell script (replaced at run time)")
        xargs = i > 0 and _base(words[0].text) == "xargs"
        if xargs and any(w.text.startswith(("-I", "-i", "--replace")) for w in words[1:i]):
            self.r.refuse("xargs -I before a shell script (it replaces text in it at run time)")
        self.r.script(script.text, self.depth + 1)

    def settings(self, words: list[_Word]) -> None:
        """`env NAME=value …`: a name that changes what runs, or a value that is a command."""
        for w in words:
            if not w.literal:
                continue
            name, eq, value = w.text.partition("=")
            if eq and name:
                self.setting(name, _Word(value, True))

    def env_options(self, words: list[_Word], i: int) -> None:
        """`env -S STRING` splits STRING into a command: not read."""
        for w in itertools.takewhile(lambda x: x.text.startswith("-"), words[i + 1 :]):
            if w.text.startswith("--split-string") or (not w.text.startswith("--") and "S" in w.text):
                self.r.refuse("env -S (it splits a string into a command)")

    def setting(self, name: str, value: _Word | None) -> None:
        if _changes_what_runs(name):
            self.r.refuse(f"an assignment to {name} (it changes what runs)")
        elif name in HOLDS_A_COMMAND and value is not None:
            if value.literal:
                self.r.script(value.text, self.depth + 1)
            else:
                self.r.refuse(f"{name} holds a command that is not a literal: {value.text}")

    def builtin(self, words: list[str], args: list[_Word]) -> None:
        """Builtins that run a string or change what later words mean."""
        name = words[0]
        if name == "eval":
            rest = args[1:] if args and args[0].text == "--" else args
            if all(a.literal and not a.pattern for a in rest):
                self.r.script(" ".join(a.text for a in rest), self.depth + 1)
            else:
                self.r.refuse("eval of words that are not literals")
        elif name == "trap":
            rest = [a for a in args if not (a.literal and a.text in ("-p", "-l", "-P", "--"))]
            if len(rest) >= 2 and rest[0].literal and rest[0].text != "-":
                self.r.script(rest[0].text, self.depth + 1)
            elif len(rest) >= 2 and not rest[0].literal:
                self.r.refuse("a trap whose command is not a literal")
        elif name == "alias" and any("=" in a.text for a in args):
            self.r.refuse("an alias definition (it changes what later words mean)")
        elif name == "let" and not all(a.literal and set(a.text) <= _LET_CHARS for a in args):
            self.r.refuse("let on a variable (its value can run commands)")
        elif name in ("compgen", "complete"):
            self.r.refuse(f"{name} (completion builtins evaluate their words)")
        elif name == "hash" and any(a.text.startswith("-") and "p" in a.text for a in args):
            self.r.refuse("hash -p (it changes what a name runs)")
        elif name == "enable" and any(a.text.startswith("-") and "f" in a.text for a in args):
            self.r.refuse("enable -f (it loads a library into bash)")
        elif name in ("mapfile", "readarray") and any(a.text.startswith("-") and "C" in a.text for a in args):
            self.r.refuse(f"{name} -C (it runs a callback)")
        elif name == "coproc":
            self.r.refuse("coproc (the parser does not read it as bash does)")
        elif name in DECLARES:
            self.declared(name, args)
        for a in _variable_names(name, args):
            if "[" in a.text and ("$" in a.text or "`" in a.text):
                self.r.refuse(f"a subscript in a variable name (bash evaluates it): {a.text}")
            bare = a.text.partition("[")[0].partition("+=")[0].partition("=")[0]
            if a.literal and _changes_what_runs(bare) and name != "unset":
                self.r.refuse(f"{name} into {bare} (it changes what runs)")

    def declared(self, name: str, args: list[_Word]) -> None:
        if name == "export" or name == "readonly":
            return
        for a in args:
            if a.literal and a.text.startswith("-") and "i" in a.text:
                self.r.refuse("an integer variable (bash evaluates its values as arithmetic)")
            if a.literal and a.text.startswith("-") and "n" in a.text:
                self.r.refuse("a name reference (assigning to it sets the variable it names)")

    def declaration(self, node: Node) -> list[Node]:
        """`export`, `declare`, `local`, `readonly`, `typeset`: a command whose assignments
        are checked as they are walked."""
        words: list[str] = []
        args: list[_Word] = []
        for child in node.children:
            if child.type == "variable_assignment":
                w = self.assignment_word(child)
            elif child.type == "comment":
                continue
            else:
                w = self.word([child])
            words.append(w.text)
            args.append(w)
        if words:
            self.builtin(words, args[1:])
            self.r.add(tuple(words))
        self.gaps(node)
        return list(node.children)

    def assignment_word(self, node: Node) -> _Word:
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if name is None or value is None:
            return _Word(self.text(node), False)
        v = self.word([value])
        op = self.src[name.end_byte : value.start_byte].decode("utf-8", "replace")
        if not v.literal or name.type != "variable_name":
            return _Word(self.text(node), False)
        return _Word(self.text(name) + op + v.text, True)

    def assignment(self, node: Node) -> None:
        name = node.child_by_field_name("name")
        if name is None:
            return
        base = name.child_by_field_name("name") if name.type == "subscript" else name
        value = node.child_by_field_name("value")
        self.setting(self.text(base or name), self.word([value]) if value is not None else None)

    # ------------------------------------------------------------ the rest of the grammar

    def heredoc(self, node: Node) -> list[Node]:
        """A here-document's body is data, unless its delimiter is unquoted (then its
        substitutions run)."""
        start = next((c for c in node.children if c.type == "heredoc_start"), None)
        quoted = start is None or any(q in self.text(start) for q in "'\"\\")
        out: list[Node] = []
        for c in node.children:
            if c.type == "heredoc_body":
                (self.opaque if quoted else self.quoted).append((c.start_byte, c.end_byte))
                if not quoted:
                    out.extend(self.body(c))
                continue
            out.append(c)
        return out

    def body(self, node: Node) -> list[Node]:
        """An unquoted here-document's body, read as bash reads it: the tree has its `$(…)`
        and `${…}`, but not its backticks, and it misreads `$((…))` as a subshell."""
        parsed: list[Node] = []
        for c in node.named_children:
            if c.type == "command_substitution" and self.text(c).startswith("$(("):
                self.r.refuse(
                    f"arithmetic in a here-document (the parser misreads it) at line {self.line(c)}"
                )
            elif c.type != "heredoc_content":
                parsed.append(c)
        spans: list[tuple[int, int]] = []  # backtick substitutions the tree missed
        at = node.start_byte
        end = node.end_byte
        skip = iter(sorted((c.start_byte, c.end_byte) for c in parsed))
        nxt = next(skip, None)
        while at < end:
            while nxt is not None and nxt[1] <= at:
                nxt = next(skip, None)
            if nxt is not None and nxt[0] <= at:
                at = nxt[1]
                continue
            b = self.src[at]
            if b == 0x5C:  # a backslash escapes the next character
                at += 2
            elif b == 0x60:
                close = at + 1
                while close < end and self.src[close] != 0x60:
                    close += 2 if self.src[close] == 0x5C else 1
                if close >= end:
                    self.r.refuse(f"an unclosed backtick in a here-document at line {self.line(node)}")
                    return []
                spans.append((at, close + 1))
                inner = self.src[at + 1 : close].decode("utf-8", "replace")
                self.r.script(_backtick_body(inner), self.depth + 1)
                at = close + 1
            else:
                at += 1
        # a substitution inside a backtick span was read with it
        return [c for c in parsed if not any(s <= c.start_byte and c.end_byte <= e for s, e in spans)]

    def substitution(self, node: Node) -> list[Node]:
        """`$(…)` is walked as the tree has it; a backtick body with a backslash in it is
        unescaped and read again, as bash does (`\\`` nests a substitution)."""
        kids = node.children
        if len(kids) >= 2 and kids[0].type == "`" and kids[-1].type == "`":
            body = self.src[kids[0].end_byte : kids[-1].start_byte].decode("utf-8", "replace")
            if "\\" in body:
                self.r.script(_backtick_body(body), self.depth + 1)
                return []
        return list(kids)

    def arithmetic(self, nodes: list[Node]) -> None:
        """Bash evaluates a variable's value inside arithmetic as arithmetic again, and a
        subscript there runs its substitutions (`x='a[$(id)]'; echo $((x))` runs `id`):
        arithmetic on anything but numbers is not whole."""
        stack = list(nodes)
        while stack:
            n = stack.pop()
            if not n.is_named:
                continue
            if n.type == "word" and self.text(n).isdigit():
                continue
            if n.type not in _ARITHMETIC_PURE:
                self.r.refuse(f"arithmetic on a variable (its value can run commands): {self.text(n)}")
                return
            stack.extend(n.children)

    def test(self, node: Node) -> None:
        """`[[ a -eq b ]]` evaluates a and b as arithmetic; `-v` evaluates a subscript."""
        stack = list(node.named_children)
        while stack:
            n = stack.pop()
            op = n.child_by_field_name("operator")
            if op is not None and n.type == "binary_expression" and self.text(op) in ARITHMETIC_TESTS:
                sides = [s for s in (n.child_by_field_name("left"), n.child_by_field_name("right")) if s]
                self.arithmetic(sides)
            if (
                op is not None
                and n.type == "unary_expression"
                and self.text(op) == "-v"
                and "[" in self.text(n)
            ):
                self.r.refuse("[[ -v ]] on a subscript (bash evaluates it)")
            if n.type in ("binary_expression", "unary_expression", "parenthesized_expression"):
                stack.extend(n.named_children)

    def bracket(self, node: Node) -> None:
        """`[ … ]` is the `test` builtin, a simple command: its words are the tree's leaves
        (and its operands are not arithmetic, unlike `[[ … ]]`'s)."""
        words: list[_Word] = []
        stack = list(reversed(node.children))
        while stack:
            n = stack.pop()
            if n.type in _TEST_EXPRESSIONS:
                stack.extend(reversed(n.children))
            else:
                words.append(self.word([n]) if n.is_named else _Word(self.text(n), True))
        self.r.add(tuple(w.text for w in words))
        self.builtin([w.text for w in words], words[1:])

    def expansion(self, node: Node) -> None:
        """`${!x}` and `${x@P}` expand a variable's value again; `${x:a:b}` is arithmetic."""
        kids = node.children
        ops = [self.text(c) for c in kids if not c.is_named]
        body = self.text(node)
        if len(ops) > 1 and ops[1] == "!" and not body.endswith(("*}", "@}", "@]}", "*]}")):
            self.r.refuse(f"an indirect expansion (the value names what to expand): {body}")
        if "@" in ops and "P" in ops[ops.index("@") :]:
            self.r.refuse(f"a prompt expansion (it runs the value's substitutions): {body}")
        if ":" in ops:
            after = kids[[self.text(c) for c in kids].index(":") + 1 :]
            self.arithmetic([c for c in after if c.is_named])

    def gaps(self, node: Node) -> None:
        """Text between a node's parts that the tree has in no node: only blanks and line
        continuations may be there. A line continuation alone joins the parts in bash
        (`r\\⏎m` is `rm`); anything else is text the parser skipped (it drops a word that
        is only `\\ `, which bash passes as a blank)."""
        if node.type in ("string", "heredoc_body") or not node.child_count:
            return
        kids = node.children
        edges = [(node.start_byte, kids[0].start_byte), (kids[-1].end_byte, node.end_byte)]
        pairs = ((a.end_byte, b.start_byte) for a, b in itertools.pairwise(kids))
        for start, end in [*edges, *pairs]:
            self.gap(start, end)

    def gap(self, start: int, end: int) -> None:
        gap = self.src[start:end]
        if not gap:
            return
        bare = gap.replace(b"\\\n", b"")
        line = self.src.count(b"\n", 0, start) + 1
        if bare == b"":
            self.r.refuse(f"a line continuation inside a word at line {line}")
        elif bare.strip(b" \t\n"):
            shown = gap.decode("utf-8", "replace")
            self.r.refuse(f"text the parser skipped at line {line}: {shown!r}")

    def continuations(self) -> None:
        """A line continuation that bash removes where the tree does not: inside double
        quotes or an unquoted here-document (`"$\\⏎(id)"` runs `id`), or between two
        non-blank characters."""
        opaque = _merged(self.opaque)
        quoted = _merged(self.quoted)
        starts = [s for s, _ in opaque]
        qstarts = [s for s, _ in quoted]
        at = self.src.find(b"\\\n")
        while at >= 0:
            run = 0
            while at - run - 1 >= 0 and self.src[at - run - 1] == 0x5C:
                run += 1
            k = bisect.bisect_right(starts, at) - 1
            inside = k >= 0 and opaque[k][0] <= at < opaque[k][1]
            if run % 2 == 0 and not inside:
                q = bisect.bisect_right(qstarts, at) - 1
                in_quotes = q >= 0 and quoted[q][0] <= at < quoted[q][1]
                before = self.src[at - 1] if at > 0 else 0x20
                after = self.src[at + 2] if at + 2 < len(self.src) else 0x20
                joins = before not in _BLANKS and after not in _BLANKS
                if in_quotes or joins:
                    line = self.src.count(b"\n", 0, at) + 1
                    self.r.refuse(f"a line continuation inside a word at line {line}")
                    return
            at = self.src.find(b"\\\n", at + 2)


def _merged(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Byte ranges as a sorted union (a string can hold a substitution holding a string)."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _backtick_body(body: str) -> str:
    """A backtick substitution's text as bash reads it again: a backslash before a
    backslash, a backtick or `$` is removed."""
    out: list[str] = []
    i = 0
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body) and body[i + 1] in "\\`$":
            out.append(body[i + 1])
            i += 2
        else:
            out.append(body[i])
            i += 1
    return "".join(out)
