"""Reading settings.json files: merged, validated where read, never rewritten."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eukhe.home import home
from eukhe.rules import queue as _queue
from eukhe.rules import view as _view
from eukhe.rules.compactor import NODE
from eukhe.settings.run import Settings


class SettingsError(ValueError):
    """A settings file or value that cannot be used: names the file, the place and why."""


def read(path: Path) -> dict[str, Any]:
    """One settings file ({} when there is none)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as e:
        raise SettingsError(
            f"settings file {path}: cannot read it: {getattr(e, 'strerror', None) or e}"
        ) from e
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise SettingsError(
            f"settings file {path}, line {e.lineno} column {e.colno}: not valid JSON: {e.msg}"
        ) from e
    if not isinstance(data, dict):
        raise SettingsError(f"settings file {path}: expected a JSON object, got {type(data).__name__}")
    return data


def merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        out[k] = merge(out[k], v) if isinstance(out.get(k), Mapping) and isinstance(v, Mapping) else v
    return out


def load(project: Path | None = None, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    merged = read(home(env) / "settings.json")
    if project is not None:
        merged = merge(merged, read(project / ".eukhe" / "settings.json"))
    return merged


def value(settings: Mapping[str, Any], key: str, kind: type, default: Any) -> Any:
    """The dotted key's value, checked against its kind (bool is not an int here)."""
    node: Any = settings
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return default
        node = node[part]
    ok = isinstance(node, kind) and not (kind is int and isinstance(node, bool))
    if not ok or (kind is int and node < 0):
        want = "a whole number >= 0" if kind is int else kind.__name__
        raise SettingsError(f"setting {key}={node!r}: expected {want}")
    return node


def model_limit(settings: Mapping[str, Any], model: str | None, key: str, what: str) -> int:
    """`models.<provider/model>.<key>` (0 when unset). Read from the `models` object by
    the whole name, which may hold dots. `what`: what the number is, for the error."""
    models = settings.get("models")
    if model is None or not isinstance(models, Mapping):
        return 0
    spec = models.get(model)
    if not isinstance(spec, Mapping) or key not in spec:
        return 0
    n = spec[key]
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise SettingsError(f"setting models.{model}.{key}={n!r}: expected a whole number >= 1 ({what})")
    return n


def max_output_tokens(settings: Mapping[str, Any], model: str | None) -> int:
    """The most tokens a reply may have (0: the provider's own limit)."""
    what = "the most tokens a reply may have; leave it out for the provider's own limit"
    return model_limit(settings, model, "maxOutputTokens", what)


def context_window(settings: Mapping[str, Any], model: str | None) -> int:
    """The model's context window in tokens (0: unknown, so no threshold compaction)."""
    what = "the model's context window in tokens; leave it out when unknown"
    return model_limit(settings, model, "contextWindow", what)


def run_settings(settings: Mapping[str, Any], model: str | None = None) -> Settings:
    """The settings a run of `model` reads."""
    d = Settings()
    return Settings(
        max_output_tokens=max_output_tokens(settings, model),
        context_window=context_window(settings, model),
        max_tool_rounds=value(settings, "maxToolRounds", int, d.max_tool_rounds),
        retry_enabled=value(settings, "retry.enabled", bool, d.retry_enabled),
        max_retries=value(settings, "retry.maxRetries", int, d.max_retries),
        base_delay_ms=value(settings, "retry.baseDelayMs", int, d.base_delay_ms),
        max_retry_delay_ms=value(settings, "retry.provider.maxRetryDelayMs", int, d.max_retry_delay_ms),
        stream_idle_timeout_ms=value(
            settings, "retry.provider.streamIdleTimeoutMs", int, d.stream_idle_timeout_ms
        )
        or d.stream_idle_timeout_ms,
    )


@dataclass(frozen=True)
class MemorySettings:
    view_bytes: int  # memory.viewBytes: the view's budget
    settle_ms: int  # memory.settleTimeoutMs: how long a turn waits for its view


SMALLEST_VIEW = len(_view.OPEN) + len(_view.CLOSE) + len(f"{2**64}+1|") + NODE + 1
"""The least view budget that holds one line of any message: under it not even the newest fits."""


@dataclass(frozen=True)
class ChildSettings:
    """What subagents and the kernel run within: `subagentStallMs` (0 or unset: the
    default), `subagents.maxDepth`, `toolBlockingBudgetMs` (0 or unset: the default)."""

    stall_ms: int
    max_depth: int
    budget_ms: int


def child_settings(settings: Mapping[str, Any]) -> ChildSettings:
    from eukhe.rules.child import stall_ms
    from eukhe.settings.keys import SUBAGENT_MAX_DEPTH, TOOL_BLOCKING_BUDGET_MS

    budget = value(settings, "toolBlockingBudgetMs", int, 0)
    return ChildSettings(
        stall_ms(value(settings, "subagentStallMs", int, 0)),
        value(settings, "subagents.maxDepth", int, SUBAGENT_MAX_DEPTH),
        budget if budget > 0 else TOOL_BLOCKING_BUDGET_MS,
    )


def memory_settings(settings: Mapping[str, Any]) -> MemorySettings:
    """`memory.viewBytes` (default VIEW) and `memory.settleTimeoutMs` (0 or unset: 20 s)."""
    budget = value(settings, "memory.viewBytes", int, _view.VIEW)
    if budget < SMALLEST_VIEW:
        raise SettingsError(
            f"setting memory.viewBytes={budget}: the view could not hold even the newest message's line; "
            f"it takes at least {SMALLEST_VIEW} bytes (the default is {_view.VIEW})"
        )
    settle = _queue.settle_timeout(value(settings, "memory.settleTimeoutMs", int, 0))
    return MemorySettings(budget, settle)
