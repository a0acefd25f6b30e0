"""Reasoning effort (`models.<m>.reasoningEffort`, `--effort`, `/effort`) as each API takes it:
Chat Completions' `reasoning_effort` and Responses' `reasoning.effort` take the name as given
(low, medium, high, or the provider's own, such as minimal); Anthropic's Messages take a thinking
budget in tokens, named here. A name an API cannot take is not sent, and said once."""

from __future__ import annotations

__all__ = ["ANSWER_ROOM", "THINKING_BUDGETS", "effort_refusal", "thinking_budget"]

THINKING_BUDGETS = {"low": 4_000, "medium": 10_000, "high": 31_999}
"""Reasoning effort as Anthropic's thinking budget, in tokens (Claude Code's think, think hard,
ultrathink); a whole number of at least 1,024 is taken as the budget itself."""

ANSWER_ROOM = 4_096
"""Tokens a reply keeps for its answer past the thinking budget (max_tokens is raised to fit)."""


def thinking_budget(effort: str | None) -> int | None:
    """The thinking budget an effort names, or None: no thinking asked (unset, or a name this
    API does not take: `effort_refusal` says so)."""
    if effort is None:
        return None
    if effort.isdigit() and int(effort) >= 1024:
        return int(effort)
    return THINKING_BUDGETS.get(effort)


def effort_refusal(api: str, effort: str | None) -> str | None:
    """Why the model's API cannot take `effort` (it is then not sent), or None."""
    if effort is None or api != "anthropic" or thinking_budget(effort) is not None:
        return None
    return (
        f"reasoning effort {effort!r} is not sent: Anthropic's API takes low, medium or high "
        f"({', '.join(f'{n:,}' for n in THINKING_BUDGETS.values())} thinking tokens) or a budget of "
        "1024 tokens or more (models.<provider/model>.reasoningEffort, --effort, /effort)"
    )
