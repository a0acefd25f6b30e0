"""What the harness asks a provider: a model, the context, the tools offered."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from eukhe.ai.image import Image, ImageError
from eukhe.ai.reply import ToolCall
from eukhe.json_types import JsonMapping


@dataclass(frozen=True)
class Message:
    """One context message. `calls`: an assistant's tool calls; `call_id` and
    `is_error`: the call a tool result answers, and whether it failed; `images`: a user's
    attached images, by reference (their bytes ride on the request, `Request.image_data`)."""

    role: str  # "user", "assistant", "tool" or "system"
    content: str = ""
    calls: tuple[ToolCall, ...] = ()
    call_id: str | None = None
    is_error: bool = False  # a tool result that reports an error
    images: tuple[Image, ...] = ()


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    schema: JsonMapping = field(default_factory=lambda: {"type": "object", "properties": {}})


@dataclass(frozen=True)
class Request:
    model: str
    messages: tuple[Message, ...]
    tools: tuple[Tool, ...] = ()
    system: str = ""
    max_tokens: int | None = None  # None: the provider's own limit
    temperature: float | None = None  # None: the provider's own default
    effort: str | None = None  # reasoningEffort or --effort (`ai.effort`); None: the model's own
    # the bytes of the images its messages attach, by SHA-256 (read from the store's image table,
    # never recorded with a step); compare=False: a request is the same whatever its bytes' object
    image_data: Mapping[str, bytes] = field(
        default_factory=dict, compare=False, repr=False, metadata={"stored": False}
    )

    def image_bytes(self, image: Image) -> bytes:
        """An attached image's bytes, or an ImageError when the request lacks them."""
        data = self.image_data.get(image.sha256)
        if data is None:
            raise ImageError(f"{image.name}: its bytes are not in the store's image table")
        return data
