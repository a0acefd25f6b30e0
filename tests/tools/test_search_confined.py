"""`grep` and `glob` decide on what they open and read only through it (issue 40, item 3): the
root opened and decided on, the walk by descriptors, ripgrep in a sandbox that shows it the
root alone, a link flipped while they run leading nowhere, the places no tool reaches beneath
an allowed root skipped, and a file holding a secret value never searched, with either engine."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from eukhe.rules.access import Cfg, Kind, Mode, Policy, Rule, Source
from eukhe.rules.confine import Act
from eukhe.rules.permission import PermissionState
from eukhe.run.permit import Gate
from eukhe.tools import Context, Limits, Result, call
from eukhe.tools.search import confined, engines
from eukhe.tools.search.engines import Pick, Root, Search
from eukhe.tools.search.glob import Glob
from eukhe.tools.search.grep import Grep

from .helpers import run

RG = shutil.which("rg")
BWRAP = confined.bwrap()
ENGINES = ["python", *(["rg"] if RG else [])]
needs_box = pytest.mark.skipif(RG is None or BWRAP is None, reason="ripgrep or bubblewrap is not installed")


def tools(engine: str) -> dict[str, Any]:
    return {"grep": Grep(engine), "glob": Glob(engine)}


def context(cwd: Path, **kw: Any) -> Context:
    return Context(cwd, limits=Limits(search_timeout=20), **kw)


# ---------------------------------------------------------------- the root


@pytest.mark.parametrize("engine", ENGINES)
def test_the_root_is_decided_on_what_is_opened_not_its_name(tmp_path: Path, engine: str) -> None:
    """The environment, through its name, a link to it, a descriptor's name, and /proc itself:
    refused, saying why; nothing of the environment comes back."""
    (tmp_path / "env").symlink_to("/proc/self/environ")
    r, w = os.pipe()
    try:
        for path, why in [
            ("/proc/self/environ", "a process's memory or environment"),
            ("env", "a process's memory or environment"),
            ("/proc", "kernel pseudo-files"),
            ("/sys", "kernel pseudo-files"),
            (f"/dev/fd/{r}", "not a file anyone decided on"),
        ]:
            got = run(call(tools(engine), "grep", {"pattern": "PATH=", "path": path}, context(tmp_path)))
            assert got.is_error and got.content.startswith("not searched: "), (path, got.content)
            assert why in got.content and "PATH=" not in got.content.replace("'PATH='", ""), (
                path,
                got.content,
            )
    finally:
        os.close(r)
        os.close(w)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_file_root_is_searched_through_the_descriptor_decided_on(tmp_path: Path, engine: str) -> None:
    (tmp_path / "a.txt").write_text("one needle\ntwo\nthree needle\n")
    got = run(
        call(tools(engine), "grep", {"pattern": "needle", "path": "a.txt", "context": 1}, context(tmp_path))
    )
    assert got.content == "a.txt:1: one needle\na.txt-2- two\na.txt:3: three needle", got.content
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = run(call(tools(engine), "grep", {"pattern": "x", "path": "fifo"}, context(tmp_path)))
    assert (
        got.is_error
        and got.content == "'fifo' is a FIFO (named pipe); grep searches regular files and folders"
    )
    got = run(call(tools(engine), "glob", {"pattern": "*", "path": "a.txt"}, context(tmp_path)))
    assert got.is_error and got.content == "'a.txt' is not a folder; glob searches folders"


# ---------------------------------------------------------------- the race


def flipper(proj: Path, outside: Path, stop: threading.Event) -> threading.Thread:
    """A thread that flips `proj/a` between a real folder and a link to `outside`, by renames."""
    real, link = proj / ".a.dir", proj / ".a.link"
    link.symlink_to(outside)

    def flip() -> None:
        while not stop.is_set():
            try:
                os.rename(proj / "a", real)
                os.rename(link, proj / "a")
                os.rename(proj / "a", link)
                os.rename(real, proj / "a")
            except OSError:
                pass

    return threading.Thread(target=flip, daemon=True)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_link_flipped_while_grep_and_glob_run_leads_nowhere(tmp_path: Path, engine: str) -> None:
    proj, outside = tmp_path / "proj", tmp_path / "elsewhere"
    (proj / "a").mkdir(parents=True)
    outside.mkdir()
    (proj / "a" / "in.txt").write_text("needle inside\n")
    (proj / "top.txt").write_text("needle at the top\n")
    (outside / "marked.txt").write_text("needle MARKER from outside\n")
    stop = threading.Event()
    t = flipper(proj, outside, stop)
    t.start()
    seen = []
    try:
        for i in range(100):
            args = {"pattern": "needle", "context": 1} if i % 2 else {"pattern": "needle"}
            seen.append(run(call(tools(engine), "grep", args, context(proj))))
            seen.append(run(call(tools(engine), "glob", {"pattern": "*.txt"}, context(proj))))
    finally:
        stop.set()
        t.join(5)
    for r in seen:
        assert "MARKER" not in r.content and "marked" not in r.content, r.content
    assert any("a/in.txt" in r.content for r in seen)  # the folder was searched when it was one


# ---------------------------------------------------------------- beneath an allowed root


def gate(cwd: Path, home: Path, user: Path, *allowed: str) -> Gate:
    rules = tuple(Rule(Kind.ALLOW, "Read", g, Source.HOME) for g in allowed)
    cfg = Cfg(Mode.WORKSPACE_WRITE, Policy.ON_REQUEST, person=False, sandbox=True, rules=rules)
    return Gate(PermissionState(cfg), cwd, home, user=user)


@pytest.mark.parametrize("engine", ENGINES)
def test_an_allowed_root_never_shows_eukhes_home_or_the_users_secret_places(
    tmp_path: Path, engine: str
) -> None:
    """A person allowed reading the folder above the project; beneath it are eukhe's home and
    the user's home, reached through a link in the project and by name."""
    top = tmp_path / "top"
    home, user, proj = top / "eukhe-home", top / "user", top / "proj"
    for folder in (home, user / ".ssh", proj):
        folder.mkdir(parents=True)
    (home / "settings.json").write_text('{"MARKER": "in the home"}\n')
    (user / ".ssh" / "id_ed25519").write_text("MARKER key\n")
    (user / "notes.txt").write_text("MARKER notes\n")
    (proj / "up").symlink_to(top)
    g = gate(proj, home, user, f"{top}", f"{top}/**")

    def ctx() -> Context:
        return context(proj, reach=g.opened, readable=g.readable)

    for path in ("up", str(top)):
        got = run(call(tools(engine), "grep", {"pattern": "MARKER", "path": path}, ctx()))
        assert "notes.txt:1: MARKER notes" in got.content, got.content
        assert "home" not in got.content and "key" not in got.content, got.content
        got = run(call(tools(engine), "glob", {"pattern": "*", "path": path}, ctx()))
        assert "notes.txt" in got.content and "settings.json" not in got.content, got.content
        got = run(call(tools(engine), "grep", {"pattern": "MARKER", "path": f"{path}/user/.ssh"}, ctx()))
        assert got.is_error and "secret places" in got.content, got.content


