"""The chat as one HTML page: the tree of lines, opening down to the messages.

`page(messages, lines)` is one self-contained page (inline CSS and a little
inline JS; no external resource, so it works from file://). Its roots are the
maximal built nodes, oldest first: the coarsest nodes whose line is built and
none of whose ancestors' is, found by splitting each top node of the binary
decomposition of [0, T) until its line is built or it is one message. Messages
under no built line are level-0 roots of their own. Each node is a
`<details id="n{l}-{i}">`: its `id+n` and its line ("not summarised yet" when
unbuilt), and inside it its two children (level > 0) or its message, whole
(level 0): kind, id, date, size and text, line breaks kept, scrollable. A link
to `page.html#n{l}-{i}` opens the way down to that node (`#n0-{id}`: a message).

Every text is escaped; characters HTML cannot carry (NUL and other controls,
lone surrogates) are shown as their codes in a marked box, so the page always
encodes as UTF-8. Every message and line appears once (and an unbuilt message's
line shows at most PEEK characters of it): the page is linear in the total
text, and it is built with an explicit stack, not recursion.
"""

from __future__ import annotations

import html
import re
from collections.abc import Collection, Iterator, Mapping, Sequence

from eukhe.memory.log import EntryKind, Message

TITLE = "eukhe chat"
PEEK = 200
"""Characters of a message shown beside its line while the line is not built."""

# C0 controls but tab, newline and carriage return; DEL; C1 controls; surrogates; noncharacters.
_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufdd0-\ufdef\ufffe\uffff]")


def clean(text: str) -> str:
    """`text` escaped for HTML text and attributes, what HTML cannot carry as U+FFFD."""
    return html.escape(_BAD.sub("\ufffd", text), quote=True)


def _code(m: re.Match[str]) -> str:
    c = ord(m.group())
    code = f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"
    return f'<span class="ctl" title="U+{c:04X}, shown as its code">{code}</span>'


def shown(text: str) -> str:
    """`text` as an element's content: escaped, and what HTML cannot carry (NUL, other
    controls, lone surrogates) shown as its code in a marked box: `\\x00`, `\\ud800`."""
    return _BAD.sub(_code, html.escape(text, quote=True))


def top(total: int) -> list[tuple[int, int]]:
    """The top nodes of the binary decomposition of [0, total), oldest first."""
    out, start = [], 0
    for l in range(total.bit_length() - 1, -1, -1):  # noqa: E741 (the tree's own names)
        if total >> l & 1:
            out.append((l, start >> l))
            start += 1 << l
    return out


def roots(total: int, built: Collection[tuple[int, int]]) -> list[tuple[int, int]]:
    """The maximal built nodes tiling [0, total), oldest first; a message under no built
    line is a root of its own (level 0)."""
    out: list[tuple[int, int]] = []
    for node in top(total):
        stack = [node]
        while stack:
            l, i = stack.pop()  # noqa: E741
            if l == 0 or (l, i) in built:
                out.append((l, i))
            else:
                stack += [(l - 1, 2 * i + 1), (l - 1, 2 * i)]  # the older child popped first
    return out


def nodes(total: int) -> int:
    """How many nodes the tree over [0, total) has: floor(total / 2^l) at each level l."""
    return sum(total >> level for level in range(total.bit_length()))


