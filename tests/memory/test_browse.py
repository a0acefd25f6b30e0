"""The chat's page (memory.browse): its tree, its escaping, and how Chromium shows it."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
import zlib
from collections import Counter
from html.parser import HTMLParser
from itertools import accumulate
from pathlib import Path

import pytest

from eukhe.memory.browse import nodes, page, roots, top
from eukhe.memory.log import EntryKind, Message

HOSTILE = (
    "<script>document.body.setAttribute('data-pwned','1')</script></details></summary></pre>\n"
    '<img src=x onerror="document.body.dataset.pwned=2"> "quoted" \'single\' &amp; NUL:\x00 '
    "lone:\ud800 end"
)
# The hostile text as the page shows it: NUL and the lone surrogate as their codes.
HOSTILE_SHOWN = HOSTILE.replace("\x00", "\\x00").replace("\ud800", "\\ud800")
LONG = "\n".join(f"{n:3d}  def line_{n}(): return {n}" for n in range(80))
KINDS = [EntryKind.USER, EntryKind.TALK, EntryKind.TOOL, EntryKind.ECHO, EntryKind.TALK, EntryKind.USER]
KINDS += [EntryKind.TALK, EntryKind.TOOL, EntryKind.ECHO, EntryKind.NOTE, EntryKind.USER]
TEXTS = [
    "Please fix the failing test in tests/store.",
    "Looking at the store tests first.",
    'read {"path": "tests/store/test_chat.py"}',
    LONG,
    "The test expects the first build's line to win.",
    HOSTILE,
    "Done: a second writer's line is read back.",
    'bash {"cmd": "make test"}',
    "412 passed in 9.1s",
    "Imported memory: prefer small commits.",
    "Thanks!",
]


def chat() -> tuple[list[Message], dict[tuple[int, int], str]]:
    """11 messages; 13 lines of the 19 nodes built, some missing (an unbuilt level-1 node under a
    built level-2 one included), and one line past the chat's end."""
    msgs = [
        Message(
            k, KINDS[k], t, len(t.encode("utf-8", "surrogatepass")), f"2025-03-0{1 + k // 6}T09:{k:02d}:00Z"
        )
        for k, t in enumerate(TEXTS)
    ]
    lines = {(0, k): f"message {k}, {KINDS[k].value}" for k in (0, 1, 2, 3, 4, 7, 8)}
    lines[(0, 5)] = "a hostile line: <b>bold</b></summary></details>\x00"
    lines |= {
        (1, 0): "the user asks to fix the store test; the agent starts",
        (2, 0): "asked to fix the store test, the agent reads it",
        (1, 2): "the cause explained; a hostile message",
        (1, 3): "fixed; make test run",
        (2, 1): "explained, fixed, tested",
        (2, 2): "a line past the chat's end",  # messages 8-11: not a node of a chat of 11
    }
    return msgs, lines


ROOTS = [(2, 0), (2, 1), (0, 8), (0, 9), (0, 10)]


def test_roots_are_the_maximal_built_nodes() -> None:
    _, lines = chat()
    assert top(11) == [(3, 0), (1, 4), (0, 10)]
    assert top(0) == [] and top(8) == [(3, 0)]
    assert nodes(11) == 11 + 5 + 2 + 1
    assert roots(11, set(lines)) == ROOTS
    assert roots(11, set()) == [(0, k) for k in range(11)]
    assert roots(8, {(3, 0)}) == [(3, 0)]
    big = 10_000
    assert sum(1 << lv for lv, _ in roots(big, set())) == big
    assert roots(big, {(lv, i) for lv in range(14) for i in range(big >> lv)}) == top(big)


class Tree(HTMLParser):
    """Checks the tags nest; collects the tags, the `<pre>` and `<script>` texts, and each node's
    `<details>`: whether open, its parent node, its summary's text."""

    VOID = frozenset({"meta", "img", "br", "hr", "input", "link"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, str | None]] = []  # (tag, the node's id if a node's details)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.pres: list[str] = []
        self.scripts: list[str] = []
        self.opened: dict[str, bool] = {}
        self.parents: dict[str, str | None] = {}
        self.summaries: dict[str, str] = {}
        self._text: list[str] | None = None

    def _node(self) -> str | None:
        return next((d for _, d in reversed(self.stack) if d is not None), None)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag in self.VOID:
            return
        node = a.get("id") if tag == "details" else None
        if node is not None:
            self.opened[node] = "open" in a
            self.parents[node] = self._node()
        self.stack.append((tag, node))
        if tag in ("pre", "script", "summary"):
            self._text = []

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack[-1][0] == tag, (tag, self.stack[-3:])
        self.stack.pop()
        if self._text is not None and tag in ("pre", "script", "summary"):
            text, self._text = "".join(self._text), None
            if tag == "pre":
                self.pres.append(text)
            elif tag == "script":
                self.scripts.append(text)
            elif (node := self._node()) is not None:
                self.summaries[node] = text

    def handle_data(self, data: str) -> None:
        if self._text is not None:
            self._text.append(data)


