"""The README and every page under docs/ stay true: each path they name exists, each `eukhe`
command they name is a command of the command line and each option named with it one of
that command's, each link between pages leads to a file, and the README fits on a screen
or two (at most 150 lines) and links every page.

Commands and options are read from code only: inline code spans (which may run over a line
break) and fenced blocks, never from prose. Each false one is reported with its page and
line."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer.main

from eukhe.cli.entry import AGENT_OPTIONS
from eukhe.cli.main import app
from eukhe.ui.commands import COMMANDS

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
README_LINES = 150

# A path of the repository: `src/...`, `tests/...`, `bench/...`, `docs/...`, anywhere in a page.
# A glob or a placeholder (`src/**/*.ts`, `tests/<area>/`) names no one path and is left alone.
PATH = re.compile(r"(?<![\w./~$-])((?:src|tests|bench|docs)/[\w./*<>{}-]*)")
PLACEHOLDER = re.compile(r"[*<>{}]")
# A rule or its laws by their short name, in code: `rules/retry.py` is src/eukhe/rules/retry.py.
SHORT = re.compile(r"(?<![\w./-])((?:rules|laws)/\w+\.py)\b")
SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
AGENT_VALUELESS = {"-c", "--continue"}


@dataclass(frozen=True)
class Code:
    """One piece of code on a page: an inline span or a fenced block's line."""

    line: int
    text: str
    fenced: bool


def split(text: str) -> tuple[list[Code], str]:
    """The page's code, and its prose: the text with every fenced block and code span
    blanked (line breaks kept, so that a line number still counts from the top)."""
    code: list[Code] = []
    lines = text.split("\n")
    prose_lines: list[str] = []
    fence: str | None = None
    pending = ""
    for n, line in enumerate(lines, 1):
        stripped = line.lstrip()
        if fence is None and stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
            prose_lines.append("")
            continue
        if fence is not None:
            if stripped.startswith(fence):
                fence = None
            elif line.endswith("\\"):  # a shell line continued
                pending += line[:-1] + " "
            else:
                code.append(Code(n, pending + line, fenced=True))
                pending = ""
            prose_lines.append("")
            continue
        prose_lines.append(line)
    prose = "\n".join(prose_lines)

    def blank(m: re.Match[str]) -> str:
        inner = m.group(2)
        if "\n\n" in inner:  # a span never crosses a paragraph: these are two lone backticks
            return m.group(0)
        line = prose.count("\n", 0, m.start()) + 1
        code.append(Code(line, " ".join(inner.split()), fenced=False))
        return re.sub(r"[^\n]", " ", m.group(0))

    return code, SPAN.sub(blank, prose)


def words(text: str) -> list[str]:
    try:
        return shlex.split(text, comments=True)
    except ValueError:  # an unclosed quote in a span: read it as words
        return text.split()


def invocation(piece: Code) -> list[str] | None:
    """The words after `eukhe` when the piece runs eukhe (`eukhe ...`, `.venv/bin/eukhe ...`,
    after `VAR=value` settings on a fenced line); None when it does not."""
    got = words(piece.text)
    while piece.fenced and got and re.fullmatch(r"[A-Za-z_]\w*=\S*", got[0]):
        got.pop(0)
    if not got or not (got[0] == "eukhe" or got[0].endswith("/eukhe")):
        return None
    return got[1:]


def command_tree() -> Any:
    """The command line as click sees it (typer's own copy of click: read by its attributes)."""
    return typer.main.get_command(app)


def options_of(command: Any) -> dict[str, Any]:
    return {o: p for p in command.params for o in (*p.opts, *p.secondary_opts) if o.startswith("-")}


def takes_value(option: Any) -> bool:
    return hasattr(option, "is_flag") and not (option.is_flag or option.count)


def check_command(args: list[str], root: Any) -> list[str]:
    """What is false in `eukhe ARGS`: a command that is none, an option its command lacks."""
    command, path, wrong = root, ["eukhe"], []
    i = 0
    while i < len(args):
        word = args[i].strip("[]")
        i += 1
        if word == "--":  # what follows is another program's command line
            break
        if word.startswith("-") and word != "-":
            name = word.partition("=")[0]
            if command is root:  # `eukhe --model M`: the interactive agent's options
                if name not in AGENT_OPTIONS and name != "--help":
                    wrong.append(f"the interactive agent (`eukhe`) has no option {name}")
                if name not in AGENT_VALUELESS and "=" not in word:
                    i += 1  # its value (an unknown one's too: one complaint is enough)
                continue
            known = options_of(command)
            if name == "--help":
                continue
            if name not in known:
                wrong.append(f"`{' '.join(path)}` has no option {name}")
                continue
            option = known[name]
            if takes_value(option) and "=" not in word:
                i += option.nargs
            continue
        if hasattr(command, "commands"):  # a group: the word names one of its commands
            sub = command.commands.get(word)
            if sub is None:
                wrong.append(f"`{' '.join(path)}` has no command {word!r}")
                break
            command, path = sub, [*path, word]
    return wrong


