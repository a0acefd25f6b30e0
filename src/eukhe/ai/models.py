"""Models by name (`provider/model`) and the providers that serve them.

Providers come from the `providers` settings key:
`{name: {api: openai-chat | openai-responses | anthropic, baseUrl, apiKeyEnv}}`
(and `concurrency`, `queueLimit`, read by `eukhe.admission`),
over built-in defaults for the common hosted and local servers. Keys come from
the environment. A missing key or an unknown provider is a clear error that
says what to set.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass

from eukhe.ai.provider import Provider
from eukhe.ai.reply import Event
from eukhe.ai.request import Request
from eukhe.errors import Code, EukheError
from eukhe.json_types import JsonMapping, JsonObject
from eukhe.settings.secrets import NO_SECRETS, Redaction

APIS = ("openai-chat", "openai-responses", "anthropic")

BUILTIN: dict[str, JsonObject] = {
    "openai": {"api": "openai-chat", "baseUrl": "https://api.openai.com/v1", "apiKeyEnv": "OPENAI_API_KEY"},
    "anthropic": {
        "api": "anthropic",
        "baseUrl": "https://api.anthropic.com",
        "apiKeyEnv": "ANTHROPIC_API_KEY",
    },
    "openrouter": {
        "api": "openai-chat",
        "baseUrl": "https://openrouter.ai/api/v1",
        "apiKeyEnv": "OPENROUTER_API_KEY",
    },
    "ollama": {"api": "openai-chat", "baseUrl": "http://127.0.0.1:11434/v1", "apiKeyEnv": None},
    "vllm": {"api": "openai-chat", "baseUrl": "http://127.0.0.1:8000/v1", "apiKeyEnv": None},
    "llamacpp": {"api": "openai-chat", "baseUrl": "http://127.0.0.1:8080/v1", "apiKeyEnv": None},
    "lmstudio": {"api": "openai-chat", "baseUrl": "http://127.0.0.1:1234/v1", "apiKeyEnv": None},
}


class ModelError(EukheError, ValueError):
    """A model name or provider setting that cannot be used: says what to set."""

    code = Code.MODEL


@dataclass(frozen=True)
class Route:
    """Where a model is served: its provider's name, API, base URL and key."""

    provider: str
    model: str
    api: str
    base_url: str | None
    api_key: str | None


def parse_name(name: str) -> tuple[str, str]:
    """`provider/model` (the model part may hold more slashes: `openrouter/meta/llama`)."""
    provider, sep, model = name.partition("/")
    if not sep or not provider or not model:
        raise ModelError(f"model {name!r}: expected provider/model, e.g. openai/gpt-4.1 or ollama/qwen3:8b")
    return provider, model


def route(name: str, providers: JsonMapping | None = None, env: Mapping[str, str] | None = None) -> Route:
    env = os.environ if env is None else env
    provider, model = parse_name(name)
    given = dict((providers or {}).get(provider) or {})
    if provider not in BUILTIN and not given:
        known = ", ".join(sorted({*BUILTIN, *(providers or {})}))
        raise ModelError(
            f"model {name!r}: unknown provider {provider!r}; the providers are: {known}. "
            f"Add providers.{provider} to settings.json with api, baseUrl and apiKeyEnv."
        )
    cfg = {**BUILTIN.get(provider, {}), **given}
    api = cfg.get("api")
    if api not in APIS:
        raise ModelError(f"providers.{provider}.api={api!r}: must be one of {', '.join(APIS)}")
    base_url = cfg.get("baseUrl")
    if base_url is not None and not isinstance(base_url, str):
        raise ModelError(f"providers.{provider}.baseUrl={base_url!r}: must be a URL string")
    key_env = cfg.get("apiKeyEnv")
    key = None
    if key_env:
        key = env.get(str(key_env)) or None
        if key is None:
            raise ModelError(
                f"model {name!r}: no API key: set the environment variable {key_env} "
                f"(or providers.{provider}.apiKeyEnv to the variable that holds it)"
            )
    return Route(provider, model, api, base_url, key)


def key_variables(providers: JsonMapping | None = None) -> frozenset[str]:
    """Every environment variable a provider's key is read from: the built-in providers'
    and each `providers.<name>.apiKeyEnv` of the settings."""
    names = {cfg["apiKeyEnv"] for cfg in BUILTIN.values() if cfg.get("apiKeyEnv")}
    for cfg in (providers or {}).values():
        key_env = cfg.get("apiKeyEnv") if isinstance(cfg, Mapping) else None
        if isinstance(key_env, str) and key_env:
            names.add(key_env)
    return frozenset(names)


def provider_for(r: Route, timeout: float = 600.0, redact: Redaction = NO_SECRETS) -> Provider:
    """The adapter that speaks the route's API; `redact`: the secret values it takes out of
    every body it sends (`run.secrets`)."""
    if r.api == "openai-chat":
        from eukhe.ai.openai_chat import OpenAIChat

        return OpenAIChat(r.provider, base_url=r.base_url, api_key=r.api_key, timeout=timeout, redact=redact)
    if r.api == "openai-responses":
        from eukhe.ai.openai_responses import OpenAIResponses

        return OpenAIResponses(
            r.provider, base_url=r.base_url, api_key=r.api_key, timeout=timeout, redact=redact
        )
    from eukhe.ai.anthropic import AnthropicMessages

    return AnthropicMessages(
        r.provider, base_url=r.base_url, api_key=r.api_key, timeout=timeout, redact=redact
    )


class OnFirstRequest:
    """A route's adapter, made at its first request (or `made` ahead): a process that may
    never ask through it (the owner, whose chat most often builds its lines without a model)
    loads no SDK (the OpenAI SDK is 0.3 s and 30 MB) and opens no client until it does. It is
    made in a thread: the SDK's import never holds the loop (the owner's, which answers
    every run of the home)."""

    def __init__(self, r: Route, timeout: float = 600.0, redact: Redaction = NO_SECRETS) -> None:
        self.route, self.timeout, self.redact = r, timeout, redact
        self.name = r.provider
        self.made: Provider | None = None
        self._making: asyncio.Future[Provider] | None = None

    def make(self) -> asyncio.Future[Provider]:
        """The adapter, made once, off the loop: started by the first call, shared by every
        later one (the owner calls it as soon as it learns the route, before a line needs it)."""
        if self._making is None:
            self._making = asyncio.ensure_future(
                asyncio.to_thread(provider_for, self.route, self.timeout, self.redact)
            )
            # a route that cannot be made fails the request that asks through it, with its
            # cause; one made ahead and never asked through fails nothing
            self._making.add_done_callback(lambda f: f.cancelled() or f.exception())
        return self._making

    async def stream(self, request: Request) -> AsyncIterator[Event]:
        if self.made is None:
            self.made = await self.make()
        async for event in self.made.stream(request):
            yield event

    async def close(self) -> None:
        making = self._making
        if making is not None and not making.done():
            making.cancel()  # the thread's import ends on its own; nothing waits for it
        elif making is not None and not making.cancelled() and making.exception() is None:
            await making.result().close()


def resolve(
    name: str,
    settings: JsonMapping,
    base_url: str | None = None,
    api: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Route:
    """The route of a model named on the command line: the settings' providers, with
    `--base-url` and `--api` laid over its provider's entry."""
    providers = dict(settings.get("providers") or {})
    provider_name = name.partition("/")[0]
    over = dict(providers.get(provider_name) or {})
    if base_url:
        over["baseUrl"] = base_url
    if api:
        over["api"] = api
    if over:
        providers[provider_name] = over
    return route(name, providers, env)
