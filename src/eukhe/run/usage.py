"""Tokens and cost: every reply's usage summed over a run and a session, priced from the
settings' table, and said in one short line.

A run's tally adds every reply the run read, failed ones too, once each: a retried request
was sent, so it counts. The replies come from their durable steps, so a run resumed after a
crash sums the same replies, never one twice. `input` holds the cached tokens (Anthropic's
cache reads and writes are added to its `input_tokens`); `reasoning` is part of `output`.
The context's fill is the last reply's input against the model's window.

Prices come only from `models.<m>.price` (dollars per million tokens: `input`, `output`,
`cached` when the provider prices cache reads apart); there is no fetch of prices, and a
model with none shows its tokens only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from eukhe.ai.reply import Usage
from eukhe.humanize import tokens
from eukhe.json_types import JsonObject
from eukhe.settings.run import Price

__all__ = ["Tally"]

MILLION = 1_000_000


@dataclass
class Tally:
    """Token totals of some replies; `last_input`: the newest reply's input (the context's fill)."""

    input: int = 0
    output: int = 0
    cached: int = 0
    reasoning: int = 0
    replies: int = 0
    last_input: int = 0

    def add(self, u: Usage) -> None:
        self.input += u.input
        self.output += u.output
        self.cached += u.cache_read
        self.reasoning += u.reasoning
        self.replies += 1
        if u.input:
            self.last_input = u.input

    def merge(self, other: Tally) -> None:
        self.input += other.input
        self.output += other.output
        self.cached += other.cached
        self.reasoning += other.reasoning
        self.replies += other.replies
        if other.last_input:
            self.last_input = other.last_input

    def cost(self, price: Price | None) -> float | None:
        if price is None:
            return None
        cached = price.input if price.cached is None else price.cached
        fresh = max(self.input - self.cached, 0)
        return (fresh * price.input + self.cached * cached + self.output * price.output) / MILLION

    def json(self, price: Price | None = None) -> JsonObject:
        out: JsonObject = {
            "input": self.input,
            "output": self.output,
            "cached": self.cached,
            "reasoning": self.reasoning,
        }
        cost = self.cost(price)
        if cost is not None:
            out["cost"] = round(cost, 6)
        return out

    @staticmethod
    def of(obj: Any) -> Tally:
        """A tally from its JSON (`json`; an outcome an earlier eukhe recorded has none: zeros)."""
        if not isinstance(obj, Mapping):
            return Tally()
        n = {k: int(obj.get(k) or 0) for k in ("input", "output", "cached", "reasoning")}
        return Tally(**n)

    def line(self, price: Price | None = None, window: int = 0) -> str:
        """`12.3k in (8.0k cached) · 1.2k out (300 reasoning) · $0.0123 · context 9% of 128.0k`."""
        parts = [f"{tokens(self.input)} in" + (f" ({tokens(self.cached)} cached)" if self.cached else "")]
        parts.append(
            f"{tokens(self.output)} out"
            + (f" ({tokens(self.reasoning)} reasoning)" if self.reasoning else "")
        )
        cost = self.cost(price)
        if cost is not None:
            parts.append(f"${cost:.4f}" if cost < 1 else f"${cost:.2f}")
        if window > 0 and self.last_input:
            parts.append(f"context {100 * self.last_input // window}% of {tokens(window)}")
        return " · ".join(parts)
