"""A fetched body as the model reads it: HTML as Markdown (markdownify, on BeautifulSoup),
other text as it is, a PDF's text (pypdf), anything else said by its type and size.

Both libraries take a tenth of a second to import, so this module is loaded by a run's
first fetch only (`tools.web.fetch`), and by the warm template. The conversion is CPU
work on at most `webFetch.maxBytes` bytes: the caller runs it off the event loop, within a
deadline. A thread cannot be killed, so the conversion looks at `stop` as it goes (each
tag of a page, each page of a PDF and each operation on it) and ends, saying `STOPPED`, once
the caller has set it: a PDF of 50 KB can hold hours of text extraction (many pages that show
one content stream), and would otherwise burn a core that long after its fetch gave up.
"""

from __future__ import annotations

import io
import re
import threading

import pypdf
from bs4 import BeautifulSoup
from markdownify import ATX, MarkdownConverter

from eukhe.rules import page

__all__ = ["PDF", "STOPPED", "converted", "kind_of"]

HTML = ("text/html", "application/xhtml+xml")
PDF = "application/pdf"
TEXT = (
    "application/json",
    "application/xml",
    "application/javascript",
    "application/x-yaml",
    "application/yaml",
)
"""Types read as text besides `text/*` and `+json`, `+xml` ones."""

SNIFFED = 1024
"""Bytes looked at to tell the kind of a body that names no type."""

_BLANK = re.compile(r"\n{3,}")


STOPPED = "stopped"
"""What a conversion stopped before it was done gives as what it was (with no text)."""


class _Stopped(BaseException):
    """The conversion was stopped (its deadline passed, or the run was aborted): as a
    cancellation, no handler of a failure (a PDF's `except Exception`) takes it for one;
    `converted` ends by it."""


class _Markdown(MarkdownConverter):
    """markdownify's converter (ATX headings), which stops when it is told to, at its next tag."""

    def __init__(self, stop: threading.Event) -> None:
        super().__init__(heading_style=ATX)
        self.stop = stop

    def process_tag(self, node: object, parent_tags: object = None) -> object:
        if self.stop.is_set():
            raise _Stopped
        return super().process_tag(node, parent_tags)  # type: ignore[misc]  # not in markdownify's stub


def kind_of(content_type: str, head: bytes) -> str:
    """`html`, `pdf`, `text` or `binary`: by the type the server named (its media type, no
    parameters), else by the body's first bytes."""
    media = content_type.split(";", 1)[0].strip().lower()
    if media in HTML:
        return "html"
    if media == PDF:
        return "pdf"
    if media.startswith("text/") or media in TEXT or media.endswith(("+json", "+xml")):
        return "text"
    if media:
        return "binary"
    start = head[:SNIFFED].lstrip().lower()
    if start.startswith(b"%pdf-"):
        return "pdf"
    if start.startswith((b"<!doctype html", b"<html")):
        return "html"
    if b"\x00" in start:
        return "binary"
    try:
        start.decode("utf-8")
    except UnicodeDecodeError as e:
        if e.start < len(start) - 3:  # a character cut at the end of the sniff is still text
            return "binary"
    return "text"


def converted(
    body: bytes, content_type: str, charset: str | None, stop: threading.Event | None = None
) -> tuple[str, str]:
    """The body as text, and what it was (`HTML converted to Markdown`, `text`, `PDF text`,
    or a type and size for a body shown as neither); no text and `STOPPED` when `stop` was
    set before it was done. Never raises for a malformed body: a PDF that cannot be read
    says why."""
    try:
        return _converted(body, content_type, charset, stop or threading.Event())
    except _Stopped:  # nobody waits for it any more
        return "", STOPPED


def _converted(body: bytes, content_type: str, charset: str | None, stop: threading.Event) -> tuple[str, str]:
    """`converted`, raising `_Stopped` at its next look once `stop` is set."""
    kind = kind_of(content_type, body)
    if kind == "html":
        soup = BeautifulSoup(body, "html.parser", from_encoding=charset)
        try:
            text = _Markdown(stop).convert_soup(soup)
        except RecursionError:  # a few hundred nested tags: the converter recurses, the text walk does not
            for tag in soup.find_all(["script", "style"]):
                tag.extract()
            text = soup.get_text("\n")
            return _BLANK.sub("\n\n", text).strip() + "\n", "HTML nested too deeply for Markdown: its text"
        return _BLANK.sub("\n\n", text).strip() + "\n", "HTML converted to Markdown"
    if kind == "pdf":
        return _pdf(body, stop)
    if kind == "text":
        return _decoded(body, charset), "text"
    media = page.server_name(content_type.split(";", 1)[0].strip()) or "no type named"
    return "", f"{media}, {len(body):,} bytes: not text, so not shown"


def _decoded(body: bytes, charset: str | None) -> str:
    try:
        return body.decode(charset or "utf-8", errors="replace")
    except LookupError:  # a charset Python does not know
        return body.decode("utf-8", errors="replace")


def _pdf(body: bytes, stop: threading.Event) -> tuple[str, str]:
    def each(*operation: object) -> None:  # pypdf's visitor: before each operation of a page
        if stop.is_set():
            raise _Stopped

    try:
        reader = pypdf.PdfReader(io.BytesIO(body))
        pages = []
        for page in reader.pages:
            each()
            pages.append(page.extract_text(visitor_operand_before=each) or "")
    except Exception as e:  # pypdf raises many kinds for a malformed file; none is the run's
        return "", f"a PDF of {len(body):,} bytes whose text could not be read: {type(e).__name__}: {e}"
    text = "\n\n".join(f"[page {i}]\n{t.strip()}" for i, t in enumerate(pages, 1))
    return text + "\n", f"PDF text, {len(pages)} pages"
