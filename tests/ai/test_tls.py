"""The model clients of a process share one verifying TLS context (`ai.tls`): the CA bundle
is loaded once, not once for each client, which is once for each run."""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path
from typing import Any

import pytest

from eukhe.ai import tls
from eukhe.ai.anthropic import AnthropicMessages
from eukhe.ai.openai_chat import OpenAIChat
from eukhe.ai.openai_responses import OpenAIResponses


def test_every_client_of_every_api_loads_the_ca_bundle_once(monkeypatch: pytest.MonkeyPatch) -> None:
    loads: list[Any] = []
    load = ssl.SSLContext.load_verify_locations

    def counted(self: ssl.SSLContext, *args: Any, **kwargs: Any) -> None:
        loads.append(args or kwargs)
        load(self, *args, **kwargs)

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counted)
    tls._built.cache_clear()
    made = [
        kind("p", base_url=url, api_key="k")
        for kind in (OpenAIChat, OpenAIResponses, AnthropicMessages)
        for url in ("https://api.example.com/v1", "http://127.0.0.1:8080/v1")
    ]
    assert len(loads) == 1, loads
    for m in made:
        asyncio.run(m.close())


def test_the_shared_context_verifies_certificates_and_host_names() -> None:
    ctx = tls.verified()
    assert ctx.verify_mode is ssl.CERT_REQUIRED and ctx.check_hostname
    assert ctx.cert_store_stats()["x509_ca"] > 0  # a CA bundle is loaded


def test_a_bundle_the_environment_names_gets_a_context_of_its_own(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The warm template builds the context before it forks runs: a run whose environment
    names another CA bundle (SSL_CERT_FILE) must verify with that one, not the template's."""
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    system = tls.verified()
    assert tls.verified() is system  # built once
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("SSL_CERT_DIR", str(empty))
    own = tls.verified()
    assert own is not system and own.cert_store_stats()["x509_ca"] == 0  # the named (empty) folder's
    monkeypatch.delenv("SSL_CERT_DIR")
    assert tls.verified() is system