_CSS = """
:root { --ink: #1f2328; --dim: #656d76; --line: #d0d7de; --bg: #f6f8fa; --card: #fff;
  --user: #0969da; --talk: #1a7f37; --tool: #8250df; --echo: #9a6700; --note: #bf3989; }
* { box-sizing: border-box; }
body { margin: 0; padding: 20px 28px 60px; background: var(--bg); color: var(--ink);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; }
header { position: sticky; top: 0; z-index: 2; background: var(--bg); padding: 4px 0 10px;
  border-bottom: 1px solid var(--line); margin-bottom: 12px; }
h1 { font-size: 20px; margin: 0 0 6px; }
.counts { display: flex; flex-wrap: wrap; gap: 6px 18px; color: var(--dim); }
.counts b { color: var(--ink); font-variant-numeric: tabular-nums; }
.tools { margin-top: 8px; display: flex; gap: 8px; align-items: center; color: var(--dim); }
button { font: inherit; padding: 2px 10px; border: 1px solid var(--line); border-radius: 6px;
  background: var(--card); cursor: pointer; }
button:hover { background: #eef1f4; }
details { margin: 3px 0; scroll-margin-top: 140px; }
details > summary { list-style: none; cursor: pointer; padding: 4px 8px; border-radius: 6px;
  background: var(--card); border: 1px solid var(--line); display: flex; gap: 10px;
  align-items: baseline; overflow: hidden; }
details > summary::-webkit-details-marker { display: none; }
details > summary::before { content: "\\25B8"; color: var(--dim); width: 1em; flex: none; }
details[open] > summary::before { content: "\\25BE"; }
summary:hover { border-color: #8c959f; }
.kids { margin: 3px 0 6px 14px; padding-left: 10px; border-left: 2px solid var(--line); }
.at { font: 12px/1.6 ui-monospace, "DejaVu Sans Mono", monospace; color: var(--dim); flex: none;
  min-width: 10.5ch; }
.text { flex: 1; min-width: 0; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
details[open] > summary .text { white-space: normal; }
.unbuilt > summary .text { color: var(--dim); font-style: italic; }
.peek { color: var(--dim); margin-left: 8px; font-style: normal; }
.unbuilt > summary { background: #fbfbfc; border-style: dashed; }
.badge { flex: none; font-size: 11px; padding: 0 6px; border-radius: 10px; border: 1px solid;
  text-transform: uppercase; letter-spacing: .03em; }
.view { color: #0550ae; border-color: #80ccff; background: #ddf4ff; }
.k-user { --k: var(--user); } .k-talk { --k: var(--talk); } .k-tool { --k: var(--tool); }
.k-echo { --k: var(--echo); } .k-note { --k: var(--note); }
.kind { flex: none; color: var(--k); border-color: var(--k); }
.msg { margin: 3px 0 6px 14px; background: var(--card); border: 1px solid var(--line);
  border-left: 4px solid var(--k, var(--line)); border-radius: 6px; }
.meta { padding: 4px 10px; color: var(--dim); font-size: 12px; border-bottom: 1px solid var(--line); }
.meta .kind { font-weight: 600; text-transform: uppercase; }
pre { margin: 0; padding: 8px 10px; max-height: 24em; overflow: auto; white-space: pre-wrap;
  overflow-wrap: anywhere; font: 12.5px/1.5 ui-monospace, "DejaVu Sans Mono", monospace; }
.missing { padding: 8px 10px; color: var(--dim); font-style: italic; }
.ctl { font: 11px ui-monospace, "DejaVu Sans Mono", monospace; color: #cf222e; background: #ffebe9;
  border: 1px solid #ff8182; border-radius: 3px; padding: 0 2px; margin: 0 1px; }
.empty { color: var(--dim); font-style: italic; }
"""

_JS = """
function eukheAll(open) {
  for (const d of document.querySelectorAll("details.node")) d.open = open;
}
function eukheShow() {
  const d = location.hash && document.getElementById(decodeURIComponent(location.hash.slice(1)));
  if (!d) return;
  for (let e = d; e; e = e.parentElement) if (e.tagName === "DETAILS") e.open = true;
  d.scrollIntoView();
}
addEventListener("DOMContentLoaded", eukheShow);
addEventListener("hashchange", eukheShow);
"""


def _kinds(messages: Sequence[Message]) -> str:
    count: dict[EntryKind, int] = {}
    for m in messages:
        count[m.kind] = count.get(m.kind, 0) + 1
    return " · ".join(f"{k.value} {count[k]}" for k in EntryKind if k in count)


def _message(m: Message | None, at: int) -> str:
    if m is None:
        return f'<div class="msg"><div class="missing">message {at} is not in the log</div></div>'
    k = clean(m.kind.value)
    return (
        f'<div class="msg k-{k}"><div class="meta"><span class="kind">{k}</span> · #{m.id} · '
        f"{shown(m.date)} · {m.size} bytes</div><pre>{shown(m.text)}</pre></div>"
    )