def parse(doc: str) -> Tree:
    t = Tree()
    t.feed(doc)
    t.close()
    return t


def test_page_shows_every_text_once_escaped_and_inert() -> None:
    msgs, lines = chat()
    doc = page(msgs, lines, title="</title><script>alert(1)</script>", parts=ROOTS, opened={(2, 1)})
    doc.encode("utf-8")  # strict: no lone surrogate left
    assert "\x00" not in doc and "<script>alert" not in doc and "<script>document" not in doc
    assert "<img" not in doc
    t = parse(doc)
    assert t.stack == []
    # one script, the page's own; no element carries an event handler
    assert [tag for tag, _ in t.tags].count("script") == 1 and "eukheAll" in t.scripts[0]
    assert not [(tag, a) for tag, a in t.tags for k in a if k.startswith("on") and tag != "button"]
    # every message whole, in order, in its own <pre>, as typed (the hostile one with its codes)
    assert t.pres == [*TEXTS[:5], HOSTILE_SHOWN, *TEXTS[6:]]
    # the tree: the roots at the top, every node of them below, each once
    assert [d for d, p in t.parents.items() if p is None] == [f"n{lv}-{i}" for lv, i in ROOTS]
    assert t.parents["n1-1"] == "n2-0" and t.parents["n0-3"] == "n1-1" and t.parents["n0-5"] == "n1-2"
    assert len(t.parents) == 7 + 7 + 3  # (2,0) and (2,1) with all below, and 3 messages
    assert t.opened["n2-1"] and not t.opened["n2-0"]
    # unbuilt nodes say so and still open into their children
    assert "not summarised yet" in t.summaries["n1-1"] and "n0-2" in t.parents
    assert "not summarised yet" in t.summaries["n0-6"] and TEXTS[6] in t.summaries["n0-6"]
    assert "a hostile line: <b>bold</b></summary></details>\\x00" in t.summaries["n0-5"]
    assert "explained, fixed, tested" in t.summaries["n2-1"]
    # the counts on top
    assert "messages <b>11</b>" in doc and "lines built <b>13</b> of 19" in doc
    assert "view parts <b>5</b>" in doc and "lines outside the chat <b>1</b>" in doc


def test_page_stays_linear_and_flat_at_ten_thousand_messages() -> None:
    total = 10_000
    msgs = [Message(k, EntryKind.TALK, f"message {k} " + "x" * 100, 110, "2025-03-01") for k in range(total)]
    built = {(lv, i): f"line {lv}/{i}" for lv in range(14) for i in range((total - 37) >> lv)}
    text = sum(len(m.text) for m in msgs) + sum(map(len, built.values()))
    for lines in (built, {}):
        doc = page(msgs, lines)
        assert len(doc) < 2 * text + 600 * (total + len(lines)), len(doc)
        assert doc.count("<pre>") == total
    assert page([], {}).count("The chat is empty") == 1
    msgs, _ = chat()
    gap = page(msgs[:3] + msgs[4:], {})
    assert "messages missing <b>1</b>" in gap and "message 3 is not in the log" in gap


# ---------------------------------------------------------------- in Chromium

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed: apt-get install chromium (make test does, as root)"
)


