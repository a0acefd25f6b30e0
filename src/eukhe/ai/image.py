"""Images a prompt attaches: what they are (`Image`, a reference by SHA-256; the bytes live in
the store's image table, once), what their header says (a small parser for PNG, JPEG, GIF and
WebP: their type and size, with no image library), and which models take them.

A model takes images when its settings say so (`models.<m>.input: ["text", "image"]`), else
when its provider is OpenAI's or Anthropic's own; any other gets a clear error before the
request (`refusal`).
"""

from __future__ import annotations

import base64
import hashlib
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from eukhe.errors import Code, EukheError
from eukhe.json_types import JsonMapping, JsonObject

__all__ = [
    "MAX_BYTES",
    "MAX_SIDE",
    "Image",
    "ImageError",
    "base64_of",
    "data_url",
    "image_of",
    "measure",
    "refusal",
    "takes_images",
    "too_big",
]

MAX_BYTES = 5 * 1024 * 1024
"""Bytes an image may have: Anthropic's limit for one image, the lowest of the providers'."""
MAX_SIDE = 8000
"""Pixels an image's side may have (Anthropic refuses larger ones)."""

HOSTED = ("openai", "anthropic")
"""The providers whose own models take images without a setting saying so."""


class ImageError(EukheError, ValueError):
    """An image that cannot be attached, or a model that takes none: says which and why."""

    code = Code.INPUT


@dataclass(frozen=True)
class Image:
    """An attached image, by reference: its bytes are in the store's image table under `sha256`."""

    sha256: str
    media_type: str  # image/png, image/jpeg, image/gif or image/webp
    width: int
    height: int
    name: str  # the path the person gave, as they gave it

    @property
    def shown(self) -> str:
        """How a transcript and the chat's log show it."""
        return f"[image: {self.name}, {self.width}x{self.height}]"

    def json(self) -> JsonObject:
        """As a run's spec holds it (`run.spec.RunSpec`)."""
        return {"sha256": self.sha256, "mediaType": self.media_type, "width": self.width,
                "height": self.height, "name": self.name}  # fmt: skip

    @staticmethod
    def of(d: JsonMapping) -> Image:
        return Image(str(d["sha256"]), str(d["mediaType"]), int(d["width"]), int(d["height"]), str(d["name"]))


def base64_of(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def data_url(image: Image, data: bytes) -> str:
    """The image as a `data:` URL, as OpenAI's APIs take one inline."""
    return f"data:{image.media_type};base64,{base64_of(data)}"


def too_big(name: str, size: int) -> ImageError | None:
    """Why an image of `size` bytes cannot be attached, or None."""
    if size <= MAX_BYTES:
        return None
    return ImageError(f"{name}: {size:,} bytes, over the {MAX_BYTES:,} an attached image may have")


def image_of(data: bytes, name: str) -> Image:
    """The image `data` is (read from `name`), or an ImageError saying why it cannot be attached."""
    if (big := too_big(name, len(data))) is not None:
        raise big
    media, width, height = measure(data, name)
    if width < 1 or height < 1 or max(width, height) > MAX_SIDE:
        raise ImageError(f"{name}: {width}x{height} pixels; an attached image's sides are 1 to {MAX_SIDE}")
    return Image(hashlib.sha256(data).hexdigest(), media, width, height, name)


def measure(data: bytes, name: str = "the image") -> tuple[str, int, int]:
    """The media type, width and height the header of `data` says."""
    try:
        if data.startswith(b"\x89PNG\r\n\x1a\n"):
            if data[12:16] != b"IHDR":
                raise ImageError(f"{name}: a PNG without its IHDR header first")
            w, h = struct.unpack(">II", data[16:24])
            return "image/png", w, h
        if data[:6] in (b"GIF87a", b"GIF89a"):
            w, h = struct.unpack("<HH", data[6:10])
            return "image/gif", w, h
        if data.startswith(b"\xff\xd8"):
            return ("image/jpeg", *_jpeg(data, name))
        if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
            return ("image/webp", *_webp(data, name))
    except struct.error:
        raise ImageError(f"{name}: its header is cut short") from None
    raise ImageError(f"{name}: not a PNG, JPEG, GIF or WebP image")


def _jpeg(data: bytes, name: str) -> tuple[int, int]:
    """The size in a JPEG's start-of-frame segment: the markers are walked to it."""
    i = 2
    while i + 4 <= len(data):
        if data[i] != 0xFF:
            raise ImageError(f"{name}: a JPEG whose segments do not follow one another")
        marker = data[i + 1]
        if marker == 0xFF:  # fill bytes before a marker
            i += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # markers without a length
            i += 2
            continue
        (length,) = struct.unpack(">H", data[i + 2 : i + 4])
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):  # a start of frame
            h, w = struct.unpack(">HH", data[i + 5 : i + 9])
            return w, h
        if marker == 0xD9 or length < 2:
            break
        i += 2 + length
    raise ImageError(f"{name}: a JPEG without a frame header")


def _webp(data: bytes, name: str) -> tuple[int, int]:
    chunk = data[12:16]
    if chunk == b"VP8X":  # extended: 24-bit sizes less one
        w = int.from_bytes(data[24:27], "little") + 1
        h = int.from_bytes(data[27:30], "little") + 1
        return w, h
    if chunk == b"VP8L":  # lossless: 14-bit sizes less one, after the signature byte
        if data[20] != 0x2F:
            raise ImageError(f"{name}: a lossless WebP without its signature")
        (bits,) = struct.unpack("<I", data[21:25])
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 ":  # lossy: a key frame's start code, then 14-bit sizes
        if data[23:26] != b"\x9d\x01\x2a":
            raise ImageError(f"{name}: a lossy WebP without its frame's start code")
        w, h = struct.unpack("<HH", data[26:30])
        return w & 0x3FFF, h & 0x3FFF
    raise ImageError(f"{name}: a WebP whose first chunk is {chunk!r}, not VP8, VP8L or VP8X")


def takes_images(provider: str, model: str, settings: JsonMapping) -> bool:
    """Whether `provider/model` takes images: `models.<m>.input` when set, else whether the
    provider is OpenAI's or Anthropic's own."""
    models = settings.get("models")
    spec = models.get(f"{provider}/{model}") if isinstance(models, Mapping) else None
    given = spec.get("input") if isinstance(spec, Mapping) else None
    if isinstance(given, Sequence) and not isinstance(given, str):
        return "image" in given
    return provider in HOSTED


def refusal(provider: str, model: str) -> str:
    """Why a prompt with images is not sent to a model that takes none, and the way out."""
    name = f"{provider}/{model}"
    return (
        f"{name} does not take images: only OpenAI's and Anthropic's models do unless the settings "
        f'say so (models.{name}.input: ["text", "image"]); send the prompt without the image'
    )