def _open(
    node: tuple[int, int],
    lines: Mapping[tuple[int, int], str],
    m: Message | None,
    opened: Collection[tuple[int, int]],
    view: Collection[tuple[int, int]],
) -> str:
    l, i = node  # noqa: E741
    start, n = i << l, 1 << l
    line = lines.get(node)
    cls = "node" + (" unbuilt" if line is None else "")
    if line is not None:
        text = f'<span class="text">{shown(line)}</span>'
    elif m is not None:  # an unbuilt message's line: a glimpse of the message
        text = f'<span class="text">not summarised yet<span class="peek">{shown(m.text[:PEEK])}</span></span>'
    else:
        text = '<span class="text">not summarised yet</span>'
    kind = ""
    if l == 0 and m is not None:
        k = clean(m.kind.value)
        kind = f'<span class="badge kind k-{k}">{k}</span>'
    if node in view:
        text += '<span class="badge view" title="a part of the view">view</span>'
    where = f"messages {start}–{start + n - 1}" if n > 1 else f"message {start}"
    return (
        f'<details class="{cls}" id="n{l}-{i}"{" open" if node in opened else ""}>'
        f'<summary title="{where}"><span class="at">{start}+{n}</span>{kind}{text}</summary>'
    )


def _tree(
    top_nodes: Sequence[tuple[int, int]],
    by_id: Mapping[int, Message],
    lines: Mapping[tuple[int, int], str],
    opened: Collection[tuple[int, int]],
    view: Collection[tuple[int, int]],
) -> Iterator[str]:
    # An explicit stack: a node to open, or a closing tag to write.
    stack: list[tuple[int, int] | str] = list(reversed(top_nodes))
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
            continue
        l, i = item  # noqa: E741
        m = by_id.get(i) if l == 0 else None
        yield _open(item, lines, m, opened, view)
        if l == 0:
            yield _message(m, i)
            yield "</details>"
        else:
            yield '<div class="kids">'
            stack += ["</div></details>", (l - 1, 2 * i + 1), (l - 1, 2 * i)]


def page(
    messages: Sequence[Message],
    lines: Mapping[tuple[int, int], str],
    title: str = TITLE,
    *,
    parts: Sequence[tuple[int, int]] | None = None,
    opened: Collection[tuple[int, int]] = (),
) -> str:
    """The chat's tree as one self-contained HTML page.

    `messages` are the log's (ids 0..T-1; T is one past the highest id), `lines` the built
    lines by node (l, i). `parts`, if given, are the view's nodes: counted on top and marked.
    `opened` are nodes rendered open (`<details open>`)."""
    by_id = {m.id: m for m in messages}
    total = max(by_id) + 1 if by_id else 0
    inside = {(lv, i) for (lv, i) in lines if lv >= 0 and i >= 0 and (i + 1) << lv <= total}
    view = set(parts or ())
    opened = set(opened)
    first = roots(total, inside)
    size = sum(m.size for m in messages)

    counts = [
        f"<span>messages <b>{total}</b>" + (f" ({clean(_kinds(messages))})" if messages else "") + "</span>",
        f"<span>lines built <b>{len(inside)}</b> of {nodes(total)}</span>",
        f"<span>roots <b>{len(first)}</b></span>",
        f"<span>text <b>{size:,}</b> bytes</span>",
    ]
    if parts is not None:
        counts.insert(2, f"<span>view parts <b>{len(parts)}</b></span>")
    if len(lines) > len(inside):
        counts.append(f"<span>lines outside the chat <b>{len(lines) - len(inside)}</b> (not shown)</span>")
    if len(by_id) < total:
        counts.append(f"<span>messages missing <b>{total - len(by_id)}</b></span>")

    out = [
        "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{clean(title)}</title><style>{_CSS}</style><script>{_JS}</script></head><body>",
        f'<header><h1>{shown(title)}</h1><div class="counts">{"".join(counts)}</div>',
        '<div class="tools"><button type="button" onclick="eukheAll(true)">open all</button>'
        '<button type="button" onclick="eukheAll(false)">close all</button>'
        "<span>each line opens into the two lines under it, down to the messages</span></div></header>",
        "<main>",
    ]
    if not first:
        out.append('<p class="empty">The chat is empty.</p>')
    out.extend(_tree(first, by_id, lines, opened, view))
    out.append("</main></body></html>\n")
    return "\n".join(out)
