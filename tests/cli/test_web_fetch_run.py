"""`web_fetch` in a real headless `eukhe run` against the faux model: with no rule it is
denied at once, and the denial names the rule to add; with `WebFetch(domain:127.0.0.1)`, two
calls in one reply (they run one after the other), the first to a server that never
answers and the second to a page, end by the first's bound and the page's text: the bound
frees the run. The page's secret value never reaches the model or the screen, and its
escape sequences are shown as their codes, never sent to the terminal: the run's events,
as the interactive agent shows them (its result line, and the result opened with `/open`).
A person's "always for this project" for a host (kept in the home's approvals) lets the
fetch run, but opens only the host's public addresses: `localhost` is refused, the cause
said, while the same rule in the home's settings fetches it (issue 51)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from eukhe.ai.faux import FauxServer, parse
from eukhe.display.view import View
from eukhe.events import Event
from eukhe.ui import commands
from tests.proc import eukhe

SECRET = "lab-provider-key-0123456789"
PAGE = (
    "<html><head><title>\x1b]0;pwned\x07Title</title></head><body><h1>Setup</h1>"
    f"<p>\x1b[2J\x1b]52;c;Y3VybCBldmlsfHNo\x07key={SECRET} \u009b31m</p></body></html>"
).encode()


@contextlib.contextmanager
def pages() -> Iterator[tuple[str, list[str]]]:
    """A page server on loopback: `/page` a page with escape sequences and a secret, `/silent`
    one that never answers (until the server closes). Yields its URL and the paths asked."""
    asked: list[str] = []
    closing = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            asked.append(self.path)
            if self.path == "/silent":
                closing.wait(30)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(PAGE)))
            self.end_headers()
            self.wfile.write(PAGE)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", asked
    finally:
        closing.set()
        server.shutdown()
        server.server_close()


def fetches(*urls: str) -> dict[str, Any]:
    return {"calls": [{"name": "web_fetch", "arguments": {"url": u}} for u in urls]}


def home_with(tmp_path: Path, settings: dict[str, Any]) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps(settings))
    return home


def test_with_no_rule_a_fetch_is_denied_at_once_naming_the_rule_to_add(tmp_path: Path) -> None:
    home = home_with(tmp_path, {})
    with pages() as (url, asked):
        script = [{"results": 0, **fetches(f"{url}/page")}, {"results": 1, "text": "could not"}]
        with FauxServer(parse(script)) as server:
            done = eukhe("run", "--model", "vllm/m", "--base-url", server.url, "--json", "read the docs",
                         cwd=tmp_path, home=home)  # fmt: skip
            sent = server.seen[-1].body["messages"]
    assert done.returncode == 0, done.stderr
    assert asked == []  # nothing was fetched
    [result] = [m["content"] for m in sent if m["role"] == "tool"]
    assert result == (
        "Tool web_fetch was not run: permission denied: no person can answer an ask here; it reaches the "
        "network, which the sandbox keeps from bash too: allow it with a rule in permissions.allow: "
        "WebFetch(domain:127.0.0.1), or run it in the interactive agent, which asks."
    )
    [denial] = json.loads(done.stdout.splitlines()[-1])["denials"]
    assert denial["tool"] == "web_fetch" and denial["cause"] == "no person can answer an ask here"


def test_a_hanging_server_is_freed_by_its_bound_and_a_page_is_shown_neutralized_and_redacted(
    tmp_path: Path,
) -> None:
    """The run's event stream (`--events`), fed to the interactive agent's view as its session
    feeds it: the result's line and `/open`'s lines show every escape sequence as its code."""
    settings = {
        "permissions": {"allow": ["WebFetch(domain:127.0.0.1)"]},
        "webFetch": {"connectTimeoutMs": 2000, "firstByteTimeoutMs": 300, "totalTimeoutMs": 3000},
        "providers": {"vllm": {"apiKeyEnv": "LAB_ACCESS"}},
    }
    home = home_with(tmp_path, settings)
    with pages() as (url, asked):
        script = [
            {"results": 0, **fetches(f"{url}/silent", f"{url}/page")},
            {"results": 2, "text": "read it"},
        ]
        with FauxServer(parse(script)) as server:
            began = time.monotonic()
            done = eukhe("run", "--model", "vllm/m", "--base-url", server.url, "--events", "read the docs",
                         cwd=tmp_path, home=home, extra={"LAB_ACCESS": SECRET})  # fmt: skip
            took = time.monotonic() - began
            sent = server.seen[-1].body["messages"]
    assert done.returncode == 0, done.stderr
    assert asked == ["/silent", "/page"]
    assert took < 15  # the silent server holds a fetch 30 s: its bound, 0.3 s, let the run go on
    hung, page = [m["content"] for m in sent if m["role"] == "tool"]
    assert (
        hung
        == f"web_fetch {url}/silent: connected, but no answer within webFetch.firstByteTimeoutMs = 300 ms"
    )
    assert "# Setup" in page and f"key={SECRET}" not in page and "key=[redacted]" in page
    assert SECRET not in done.stdout + done.stderr
    assert "\x1b" not in done.stdout and "\u009b" not in done.stdout  # the stream is JSON, escaped

    view = View()
    for line in done.stdout.splitlines():
        got = json.loads(line)
        data = {k: v for k, v in got.items() if k not in ("v", "type", "run", "text", "at")}
        view.add(Event(got["type"], got["text"], got["run"], data))
    stub = SimpleNamespace(view=view, add=view.add)
    asyncio.run(commands.run_command(commands.COMMANDS["open"], stub, "2"))  # type: ignore[arg-type]
    screen = "\n".join(ln.text for ln in view.take())
    assert (
        "\x1b" not in screen and "\x07" not in screen and "\u009b" not in screen
    )  # nothing a terminal acts on
    assert "\\x1b]0;pwned\\x07Title" in screen and "\\x1b[2J\\x1b]52;c;" in screen and "\\x9b31m" in screen
    assert "  ← [1] error, " in screen and "  ← [2] ok, " in screen


@pytest.mark.parametrize("kept", ["approvals", "settings"])
def test_a_persons_always_for_localhost_does_not_open_it_and_the_settings_rule_does(
    tmp_path: Path, kept: str
) -> None:
    rule = {"tool": "WebFetch", "pattern": "domain:localhost"}
    home = home_with(
        tmp_path, {"permissions": {"allow": ["WebFetch(domain:localhost)"]}} if kept == "settings" else {}
    )
    project = tmp_path / "project"
    project.mkdir()
    if kept == "approvals":  # what "always for this project" keeps (`settings.approvals`)
        projects = {os.path.realpath(project): [rule]}
        (home / "approvals.json").write_text(json.dumps({"projects": projects}))
    with pages() as (url, asked):
        local = url.replace("127.0.0.1", "localhost")
        script = [{"results": 0, **fetches(f"{local}/page")}, {"results": 1, "text": "done"}]
        with FauxServer(parse(script)) as server:
            done = eukhe("run", "--model", "vllm/m", "--base-url", server.url, "--json", "read the docs",
                         cwd=project, home=home)  # fmt: skip
            sent = server.seen[-1].body["messages"]
    assert done.returncode == 0, done.stderr
    [result] = [m["content"] for m in sent if m["role"] == "tool"]
    if kept == "approvals":
        assert asked == [] and result.startswith(f"web_fetch {local}/page: not fetched: localhost ("), result
        assert "is a loopback address, which a fetch reaches only when a rule in the settings names" in result
        assert 'a person\'s "always" opens only its public addresses' in result
    else:
        assert asked == ["/page"] and "# Setup" in result and result.endswith("\n</page>"), result
