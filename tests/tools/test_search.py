"""`grep`, `glob` and `ls`: ripgrep's ignore and hidden-file rules, the same answers from ripgrep and
from Python's engine, bounded output with the cut said, the regex subset, deny rules, and the
permission rule's reading of them as reads."""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eukhe.ai.reply import ToolCall
from eukhe.rules.permission import Cfg, Kind, Mode, PermissionState, Policy, Rule, Source, Why
from eukhe.run.permit import Gate
from eukhe.settings.rule_syntax import Parsed, parse, path_globs
from eukhe.tools import BUILTIN, Context, Limits, Result, call
from eukhe.tools.search.glob import Glob
from eukhe.tools.search.grep import Grep
from eukhe.tools.search.subset import refusal

from .helpers import run

RG = shutil.which("rg")
needs_rg = pytest.mark.skipif(RG is None, reason="ripgrep is not installed (apt-get install ripgrep)")


def write(root: Path, files: dict[str, str | bytes]) -> None:
    for name, body in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(body, bytes):
            p.write_bytes(body)
        else:
            p.write_text(body)


def tree(root: Path) -> Path:
    """A project with every rule the walk reads: ignore files at three levels and of three kinds,
    a negation, an anchored pattern, a folder pattern, hidden files and folders, binary files (a
    NUL early, and one far in), symlinks, a nested repository, and a .gitignore above the root."""
    write(
        root,
        {
            ".gitignore": "build/\n*.log\n!keep.log\n/top.txt\nnode_modules\n",
            "above-the-root.txt": "needle in a file the root's parent ignores\n",
            "proj/.gitignore": "*.tmp\n/only-here.txt\nsrc/deep/**/gone.py\n",
            "proj/.ignore": "ignored-by-dot-ignore.txt\n",
            "proj/.rgignore": "!*.tmp\nrgignored.txt\n",
            "proj/src/main.py": "def needle():\n    return 1\n\nneedle = 2\n",
            "proj/src/util.py": "import os\n# needle here\nx = 'NEEDLE'\n",
            "proj/src/keep.log": "needle kept\n",
            "proj/src/drop.log": "needle dropped\n",
            "proj/src/scratch.tmp": "needle un-ignored by .rgignore\n",
            "proj/src/rgignored.txt": "needle\n",
            "proj/ignored-by-dot-ignore.txt": "needle\n",
            "proj/only-here.txt": "needle at the top, anchored\n",
            "proj/src/only-here.txt": "needle below, not anchored away\n",
            "proj/top.txt": "needle: the root's parent's /top.txt is anchored there, not here\n",
            "proj/build/out.py": "needle in build\n",
            "proj/src/build/x.py": "needle in a nested build\n",
            "proj/node_modules/pkg/index.js": "needle\n",
            "proj/.hidden/secret.py": "needle hidden\n",
            "proj/src/.env": "TOKEN=needle\n",
            "proj/src/deep/a/b/gone.py": "needle\n",
            "proj/src/deep/a/b/kept.py": "needle\n",
            "proj/src/bin.dat": b"needle\0binary\n",
            "proj/src/late.dat": b"needle\n" + b"x" * 70_000 + b"\0" + b"\nneedle after\n",
            "proj/sub/.git/HEAD": "ref: refs/heads/main\n",
            "proj/sub/.gitignore": "*.md\n",
            "proj/sub/readme.md": "needle\n",
            "proj/sub/code.rs": "fn needle() {}\n",
            "proj/src/ünïcode.txt": "naïve needle — ünïcode\n",
            "proj/src/crlf.txt": "needle\r\nnext\r\n",
        },
    )
    (root / "proj" / "src" / "link.py").symlink_to("main.py")
    (root / "proj" / "linked").symlink_to("src")
    return root / "proj"


def context(cwd: Path, **limits: Any) -> Context:
    return Context(cwd, limits=Limits(**limits))


def both(cwd: Path, name: str, args: dict[str, Any], **limits: Any) -> tuple[Result, Result]:
    """The call with ripgrep and with Python's engine."""
    tool = {"grep": Grep, "glob": Glob}[name]
    got = []
    for engine in ("rg", "python"):
        tools = {name: tool(engine)}
        got.append(run(call(tools, name, args, context(cwd, **limits))))
    return got[0], got[1]


def py(cwd: Path, name: str, args: dict[str, Any], **limits: Any) -> Result:
    tools = {"grep": Grep("python"), "glob": Glob("python"), "ls": BUILTIN["ls"]}
    return run(call(tools, name, args, context(cwd, **limits)))


# ---------------------------------------------------------------- what a search sees


