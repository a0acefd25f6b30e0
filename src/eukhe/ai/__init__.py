"""Providers: one interface over every model API. A provider streams events and
ends with exactly one `Reply`; failures arrive classified (`Failure`)."""

from typing import Any

from eukhe.ai.errors import redact
from eukhe.ai.openai_chat import OpenAIChat
from eukhe.ai.openai_responses import Job, OpenAIResponses, PollFailed, deadline
from eukhe.ai.reply import (
    RETRYABLE,
    CallDelta,
    Done,
    Event,
    Failure,
    Kind,
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
    "Job",
    "Kind",
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


def __getattr__(name: str) -> Any:
    """The Anthropic adapter loads its SDK (the slowest import) only when asked for."""
    if name == "AnthropicMessages":
        from eukhe.ai.anthropic import AnthropicMessages

        return AnthropicMessages
    raise AttributeError(f"module 'eukhe.ai' has no attribute {name!r}")
