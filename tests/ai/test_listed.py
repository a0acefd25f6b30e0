"""Whether a local server lists the model it was asked for (`ai.listed`), against real
HTTP servers on loopback: the line for a name it does not list, none for one it does,
nothing said (and nothing waited for past the bound) for a server that cannot tell."""

from __future__ import annotations

import http.server
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from eukhe.ai import listed as listed_module
from eukhe.ai.listed import known, listed, look
from eukhe.ai.models import Route


@contextmanager
def serving(status: int, body: bytes) -> Iterator[tuple[str, list[dict[str, str]]]]:
    """An HTTP server on loopback answering every GET with `status` and `body`; its
    URL (ending /v1) and the headers of each request it got."""
    got: list[dict[str, str]] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            got.append({"path": self.path, **{k.lower(): v for k, v in self.headers.items()}})
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", got
    finally:
        server.shutdown()
        server.server_close()


def models(*ids: str) -> bytes:
    return json.dumps({"object": "list", "data": [{"id": i, "object": "model"} for i in ids]}).encode()


def route(url: str, model: str, key: str | None = None, api: str = "openai-chat") -> Route:
    return Route("llamacpp", model, api, url, key)


def test_a_name_the_server_does_not_list_gets_one_line_naming_what_it_lists() -> None:
    with serving(200, models("smollm2")) as (url, got):
        line = look(route(url, "nosuchmodel"))
    assert got[0]["path"] == "/v1/models"
    assert line == (
        f"the server at {url} does not list the model 'nosuchmodel'; it lists: smollm2. "
        "llama.cpp answers with the model it loaded whatever the name; other servers refuse it"
    )


def test_a_listed_name_as_each_server_spells_it_gets_none() -> None:
    with serving(200, models("qwen3:latest", "/models/SmolLM2-135M.Q4_1.gguf", "meta/llama-3")) as (url, _):
        for name in ("qwen3", "qwen3:latest", "SmolLM2-135M.Q4_1", "SmolLM2-135M.Q4_1.gguf", "meta/llama-3"):
            assert look(route(url, name)) is None, name
    assert not known("qwen3:8b", ["qwen3:latest"]) and not known("llama", ["meta/llama-3"])


def test_a_long_list_is_cut_and_a_key_goes_as_a_bearer_never_into_the_line() -> None:
    with serving(200, models(*(f"m{i}" for i in range(9)))) as (url, got):
        line = look(route(url + "?key=sk-abcdefgh12345678", "x", key="sk-abcdefgh12345678"))
    assert got[0]["authorization"] == "Bearer sk-abcdefgh12345678"
    assert line is not None and "it lists: m0, m1, m2, m3, m4 and 4 more." in line
    assert "sk-" not in line and "key=" not in line


@pytest.mark.parametrize(
    ("status", "body"),
    [(404, b"not found"), (200, b"not json"), (200, b'{"data": "x"}'), (200, models()), (503, models("a"))],
)
def test_a_server_that_lists_nothing_usable_gets_no_line(status: int, body: bytes) -> None:
    with serving(status, body) as (url, got):
        assert look(route(url, "nosuchmodel")) is None
    assert got, "the server was asked"


def test_a_server_that_never_answers_costs_the_bound_and_no_line() -> None:
    with socket.socket() as silent:  # listens, accepts (the kernel's backlog), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        began = time.monotonic()
        assert listed(f"http://127.0.0.1:{silent.getsockname()[1]}/v1", None, timeout=0.2) is None
        assert time.monotonic() - began < 1.0


def test_nothing_is_asked_of_a_hosted_server_nor_of_the_anthropic_api(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[str] = []
    monkeypatch.setattr(listed_module, "listed", lambda url, key, timeout: asked.append(url))
    assert look(route("https://api.openai.com/v1", "gpt-nope")) is None
    assert look(route("http://127.0.0.1:1/v1", "m", api="anthropic")) is None
    assert look(route("http://10.0.0.7:8000/v1", "m")) is None  # a private network's server: asked
    assert asked == ["http://10.0.0.7:8000/v1"]


def test_a_hostile_list_reaches_the_line_without_its_escape_sequences() -> None:
    evil = "\x1b]0;owned\x07\x1b[2J" + "x" * 300
    with serving(200, models(evil)) as (url, _):
        line = look(route(url, "m"))
    assert line is not None and "\x1b" not in line and "\x07" not in line
    assert "it lists: ]0;owned[2J" + "x" * 88 + "…." in line  # 100 characters in all
