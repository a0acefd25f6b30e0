"""Claude Code's permission rule syntax, read into the permission model's terms.

A rule is `Tool` (every call of the tool) or `Tool(specifier)`. `Bash(npm test)` is the
command exactly, `Bash(npm run *)` with `*` for any text, `Bash(git diff:*)` the legacy
prefix form; `Bash()` and `Bash(*)` are `Bash`, as Claude Code reads them. `Read(glob)`
and `Edit(glob)` name paths; `Write(glob)` is `Edit(glob)`. `WebFetch(domain:HOST)` names
the host a fetch goes to (`domain:*.HOST` any name below it: `rules.address`). Any other tool
is named bare (`WebFetch`, `mcp__server__tool`): a specifier on it would match nothing here,
so it is refused rather than ignored. `\\(` and `\\)` in a specifier are parentheses.

Paths, as Claude Code reads them (its permission docs, "Read & Edit": "Read & Edit rules
both follow the gitignore specification with four distinct pattern types": `//path` an
absolute path from the filesystem root, `~/path` from the home folder, `/path` relative
to the settings file, `path` or `./path` relative to the current folder; docs.anthropic.com
/en/docs/claude-code/iam, now code.claude.com/docs/en/permissions). Its code roots `/path`
at the folder of the settings file's project (`getSettingsRootPathForSource`: a project's
`.claude/settings.json` at the project, the user's at `~/.claude`, the folder the user's
settings file is in), so here: a project's `/path` is under the project, the home
settings' `/path` under the eukhe home. The rest is gitignore's reading (Claude Code
matches with the `ignore` library, a `/**` at the end taken off first): `*` is any text
but `/`, `?` one character but `/`, `**` between slashes any number of folders (none
too); a pattern with no `/` but at its end matches at any depth below its folder; a
pattern that matches a folder matches what is in it. The model's globs (`**` any text,
`*` any text but `/`) say each of these with a few absolute patterns (`path_globs`).

What gitignore has and this does not read is refused, never taken literally: `!`
negation, `\\` escapes, `[...]` classes, `..` (Claude Code never matches a path outside
the rule's folder), `~user`.

Pure: no I/O. The caller gives the folders the anchors stand for, resolved.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from eukhe.rules import address
from eukhe.rules.permission import rule_tool

NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
"""A tool's name in a rule: `Bash`, `WebFetch`, `mcp__server__tool`."""

PATH_TOOLS = ("Read", "Edit")
CLAUDE_NAMES = {
    "bash": "Bash",
    "read": "Read",
    "grep": "Grep",
    "glob": "Glob",
    "ls": "LS",
    "write": "Write",
    "edit": "Edit",
    "ipython": "IPython",
    "web_fetch": "WebFetch",
    "job_output": "BashOutput",
    "job_kill": "KillShell",
}
"""eukhe's own tool names as a rule spells them (`rules.permission.RULE_TOOLS` reads `Write` as `Edit`)."""

MAX_FOLDERS = 3
"""`**` in one path rule at most: each reads as two model globs (none or some folders)."""

EXAMPLE = (
    "such as Bash(npm test), Bash(npm run *), Read(//etc/**), Edit(/src/**), WebFetch(domain:example.com) "
    "or WebFetch"
)


@dataclass(frozen=True)
class Parsed:
    """A rule as written: its tool as the model reads it (`Write` is `Edit`) and its
    specifier (None: every call of the tool)."""

    tool: str
    spec: str | None


