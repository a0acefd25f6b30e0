"""`eukhe demo`: a misbehaving model on loopback HTTP, and a real task through the
whole harness with the real SDK. Every recovery shows as it happens; it ends answered."""

from __future__ import annotations

import json
from typing import Any

TASK = "Read notes.txt and tell me what the project is called."

NOTES = "The project is called eukhe: a harness whose every run ends.\n"

_READ = {"calls": [{"name": "read", "arguments": {"path": "notes.txt"}}], "chunks": 4}

SCRIPT: dict[str, Any] = {
    "replies": [
        # 1. a reply of only thinking: no text, no tool call
        {"thinking": "The user wants the project name. I should plan everything first...", "chunks": 4},
        # 2. after the note: the call leaked as Hermes markup in the text
        {
            "when": "Harness note",
            "text": "I will read the file.\n<tool_call>\n"
            + json.dumps({"name": "read", "arguments": {"path": "notes.txt"}})
            + "\n</tool_call>",
            "chunks": 6,
        },
        # 3-6. the same call with the same result, round after round
        _READ,
        _READ,
        _READ,
        _READ,
        # 7. after the redirect note: the stream goes silent
        {
            "when": "Harness note",
            "text": "Thinking about the answer " * 4,
            "chunks": 8,
            "stallAfter": 2,
            "stall": 30,
        },
        # 8. after the stall note: the answer
        {"when": "Harness note", "text": "The project is called eukhe.", "chunks": 3},
    ]
}