def test_grep_sees_what_ripgrep_sees_and_shows_path_line_text(tmp_path: Path) -> None:
    proj = tree(tmp_path)
    r = py(proj, "grep", {"pattern": "needle"})
    assert not r.is_error, r.content
    shown = r.content.splitlines()
    assert shown == [
        "src/crlf.txt:1: needle",
        "src/deep/a/b/kept.py:1: needle",
        "src/keep.log:1: needle kept",
        "src/late.dat:1: needle",  # a NUL past the first 64 KiB: what comes before it is searched
        "src/main.py:1: def needle():",
        "src/main.py:4: needle = 2",
        "src/only-here.txt:1: needle below, not anchored away",
        "src/scratch.tmp:1: needle un-ignored by .rgignore",
        "src/util.py:2: # needle here",
        "src/ünïcode.txt:1: naïve needle — ünïcode",
        "sub/code.rs:1: fn needle() {}",
        "top.txt:1: needle: the root's parent's /top.txt is anchored there, not here",
    ]


@needs_rg
def test_ripgrep_and_python_give_the_same_answers_on_every_rule(tmp_path: Path) -> None:
    proj = tree(tmp_path)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("grep", {"pattern": "needle"}),
        ("grep", {"pattern": "(?i)NEEDLE", "context": 1}),
        ("grep", {"pattern": r"^\s*return \d+$"}),
        ("grep", {"pattern": r"needle\b", "glob": "*.py"}),
        ("grep", {"pattern": "needle", "glob": "src/**"}),
        ("grep", {"pattern": "needle", "glob": "*.log"}),
        ("grep", {"pattern": "needle", "path": "src/.env"}),
        ("grep", {"pattern": "needle", "path": ".hidden"}),
        ("grep", {"pattern": "needle", "path": "build"}),
        ("grep", {"pattern": "na.ve"}),
        ("grep", {"pattern": "needle$"}),
        ("grep", {"pattern": "[a-c]{2,}|x = '[A-Z]+'"}),
        ("grep", {"pattern": "needle", "limit": 3}),
        ("grep", {"pattern": "no such text anywhere"}),
        ("grep", {"pattern": "(unclosed"}),
        ("glob", {"pattern": "*.py"}),
        ("glob", {"pattern": "*"}),
        ("glob", {"pattern": "src/*.txt"}),
        ("glob", {"pattern": "**/b/*"}),
        ("glob", {"pattern": "*.md", "path": "sub"}),
    ]
    for name, args in calls:
        rg, pyr = both(proj, name, args)
        assert rg == pyr, (name, args, rg.content, pyr.content)


QUIET = [HealthCheck.function_scoped_fixture]


@needs_rg
@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=QUIET)
@given(seed=st.integers(0, 2**32 - 1))
def test_the_two_engines_agree_on_random_trees(tmp_path: Path, seed: int) -> None:
    rnd = random.Random(seed)
    root = tmp_path / str(seed)
    names = ["a", "b", "c.py", "d.txt", ".e", "f.log", "g"]
    words = ["alpha", "beta", "gamma", "delta"]
    patterns = ["*.py", "a", "/b", "!c.py", "*.log", "g/", ".e", "a/**/d.txt", "!d.txt"]
    for _ in range(rnd.randint(5, 30)):
        depth = rnd.randint(1, 4)
        rel = Path(*(rnd.choice(names) for _ in range(depth)))
        p = root / rel
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            if p.is_dir():
                continue
            if rnd.random() < 0.2:
                p = p.parent / ".gitignore" if rnd.random() < 0.7 else p.parent / ".ignore"
                p.write_text("\n".join(rnd.sample(patterns, rnd.randint(1, 3))) + "\n")
            else:
                lines = [" ".join(rnd.choices(words, k=3)) for _ in range(rnd.randint(1, 4))]
                body = "\n".join(lines).encode()
                p.write_bytes(body + (b"\0" if rnd.random() < 0.1 else b""))
        except (NotADirectoryError, FileExistsError, IsADirectoryError):
            continue
    if not root.exists():
        return
    for name, args in [
        ("grep", {"pattern": rnd.choice(words)}),
        ("grep", {"pattern": f"{rnd.choice(words)} \\w+", "context": 1}),
        ("glob", {"pattern": rnd.choice(["*", "*.py", "a/**", "*.txt"])}),
    ]:
        rg, pyr = both(root, name, args)
        assert rg == pyr, (seed, name, args, rg.content, pyr.content)


def test_glob_lists_newest_first(tmp_path: Path) -> None:
    write(tmp_path, {"old.py": "", "mid.py": "", "new.py": "", "skip.txt": ""})
    for i, name in enumerate(("old.py", "mid.py", "new.py")):
        os.utime(tmp_path / name, (1_000_000 + i, 1_000_000 + i))
    r = py(tmp_path, "glob", {"pattern": "*.py"})
    assert r.content.splitlines() == ["new.py", "mid.py", "old.py"]


