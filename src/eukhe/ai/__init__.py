"""Providers: one interface over every model API. A provider streams events and
ends with exactly one `Reply`; failures arrive classified (`Failure`)."""

from typing import TYPE_CHECKING

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

# Named, not loaded: each is imported from its module (the adapters' SDKs load only when asked for).
if TYPE_CHECKING:
    from eukhe.ai.anthropic import AnthropicMessages
    from eukhe.ai.effort import effort_refusal
    from eukhe.ai.faux import FauxServer, ScriptError, load, parse
    from eukhe.ai.guard import guard
    from eukhe.ai.image import MAX_BYTES, Image, ImageError, image_of, refusal, takes_images, too_big
    from eukhe.ai.listed import LOOK, LOOK_BESIDE, looking
    from eukhe.ai.models import (
        BUILTIN,
        ModelError,
        OnFirstRequest,
        Route,
        key_variables,
        parse_name,
        provider_for,
        resolve,
        route,
    )
    from eukhe.ai.openai_chat import OpenAIChat
    from eukhe.ai.openai_responses import OpenAIResponses
    from eukhe.ai.provider import Deferred, Provider
    from eukhe.ai.tls import verified

__all__ = [
    "BUILTIN",
    "LOOK",
    "LOOK_BESIDE",
    "MAX_BYTES",
    "RETRYABLE",
    "AnthropicMessages",
    "CallDelta",
    "Deferred",
    "Done",
    "Event",
    "Failure",
    "FailureKind",
    "FauxServer",
    "Image",
    "ImageError",
    "Job",
    "Message",
    "ModelError",
    "OnFirstRequest",
    "OpenAIChat",
    "OpenAIResponses",
    "PollFailed",
    "Provider",
    "Reply",
    "Request",
    "Route",
    "ScriptError",
    "Stop",
    "TextDelta",
    "Thinking",
    "ThinkingDelta",
    "Tool",
    "ToolCall",
    "Usage",
    "UsageEvent",
    "deadline",
    "effort_refusal",
    "guard",
    "image_of",
    "key_variables",
    "load",
    "looking",
    "parse",
    "parse_name",
    "provider_for",
    "redact",
    "refusal",
    "resolve",
    "route",
    "takes_images",
    "too_big",
    "verified",
]


_LAZY = {
    "AnthropicMessages": "eukhe.ai.anthropic",
    "OpenAIChat": "eukhe.ai.openai_chat",
    "OpenAIResponses": "eukhe.ai.openai_responses",
}
"""The adapters load their SDKs (the slowest imports of eukhe: over a second each on a slow
machine) only when asked for: a process that reads replies, or runs no model (the owner,
`eukhe chat status`), never pays for them."""


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'eukhe.ai' has no attribute {name!r}")
