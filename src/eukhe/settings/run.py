"""The settings a run reads, as one value: made from settings.json by
`eukhe.settings.load.run_settings`, read by the generation loop. Its own file, so
that reading settings never imports the loop that runs on them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Price:
    """`models.<m>.price`: dollars per million tokens; `cached` None: cache reads cost what
    input costs."""

    input: float
    output: float
    cached: float | None = None


@dataclass(frozen=True)
class Settings:
    """The settings a run reads (names as in settings.json)."""

    max_tool_rounds: int = 0  # maxToolRounds; 0 = the default, 250
    retry_enabled: bool = True  # retry.enabled
    max_retries: int = 3  # retry.maxRetries
    base_delay_ms: int = 2000  # retry.baseDelayMs
    max_retry_delay_ms: int = 60_000  # retry.provider.maxRetryDelayMs
    stream_idle_timeout_ms: int = 120_000  # retry.provider.streamIdleTimeoutMs
    max_output_tokens: int = 0  # models.<provider/model>.maxOutputTokens; 0 = the provider's own limit
    context_window: int = 0  # models.<provider/model>.contextWindow (tokens); 0 = unknown: no threshold
    price: Price | None = None  # models.<provider/model>.price; None: tokens are shown without a cost
    reasoning_effort: str | None = None  # models.<provider/model>.reasoningEffort, or --effort