def test_ls_lists_a_folder_without_its_hidden_and_ignored_entries_and_counts_them(tmp_path: Path) -> None:
    proj = tree(tmp_path)
    r = py(proj, "ls", {})
    # hidden: .gitignore, .ignore, .rgignore, .hidden; ignored: build, node_modules, /only-here.txt and
    # the .ignore file's one
    assert r.content.splitlines() == [
        "linked -> src",
        "src/",
        "sub/",
        "top.txt  65 B",
        "[8 hidden or ignored entries are not shown]",
    ], r.content
    assert py(proj, "ls", {"path": "build"}).content == "out.py  16 B"  # a folder named is listed
    r = py(proj, "ls", {"path": "src/main.py"})
    assert r.is_error and r.content == "'src/main.py' is not a folder; ls lists folders (read reads a file)"
    r = py(proj, "ls", {"path": "nope"})
    assert r.is_error and r.content == "'nope' cannot be listed: no such file or directory"


# ---------------------------------------------------------------- bounds


def test_ten_thousand_files_give_bounded_output_with_the_cut_said(tmp_path: Path) -> None:
    for d in range(100):
        folder = tmp_path / f"d{d:02}"
        folder.mkdir()
        for f in range(100):
            (folder / f"f{f:02}.txt").write_text(f"needle {d} {f}\n" + "hay\n" * 5)
    write(tmp_path, {".gitignore": "d9*/\n"})
    engines = ["python", *(["rg"] if RG else [])]
    for engine in engines:
        tools = {"grep": Grep(engine), "glob": Glob(engine)}
        r = run(call(tools, "grep", {"pattern": "needle"}, context(tmp_path)))
        lines = r.content.splitlines()
        assert len(lines) == 101 and lines[0] == "d00/f00.txt:1: needle 0 0", engine
        assert lines[-1].startswith("[the first 100 matching lines are shown; more match"), lines[-1]
        r = run(call(tools, "grep", {"pattern": "needle", "limit": 1000, "context": 5}, context(tmp_path)))
        assert len(r.content) <= 50_000 + 200
        assert "[output capped at 50,000 characters" in r.content
        r = run(call(tools, "glob", {"pattern": "*.txt"}, context(tmp_path)))
        lines = r.content.splitlines()
        assert len(lines) == 501, (engine, lines[-1])
        assert "[the newest 500 of 9,000 files are shown" in lines[-1], (engine, lines[-1])
        assert not any(line.startswith("d9") for line in lines)
        r = run(call(tools, "glob", {"pattern": "*.txt"}, context(tmp_path, search_max_files=1000)))
        assert "[only the first 1,000 files were looked at" in r.content


def test_a_long_line_is_cut_and_said(tmp_path: Path) -> None:
    write(tmp_path, {"long.txt": "needle " + "x" * 10_000 + "\n"})
    r = py(tmp_path, "grep", {"pattern": "needle"})
    assert r.content.endswith(" [… 10,007 characters]") and len(r.content) < 600


def test_a_search_stops_at_its_deadline_and_at_the_runs_abort_saying_so(tmp_path: Path) -> None:
    write(tmp_path, {f"f{i}.txt": "needle\n" for i in range(50)})
    r = py(tmp_path, "grep", {"pattern": "needle"}, search_timeout=0.0)
    assert "[grep stopped after 0 s: what it found by then is shown]" in r.content
    ctx = context(tmp_path)
    ctx.cancel.set()
    r = run(call({"grep": Grep("python")}, "grep", {"pattern": "needle"}, ctx))
    assert r.is_error and "aborted" in r.content  # `call` refuses before it starts

    async def abort_midway(engine: str) -> Result:
        """The abort comes as the first file is read: the walk's thread waits a little there,
        ripgrep's reader yields at each line, so the abort ends the search before its end."""
        c = context(tmp_path)
        loop = asyncio.get_running_loop()

        def first(path: Path) -> bool:
            if not c.cancel.is_set():
                loop.call_soon_threadsafe(c.cancel.set)
                if engine == "python":  # in the walk's thread: the race sees the abort meanwhile
                    time.sleep(0.5)
            return True

        c.readable = first
        return await Grep(engine).run({"pattern": "needle"}, c)

    for engine in ["python", *(["rg"] if RG else [])]:
        r = asyncio.run(abort_midway(engine))
        assert "[grep was aborted: what it found by then is shown]" in r.content, (engine, r.content)


# ---------------------------------------------------------------- the pattern