def parse(text: str) -> Parsed | str:
    """The rule `text` says, or what is wrong with it (a phrase for an error)."""
    t = text.strip()
    if not t:
        return "it is empty"
    open_at = t.find("(")
    if open_at < 0:
        if ")" in t:
            return 'it has a ")" and no "("'
        name, spec = t, None
    else:
        if not t.endswith(")"):
            return f'"(" after {t[:open_at]!r} is not closed by a ")" at the end'
        name, inner = t[:open_at], t[open_at + 1 : -1]
        spec = inner.replace("\\(", "(").replace("\\)", ")").strip()
        if spec in ("", "*"):
            spec = None  # Claude Code: `Tool()` and `Tool(*)` are the bare tool
    if name in CLAUDE_NAMES:
        return f"rules name tools as Claude Code does: {CLAUDE_NAMES[name]}, not {name}"
    if not NAME.fullmatch(name):
        return f'{name!r} is not a tool name (a letter, then letters, digits, "_" or "-")'
    tool = rule_tool(name)
    if spec is None:
        return Parsed(tool, None)
    if tool == "Bash":
        return Parsed(tool, spec)
    if tool in PATH_TOOLS:
        wrong = path_wrong(spec)
        return wrong if wrong else Parsed(tool, spec)
    if tool == address.TOOL:
        wrong = address.domain_wrong(spec)
        return wrong if wrong else Parsed(tool, address.DOMAIN + address.host(spec[len(address.DOMAIN) :]))
    return (
        f"only Bash, Read, Edit, Write and WebFetch rules take a (pattern); write {name} alone for every "
        "call of it"
    )


def wrong(text: object) -> str:
    """What is wrong with a rule ("" when nothing)."""
    if not isinstance(text, str):
        return "a rule is a string"
    got = parse(text)
    return got if isinstance(got, str) else ""


def path_wrong(spec: str) -> str:
    """What in a path specifier this reading does not take ("" when nothing)."""
    if spec.startswith("!"):
        return 'a path rule cannot start with "!": gitignore\'s negation is not read; write an allow rule'
    if "\\" in spec:
        return 'a path rule cannot hold "\\"'
    if "[" in spec or "]" in spec:
        return "character classes ([...]) are not read in a path rule; use * or ?"
    if spec.startswith("~") and spec != "~" and not spec.startswith("~/"):
        return f"{spec.split('/')[0]!r} is not read: write ~/ for your home folder"
    if ".." in spec.split("/"):
        return '".." is not read in a path rule: name the folder from //, ~/ or /'
    if spec.count("**") > MAX_FOLDERS:
        return f"a path rule holds ** {MAX_FOLDERS} times at most"
    return ""


def path_globs(spec: str, root: str, cwd: str, user_home: str) -> tuple[str, ...]:
    """A path specifier as the model's absolute globs. `root`: the folder `/path` is under
    (the settings file's project, or the eukhe home for the home's file); `cwd`: the
    folder a bare `path` is under; `user_home`: what `~/` is. The folders are resolved."""
    anchored = True
    if spec.startswith("//"):
        base, rel = "/", spec[2:]
    elif spec == "~" or spec.startswith("~/"):
        base, rel = user_home, spec[2:]
    elif spec.startswith("/"):
        base, rel = root, spec[1:]
    else:
        rel = spec
        while rel.startswith("./"):
            rel = rel[2:]
        base = cwd
        anchored = "/" in rel.rstrip("/")  # gitignore: a slash before the end anchors it
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if parts and parts[-1] == "**":
        parts.pop()  # `dir/**`: the folder and what is in it, as Claude Code takes it off
    tail = "/".join(parts)
    top = base.rstrip("/")
    heads = [f"{top}/{tail}" if tail else (top or "/")]
    if not anchored and tail:
        heads.append(f"{top}/**/{tail}")  # at any depth below its folder
    out: list[str] = []
    for head in heads:
        for g in _folders(head):
            out += [g, g.rstrip("/") + "/**"]  # a folder it matches: what is in it too
    return tuple(dict.fromkeys(out))


def _folders(glob: str) -> list[str]:
    """gitignore's `/**/` is any number of folders, none too; the model's `**` is any
    text, so `a/**/b` needs `a/b` beside it: every choice of each."""
    head, sep, rest = glob.partition("/**/")
    if not sep:
        return [glob]
    return [f"{head}/**/{r}" for r in _folders(rest)] + [f"{head}/{r}" for r in _folders(rest)]