def test_a_search_of_slash_a_person_allowed_never_enters_proc_sys_or_dev(tmp_path: Path) -> None:
    """The Python engine's walk of `/` (ripgrep's is the sandbox's, below): the kernel's places
    are skipped before any rule is asked of what they hold. The rules here keep the walk one
    folder deep, so it ends soon."""
    g = gate(tmp_path, tmp_path / "eukhe-home", tmp_path / "user", "/**")
    asked: list[str] = []

    def shallow(p: Path) -> bool:
        asked.append(str(p))
        return str(p).count("/") <= 1 and g.readable(p)

    ctx = context(tmp_path, reach=g.opened, readable=shallow)
    got = run(call(tools("python"), "grep", {"pattern": "[a-z]", "path": "/", "limit": 1000}, ctx))
    assert not got.is_error and got.content, got.content
    assert "/etc/" in "\n".join(asked), asked[:50]  # the walk went on past the kernel's places
    for place in ("/proc", "/sys", "/dev"):
        assert not any(a == place or a.startswith(place + "/") for a in asked), place
        assert not any(line.startswith(place + "/") for line in got.content.splitlines()), got.content[:2000]


@needs_box
def test_ripgreps_sandbox_shows_the_root_alone_and_covers_what_no_tool_reaches(tmp_path: Path) -> None:
    """The sandbox of a search of `/` that a person allowed: /proc, /sys and /dev are empty, so
    are eukhe's home and the user's secret places; /tmp and the user's other files are there."""
    home, user = tmp_path / "eukhe-home", tmp_path / "user"
    for folder in (home, user / ".ssh"):
        folder.mkdir(parents=True)
    (home / "settings.json").write_text("{}")
    (user / ".ssh" / "id_ed25519").write_text("key\n")
    (user / "notes.txt").write_text("notes\n")
    g = gate(tmp_path, home, user, "/**")
    never = confined.beneath("/", g.opened, home, user)
    assert {"/proc", "/sys", "/dev", str(home), str(user / ".ssh")} <= set(never), never
    fd = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert BWRAP is not None and RG is not None
        box = confined.box(BWRAP, RG, fd, "/", never)
        ls = shutil.which("ls")
        assert ls is not None
        argv = [*box.argv[:-1], ls, "-A", "/proc", "/sys", "/dev", str(home), str(user / ".ssh"), str(user)]
        done = subprocess.run(argv, pass_fds=box.fds, capture_output=True, text=True, timeout=30, env={})
        box.close()
    finally:
        os.close(fd)
    assert done.returncode == 0, done.stderr
    listed = entries(done.stdout)
    for empty in ("/proc", "/sys", "/dev", str(home), str(user / ".ssh")):
        assert listed[empty] == [], (empty, listed[empty])
    assert "notes.txt" in listed[str(user)]


