"""A provider's limits, from settings.json: `providers.<name>.concurrency` (slots;
0 or unset: no limit) and `providers.<name>.queueLimit` (waiters a class may queue;
unset: `DEFAULT_QUEUE_LIMIT`; 0: no request waits, one with no free slot is refused)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from eukhe.json_types import JsonMapping, JsonValue
from eukhe.settings.load import SettingsError

UNLIMITED = 1 << 62
"""The limit of a provider with no concurrency limit."""

DEFAULT_QUEUE_LIMIT = 256
"""Waiters a class may queue when `providers.<name>.queueLimit` is unset."""


@dataclass(frozen=True)
class Limits:
    """concurrency: requests running at once (`UNLIMITED`: no limit); queue_limit:
    requests of one class waiting at once."""

    concurrency: int
    queue_limit: int


def _whole(provider: str, key: str, node: JsonValue) -> int:
    if not isinstance(node, int) or isinstance(node, bool) or node < 0:
        raise SettingsError(f"setting providers.{provider}.{key}={node!r}: expected a whole number >= 0")
    return node


def limits_from(settings: JsonMapping, provider: str) -> Limits:
    """The provider's limits from merged settings; a malformed value is a
    `SettingsError` naming the key."""
    providers = settings.get("providers", {})
    if not isinstance(providers, Mapping):
        raise SettingsError(f"setting providers={providers!r}: expected an object of providers by name")
    given = providers.get(provider) or {}
    if not isinstance(given, Mapping):
        raise SettingsError(f"setting providers.{provider}={given!r}: expected an object")
    concurrency = _whole(provider, "concurrency", given.get("concurrency", 0))
    queue_limit = _whole(provider, "queueLimit", given.get("queueLimit", DEFAULT_QUEUE_LIMIT))
    return Limits(concurrency or UNLIMITED, queue_limit)
