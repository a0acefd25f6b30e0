"""Models by name: routes, and clear errors that say what to set."""

from __future__ import annotations

import pytest

from eukhe.ai.models import ModelError, parse_name, route


def test_names_are_provider_slash_model() -> None:
    assert parse_name("openrouter/meta-llama/llama-3.3") == ("openrouter", "meta-llama/llama-3.3")
    with pytest.raises(ModelError, match=r"^model 'gpt-4': expected provider/model, e\.g\. "):
        parse_name("gpt-4")


def test_hosted_models_take_their_key_from_the_environment() -> None:
    r = route("openai/gpt-4.1", env={"OPENAI_API_KEY": "sk-x"})
    assert (r.api, r.api_key, r.base_url) == ("openai-chat", "sk-x", "https://api.openai.com/v1")
    with pytest.raises(
        ModelError,
        match=r"^model 'anthropic/claude': no API key: set the environment variable ANTHROPIC_API_KEY",
    ):
        route("anthropic/claude", env={})


def test_local_servers_need_no_key_and_settings_override_the_defaults() -> None:
    assert route("ollama/qwen3:8b", env={}).base_url == "http://127.0.0.1:11434/v1"
    r = route("vllm/m", {"vllm": {"baseUrl": "http://127.0.0.1:9000/v1", "concurrency": 1}}, env={})
    assert r.base_url == "http://127.0.0.1:9000/v1"
    mine = route("box/m", {"box": {"api": "openai-responses", "baseUrl": "http://127.0.0.1:1/v1"}}, env={})
    assert mine.api == "openai-responses" and mine.api_key is None


def test_unknown_providers_and_bad_settings_are_clear_errors() -> None:
    with pytest.raises(
        ModelError, match=r"unknown provider 'nope'; the providers are: .*Add providers\.nope"
    ):
        route("nope/m", env={})
    with pytest.raises(ModelError, match=r"^providers\.box\.api='grpc': must be one of"):
        route("box/m", {"box": {"api": "grpc"}}, env={})