@dataclass(frozen=True)
class Wrong:
    page: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.page}:{self.line}: {self.what}"


def check_page(page: Path, root: Any) -> list[Wrong]:
    """Everything false on one page, by line."""
    text = page.read_text()
    name = str(page.relative_to(ROOT)) if page.is_relative_to(ROOT) else page.name
    code, prose = split(text)
    wrong: list[Wrong] = []
    for n, line in enumerate(text.split("\n"), 1):
        for m in PATH.finditer(line):
            path = m.group(1).rstrip(".,;:")
            if not PLACEHOLDER.search(path) and not (ROOT / path).exists():
                wrong.append(Wrong(name, n, f"{path}: no such file or folder"))
    for piece in code:
        for m in SHORT.finditer(piece.text):
            if not (ROOT / "src" / "eukhe" / m.group(1)).exists():
                wrong.append(Wrong(name, piece.line, f"{m.group(1)}: no such module in src/eukhe/"))
        args = invocation(piece)
        if args is not None:
            for what in check_command(args, root):
                wrong.append(Wrong(name, piece.line, f"`{piece.text}`: {what}"))
    for m in LINK.finditer(prose):
        target = m.group(1)
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # a URL, or a place on this page
        line = prose.count("\n", 0, m.start()) + 1
        if not (page.parent / target.partition("#")[0]).exists():
            wrong.append(Wrong(name, line, f"the link to {target} leads nowhere"))
    return sorted(wrong, key=lambda w: w.line)


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_path_command_option_and_link_a_page_names_is_true(page: Path) -> None:
    wrong = check_page(page, command_tree())
    assert wrong == [], "\n".join(map(str, wrong))


def test_the_readme_fits_on_a_screen_or_two_and_links_every_page() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= README_LINES, f"README.md: {len(text.splitlines())} lines"
    linked = {(ROOT / t.partition("#")[0]).resolve() for t in LINK.findall(split(text)[1])}
    unlinked = [str(p.relative_to(ROOT)) for p in PAGES[1:] if p.resolve() not in linked]
    assert unlinked == [], f"README.md links no row to {unlinked}"


def test_the_readme_has_the_two_commands_of_a_fresh_machine() -> None:
    code, _ = split(README.read_text())
    make = [p.text.split("#")[0].strip() for p in code if p.fenced and p.text.startswith("make ")]
    assert make == ["make demo", "make test"]


def test_the_agent_page_names_every_command_and_the_root_help_every_option_that_opens_it() -> None:
    code, _ = split((ROOT / "docs" / "agent.md").read_text())
    named = {m.group(1) for c in code for m in re.finditer(r"^/([a-z]+)", c.text)}
    assert sorted(set(COMMANDS) - named) == [], "docs/agent.md names no such command"
    shown = " ".join((typer.main.get_command(app).help or "").split())
    assert [o for o in AGENT_OPTIONS if not re.search(rf"(?<![\w-]){o}(?![\w-])", shown)] == [], shown


def test_the_checker_catches_what_is_false(tmp_path: Path) -> None:
    """Each kind of falsehood on a page of its own, and each is reported on its line."""
    (tmp_path / "events.md").write_text("# Events\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# A page\n"
        "\n"
        "`eukhe run --model M --no-such-flag` and `eukhe sesion show ID`, and\n"
        "`eukhe --sesion ID`; the file `src/eukhe/gone.py` and `rules/gone.py`.\n"
        "\n"
        "```sh\n"
        "OPENAI_API_KEY=... .venv/bin/eukhe chat status --jsn   # a comment: --not-checked\n"
        "eukhe mcp add time -- uvx mcp-server-time --any-flag\n"
        "eukhe session fork SESSION [--at RUN]\n"
        "```\n"
        "\n"
        "A [link](nowhere.md) and [one](events.md), a glob `src/**/*.ts`, `eukhe laws --area\n"
        "mcp --jobs 2`.\n"
    )
    wrong = check_page(page, command_tree())
    name = "page.md"
    assert [str(w) for w in wrong] == [
        f"{name}:3: `eukhe run --model M --no-such-flag`: `eukhe run` has no option --no-such-flag",
        f"{name}:3: `eukhe sesion show ID`: `eukhe` has no command 'sesion'",
        f"{name}:4: src/eukhe/gone.py: no such file or folder",
        f"{name}:4: `eukhe --sesion ID`: the interactive agent (`eukhe`) has no option --sesion",
        f"{name}:4: rules/gone.py: no such module in src/eukhe/",
        f"{name}:7: `OPENAI_API_KEY=... .venv/bin/eukhe chat status --jsn   # a comment: --not-checked`: "
        "`eukhe chat status` has no option --jsn",
        f"{name}:12: the link to nowhere.md leads nowhere",
    ]
