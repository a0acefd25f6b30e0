"""The laws of `rules.retry` (ours, issue 29): which failed model requests are retried, after
how long, and how often. A connection a loopback address refused (nothing listens on this
machine at the URL) gets one short retry and no more; any other failure keeps the backoff,
whose wait is never over the cap.

The state is a run's retries so far and whether it gave up; an input is one failed request:
the wait its server asked for (0: none) and whether it was a loopback refusal. Every field is a
number or a flag, so CrossHair proves the first two over all of them (the third is walked and
sampled: its proof costs more than the rest of the area's).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum

from eukhe.laws.engine import Area, Law, Mutant
from eukhe.rules import retry as r
from eukhe.rules.retry import LOCAL_REFUSAL_RETRIES, LOCAL_REFUSAL_WAIT_MS, Retry


@dataclass(frozen=True)
class Model:
    model_retry: Callable[[int, int, int, int | None, bool], Retry]


MODEL = Model(r.model_retry)


@dataclass(frozen=True)
class RCfg:
    base: int  # retry.baseDelayMs
    cap: int  # retry.provider.maxRetryDelayMs


@dataclass(frozen=True)
class Tried:
    used: int  # the run's retries so far
    gave_up: bool  # a failure was refused its retry: the run failed


@dataclass(frozen=True)
class Failed:
    server: int  # the wait the server asked for, in ms (0 or less: none)
    local: bool  # a loopback address refused the connection


def _retry(m: Model, cfg: RCfg, s: Tried, x: Failed) -> Retry:
    return m.model_retry(cfg.base, cfg.cap, s.used + 1, x.server if x.server > 0 else None, x.local)


def nxt(m: Model, cfg: RCfg, s: Tried, x: Failed) -> Tried:
    if s.gave_up:
        return s
    got = _retry(m, cfg, s, x)
    return Tried(s.used, True) if got.refused else Tried(s.used + 1, False)


def retry_local_refusal_once(m: Model, cfg: RCfg, s: Tried, x: Failed) -> bool:
    """A loopback refusal is retried only while the run has made fewer than
    LOCAL_REFUSAL_RETRIES retries, after at most LOCAL_REFUSAL_WAIT_MS; then it is refused."""
    if not x.local:
        return True
    got = _retry(m, cfg, s, x)
    if s.used + 1 > LOCAL_REFUSAL_RETRIES:
        return got.refused
    return (not got.refused) & (got.wait_ms <= LOCAL_REFUSAL_WAIT_MS) & (got.wait_ms <= cfg.cap)


def retry_remote_keeps_backoff(m: Model, cfg: RCfg, s: Tried, x: Failed) -> bool:
    """A failure that is not a loopback refusal, whose server asked for no wait, is never
    refused a retry here (the run's own retry cap decides, H4.5), and waits the backoff."""
    if x.local | (x.server > 0):
        return True
    got = _retry(m, cfg, s, x)
    return (not got.refused) & (got.wait_ms == r.retry_wait_ms(cfg.base, cfg.cap, s.used + 1, None))


def retry_wait_capped(m: Model, cfg: RCfg, s: Tried, x: Failed) -> bool:
    """A retry granted never waits longer than retry.provider.maxRetryDelayMs; one the server
    asks to wait longer for is refused instead (H4.5)."""
    got = _retry(m, cfg, s, x)
    return got.refused | (got.wait_ms <= cfg.cap)


LAWS = (
    Law(
        "retry_local_refusal_once",
        "H4.5",
        "A connection a loopback address refused: one short retry, then the run fails saying so.",
        edge=retry_local_refusal_once,
    ),
    Law(
        "retry_remote_keeps_backoff",
        "H4.5",
        "Any other failure without a server's wait keeps its retries and the exponential backoff.",
        edge=retry_remote_keeps_backoff,
    ),
    Law(
        "retry_wait_capped",
        "H4.5",
        "A granted retry never waits longer than the cap; a longer wait asked for is refused.",
        edge=retry_wait_capped,
        prove=False,  # walked and sampled: its proof splits on every shift of the backoff (12 s)
    ),
)


def _local_backs_off(base: int, cap: int, used: int, server: int | None, local: bool = False) -> Retry:
    return r.model_retry(base, cap, used, server, False)


def _local_never_retried(base: int, cap: int, used: int, server: int | None, local: bool = False) -> Retry:
    got = r.model_retry(base, cap, used, server, local)
    return Retry(0, True, 0, got.max_ms, True) if local else got


def _every_refusal_local(base: int, cap: int, used: int, server: int | None, local: bool = False) -> Retry:
    return r.model_retry(base, cap, used, server, server is None)


def _uncapped(base: int, cap: int, used: int, server: int | None, local: bool = False) -> Retry:
    got = r.model_retry(base, cap, used, server, local)
    return (
        got
        if got.refused or local
        else Retry(max(base, 0) << min(max(used, 1) - 1, 20), False, 0, got.max_ms)
    )


MUTANTS = (
    Mutant("a loopback refusal given the whole backoff", "H4.5", Model(_local_backs_off)),
    Mutant("a loopback refusal never retried", "H4.5", Model(_local_never_retried)),
    Mutant("every connection failure taken for a loopback refusal", "H4.5", Model(_every_refusal_local)),
    Mutant("a backoff past the cap", "H4.5", Model(_uncapped)),
)


def proof_cases() -> list[tuple[dict[str, Enum], dict[str, Enum]]]:
    return [({}, {})]


def cfgs() -> Iterator[RCfg]:
    for base, cap in itertools.product((0, 1, 2, 500), (0, 1, 3, 1000, 60_000)):
        yield RCfg(base, cap)


def _inputs(cfg: RCfg, s: Tried) -> list[Failed]:
    if s.gave_up:
        return []
    return [Failed(server, local) for server in (0, 1, cfg.cap, cfg.cap + 1) for local in (False, True)]


AREA = Area(
    name="retry",
    model=MODEL,
    cfg_type=RCfg,
    state_type=Tried,
    input_type=Failed,
    proof_cases=proof_cases,
    valid=lambda cfg, s: s.used >= 0,
    cfg_valid=lambda cfg: (cfg.base >= 0) & (cfg.cap >= 0),
    start=lambda m, cfg: Tried(0, False),
    next=nxt,
    inputs=_inputs,
    cfgs=cfgs,
    bounds="base 0, 1, 2, 500 ms; cap 0, 1, 3, 1000, 60000 ms; server waits none, 1, the cap and past it",
    depth=6,
    sample_cfg=lambda seed: RCfg(seed % 2000, (seed // 2000) % 120_000),
    laws=LAWS,
    mutants=MUTANTS,
)
