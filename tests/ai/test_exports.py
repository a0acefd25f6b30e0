"""The public face of `eukhe.ai`: every name resolves, none drifts unnoticed."""

from __future__ import annotations

import eukhe.ai

PUBLIC = {
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


def test_exports_are_the_pinned_public_names() -> None:
    assert set(eukhe.ai.__all__) == PUBLIC
    for name in PUBLIC:
        assert getattr(eukhe.ai, name) is not None