def chromium(tmp: Path, *runs: list[str]) -> list[bytes]:
    """Each run of Chromium's arguments at once, each in its own profile: their outputs."""
    assert CHROMIUM is not None
    cmd = [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run"]
    cmd += ["--disable-extensions", "--hide-scrollbars"]
    env = {**os.environ, "HOME": str(tmp)}
    procs = [
        subprocess.Popen(
            [*cmd, f"--user-data-dir={tmp / f'profile{k}'}", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        for k, args in enumerate(runs)
    ]
    outs = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=60)
            assert p.returncode == 0, err.decode(errors="replace")[-2000:]
            outs.append(out)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return outs


def add(a: bytes, b: bytes) -> bytes:
    """a + b byte by byte, mod 256: on big integers, the high bits apart so no carry crosses."""
    n = len(a)
    low, high = int.from_bytes(b"\x7f" * n, "big"), int.from_bytes(b"\x80" * n, "big")
    x, y = int.from_bytes(a, "big"), int.from_bytes(b, "big")
    return (((x & low) + (y & low)) ^ ((x ^ y) & high)).to_bytes(n, "big")


def pixels(png: bytes) -> tuple[int, int, int, list[bytes]]:
    """A tiny PNG decoder (8-bit RGB or RGBA, not interlaced): width, height, bytes a pixel, rows."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    at, data, head = 8, b"", b""
    while at < len(png):
        (n,) = struct.unpack(">I", png[at : at + 4])
        kind, body = png[at + 4 : at + 8], png[at + 8 : at + 8 + n]
        head = body if kind == b"IHDR" else head
        data += body if kind == b"IDAT" else b""
        at += 12 + n
    w, h, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", head)
    assert depth == 8 and color in (2, 6) and interlace == 0
    bpp = 3 if color == 2 else 4
    raw, stride, rows = zlib.decompress(data), w * bpp, []
    prior = bytes(stride)
    for y in range(h):
        f, line = raw[y * (stride + 1)], raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)]
        if f == 1:  # Sub: per channel, a running sum
            out = bytearray(stride)
            for c in range(bpp):
                out[c::bpp] = bytes(v & 255 for v in accumulate(line[c::bpp]))
            line = bytes(out)
        elif f == 2:  # Up
            line = add(line, prior)
        elif f in (3, 4):  # Average, Paeth: byte by byte
            out = bytearray(line)
            for x in range(stride):
                a, b, c = (out[x - bpp], prior[x], prior[x - bpp]) if x >= bpp else (0, prior[x], 0)
                if f == 3:
                    out[x] = (out[x] + (a + b) // 2) & 255
                else:
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    out[x] = (out[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            line = bytes(out)
        rows.append(line)
        prior = line
    return w, h, bpp, rows


@needs_chromium
def test_chromium_shows_the_tree_and_runs_nothing_of_the_chat(tmp_path: Path) -> None:
    msgs, lines = chat()
    html = tmp_path / "chat.html"
    html.write_text(page(msgs, lines, parts=ROOTS, opened={(2, 1), (1, 2), (0, 5)}), encoding="utf-8")
    # The DOM after the page's scripts ran, opened at message 3 by a link (#n0-3); and a screenshot.
    shot = tmp_path / "chat.png"
    dom = chromium(
        tmp_path,
        ["--dump-dom", f"{html.as_uri()}#n0-3"],
        [f"--screenshot={shot}", "--window-size=1200,900", html.as_uri()],
    )[0].decode()
    t = parse(dom)
    assert 'data-pwned="' not in dom and not [a for tag, a in t.tags if tag == "body" and a]
    assert not [tag for tag, _ in t.tags if tag == "img"]
    assert t.pres == [*TEXTS[:5], HOSTILE_SHOWN, *TEXTS[6:]]
    assert t.opened["n2-0"] and t.opened["n1-1"] and t.opened["n0-3"]  # the link's way down
    assert t.opened["n0-5"] and not t.opened["n1-0"] and not t.opened["n0-8"]
    # The screenshot: a real picture, text on the page's background, not a blank.
    png = shot.read_bytes()
    assert len(png) > 20_000
    w, h, bpp, rows = pixels(png)
    assert (w, h) == (1200, 900)
    px = [r[x : x + 3] for r in rows[::3] for x in range(0, len(r), 3 * bpp)]  # every third pixel
    background = Counter(px).most_common(1)[0][0]
    assert background == bytes.fromhex("f6f8fa")  # the page's own, so its style applied
    ink = [p for p in px if sum(p) < 3 * 110]
    assert sum(p != background for p in px) > len(px) // 50 and len(ink) > 200
    if os.environ.get("EUKHE_KEEP_SHOT"):  # to look at it: EUKHE_KEEP_SHOT=/tmp/chat.png
        shutil.copy(shot, os.environ["EUKHE_KEEP_SHOT"])
    print(f"screenshot {len(png)} bytes; {len(ink)} ink pixels of {len(px)} sampled", file=sys.stderr)