@needs_box
def test_ripgreps_sandbox_shows_nothing_of_the_users_home_outside_the_root(tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    fd = os.open(tmp_path / "proj", os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert BWRAP is not None and RG is not None
        box = confined.box(BWRAP, RG, fd, str(tmp_path / "proj"), ())
        ls = shutil.which("ls")
        assert ls is not None
        argv = [*box.argv[:-1], ls, "-A", "/", str(tmp_path)]
        done = subprocess.run(argv, pass_fds=box.fds, capture_output=True, text=True, timeout=30, env={})
        box.close()
    finally:
        os.close(fd)
    assert done.returncode == 0, done.stderr
    listed = entries(done.stdout)
    top = listed["/"]
    assert "home" not in top and "root" not in top and "proc" not in top and "work" not in top, top
    assert listed[str(tmp_path)] == ["proj"]


def entries(out: str) -> dict[str, list[str]]:
    """`ls -A a b c`'s output, by folder."""
    listed: dict[str, list[str]] = {}
    here = ""
    for line in out.splitlines():
        if line.endswith(":") and line.startswith("/"):
            here = line[:-1]
            listed[here] = []
        elif line:
            listed[here].append(line)
    return listed


# ---------------------------------------------------------------- the secret values


@pytest.mark.parametrize("engine", ENGINES)
def test_a_file_holding_a_secret_value_is_never_searched_whatever_the_pattern(
    tmp_path: Path, engine: str
) -> None:
    key = "sk-live-0123456789abcdef"
    (tmp_path / "a.env").write_text(f"first line\nKEY={key}\nlast line\n")
    (tmp_path / "b.txt").write_text("first line\n")
    (tmp_path / "c.json").write_text('{"key": "sk-q\\"uoted-0123456789"}\n')
    hidden = (key, 'sk-q"uoted-0123456789')
    answers = set()
    for pattern in ("KEY=sk-l", "KEY=sk-x", "(?i)key=SK-L", "first", "line", "sk-q"):
        ctx = context(tmp_path, hidden=hidden)
        got = run(call(tools(engine), "grep", {"pattern": pattern, "context": 2}, ctx))
        assert key not in got.content and "a.env:" not in got.content and "c.json:" not in got.content
        answers.add(got.content.replace(repr(pattern), "<p>").replace("b.txt:1: first line\n", ""))
    note = "[2 files hold a secret value eukhe keeps from the model: not searched: a.env, c.json]"
    assert answers == {note}, answers
    got = run(
        call(tools(engine), "grep", {"pattern": "line", "path": "a.env"}, context(tmp_path, hidden=hidden))
    )
    assert got.content == "[1 file holds a secret value eukhe keeps from the model: not searched: a.env]"


# ---------------------------------------------------------------- where bubblewrap cannot run


@pytest.mark.skipif(RG is None, reason="ripgrep is not installed")
def test_where_bubblewrap_cannot_run_the_python_engine_answers(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("needle\n")
    (tmp_path / ".bin").mkdir()
    fake = tmp_path / ".bin" / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        root = Root(fd, tmp_path, tmp_path, True)
        how = Search(10.0, 1000, RG, str(fake))
        found = asyncio.run(engines.hits(Pick(root), "needle", 10, how, asyncio.Event()))
        listed = asyncio.run(engines.files(Pick(root), 10, how, asyncio.Event()))
    finally:
        os.close(fd)
    assert found.unconfined and [(h.path.name, h.line) for h in found.hits] == [("a.txt", 1)]
    assert listed.unconfined and [p.name for p in listed.files] == ["a.txt"]


def test_a_run_whose_sandbox_cannot_run_searches_with_python(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("needle\n")

    class Box:
        unavailable = "no namespaces here"

    r: Result = run(call(tools("auto"), "grep", {"pattern": "needle"}, context(tmp_path, sandbox=Box())))
    assert r.content == "a.txt:1: needle"


def test_the_boundary_is_asked_for_the_root(tmp_path: Path) -> None:
    asked: list[tuple[Act, str]] = []

    def check(act: Act, real: str) -> str | None:
        asked.append((act, real))
        return "no"

    r = run(call(tools("python"), "grep", {"pattern": "x"}, context(tmp_path, reach=check)))
    assert r.is_error and r.content == "not searched: '.' may not be touched: no"
    assert asked == [(Act.SEARCH, os.path.realpath(tmp_path))]
