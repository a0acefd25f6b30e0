"""The public face of `eukhe.ai`: every name resolves, none drifts unnoticed. What the package
loads (or loads lazily, the adapters) resolves on it; what it names for the type checker
resolves on the module it names it from (`tests/test_exports.py` reads where)."""

from __future__ import annotations

import importlib
from pathlib import Path

import eukhe.ai
from tests.test_exports import face_of

PUBLIC = {
    "RETRYABLE",
    "AnthropicMessages",
    "BUILTIN",
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
    "LOOK",
    "LOOK_BESIDE",
    "MAX_BYTES",
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
}

LOADED = {
    "RETRYABLE",
    "AnthropicMessages",
    "CallDelta",
    "Done",
    "Event",
    "Failure",
    "Job",
    "FailureKind",
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
}
"""What `eukhe.ai` itself gives at run time (the adapters through its lazy `__getattr__`)."""


def test_exports_are_the_pinned_public_names() -> None:
    assert set(eukhe.ai.__all__) == PUBLIC
    face = face_of(Path(eukhe.ai.__file__).parent)
    assert face is not None and face.loaded & PUBLIC == LOADED
    for name in LOADED:
        assert getattr(eukhe.ai, name) is not None
    for name in PUBLIC - LOADED:
        module, _, attr = face.names[name].rpartition(".")
        assert getattr(importlib.import_module(module), attr) is not None, name