@pytest.mark.parametrize(
    "pattern",
    [
        "(?=x)",
        "(?<!x)y",
        r"(a)\1",
        r"x\z",
        r"\p{L}",
        "[[:alpha:]]",
        "[a[b]",
        "[a&&b]",
        "a{,3}",
        "{",
        "a*+",
        "(?>a)",
        "(?u)a",
        r"a\nb",
        "[abc",
    ],
)
def test_a_pattern_outside_the_shared_subset_is_refused_with_why(tmp_path: Path, pattern: str) -> None:
    assert refusal(pattern) is not None
    r = py(tmp_path, "grep", {"pattern": pattern})
    assert r.is_error and r.content.startswith(f"the pattern {pattern!r} cannot be used: ")


@pytest.mark.parametrize(
    "pattern",
    ["abc", r"\bword\b", "a{2}", "a{2,}", "a{2,5}?", "(?i)x", "(?P<n>x)|y", "[]a]", "[^]a-z]", r"\{", "^$"],
)
def test_a_pattern_in_the_subset_is_taken(pattern: str) -> None:
    assert refusal(pattern) is None


# ---------------------------------------------------------------- the permission rule


def gate(tmp_path: Path, *rules: str, policy: Policy = Policy.UNTRUSTED) -> Gate:
    """A headless gate on the project `tmp_path` with rules written as `deny Read(/secrets/**)`."""
    kinds = {"deny": Kind.DENY, "ask": Kind.ASK, "allow": Kind.ALLOW}
    root = os.path.realpath(tmp_path)
    made = []
    for text in rules:
        kind, _, body = text.partition(" ")
        parsed = parse(body)
        assert not isinstance(parsed, str), parsed
        if parsed.spec is None or parsed.tool == "Bash":
            made.append(Rule(kinds[kind], parsed.tool, parsed.spec, Source.PROJECT))
        else:
            for glob in path_globs(parsed.spec, root, root, root):
                made.append(Rule(kinds[kind], parsed.tool, glob, Source.PROJECT))
    cfg = Cfg(Mode.WORKSPACE_WRITE, policy, person=False, sandbox=True, rules=tuple(made))
    return Gate(PermissionState(cfg), tmp_path, tmp_path / "home")


def test_the_search_tools_are_reads_that_the_untrusted_policy_lets_run(tmp_path: Path) -> None:
    g = gate(tmp_path)
    for name in ("grep", "glob", "ls"):
        d = run_permit(g, ToolCall("1", name, "", {"pattern": "x", "path": "."} if name != "ls" else {}))
        assert d == (True, Why.READS.value), name


def test_a_rule_naming_the_tool_or_a_read_of_its_folder_denies_it(tmp_path: Path) -> None:
    (tmp_path / "secrets").mkdir()
    g = gate(tmp_path, "deny Grep", "deny Read(/secrets/**)")
    assert run_permit(g, ToolCall("1", "grep", "", {"pattern": "x"}))[1] == Why.DENY_RULE.value
    assert run_permit(g, ToolCall("2", "glob", "", {"pattern": "*"}))[0]
    assert run_permit(g, ToolCall("3", "ls", "", {"path": "secrets/x"}))[1] == Why.DENY_RULE.value


def test_a_search_of_a_folder_skips_the_files_a_deny_or_ask_rule_keeps_from_read(tmp_path: Path) -> None:
    """The attack: the model cannot `read` secrets/token (a deny rule), so it greps the project."""
    write(
        tmp_path,
        {"secrets/token": "TOKEN=sk-live-123\n", "asked/key": "TOKEN=sk-asked\n", "app.py": "TOKEN=None\n"},
    )
    g = gate(tmp_path, "deny Read(/secrets/**)", "ask Read(/asked/**)")
    assert g.readable(tmp_path / "app.py") and not g.readable(tmp_path / "secrets" / "token")
    engines = ["python", *(["rg"] if RG else [])]

    def ruled() -> Context:
        c = context(tmp_path)
        c.readable = g.readable
        return c

    for engine in engines:
        r = run(call({"grep": Grep(engine)}, "grep", {"pattern": "TOKEN"}, ruled()))
        assert r.content == "app.py:1: TOKEN=None", (engine, r.content)
        r = run(call({"glob": Glob(engine)}, "glob", {"pattern": "*"}, ruled()))
        assert r.content == "app.py", (engine, r.content)
    assert "token" not in run(call(BUILTIN, "ls", {"path": "secrets"}, ruled())).content


def run_permit(g: Gate, c: ToolCall) -> tuple[bool, str]:
    p = asyncio.run(g.permit(c))
    return p.runs, p.why


def test_rules_name_the_search_tools_as_claude_code_does() -> None:
    assert parse("grep") == "rules name tools as Claude Code does: Grep, not grep"
    assert parse("Glob") == Parsed("Glob", None)
