"""Providers: one interface over every model API. A provider streams events and
ends with exactly one `Reply`; failures arrive classified (`Failure`)."""

from typing import Any

from eukhe.ai.errors import redact
from eukhe.ai.jobs import Job, PollFailed, deadline
from eukhe.ai.reply import (
    RETRYABLE,
    CallDelta,
    Done,
    Event,
    Failure,
    FailureKind,
    Reply,
    Stop,
    TextDelta,
    Thinking,
    ThinkingDelta,
    ToolCall,
    Usage,
    UsageEvent,
)
from eukhe.ai.request import Message, Request, Tool

__all__ = [
    "RETRYABLE",
    "AnthropicMessages",
    "CallDelta",
    "Done",
    "Event",
    "Failure",
    "FailureKind",
    "Job",
    "Message",
    "OpenAIChat",
    "OpenAIResponses",
    "PollFailed",
    "Reply",
    "Request",
    "Stop",
    "TextDelta",
    "Thinking",
    "ThinkingDelta",
    "Tool",
    "ToolCall",
    "Usage",
    "UsageEvent",
    "deadline",
    "redact",
]


_LAZY = {
    "AnthropicMessages": "eukhe.ai.anthropic",
    "OpenAIChat": "eukhe.ai.openai_chat",
    "OpenAIResponses": "eukhe.ai.openai_responses",
}
"""The adapters load their SDKs (the slowest imports of eukhe: over a second each on a slow
machine) only when asked for: a process that reads replies, or runs no model (the owner,
`eukhe chat status`), never pays for them."""


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'eukhe.ai' has no attribute {name!r}")
