"""Leaked tool calls: markup a model printed as text instead of calling the tool API (spec H4.8 rule 3).

A reply with no API tool call has its text scanned for five markup families:

- ``hermes``: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` (Hermes, Qwen2.5, Qwen3);
- ``qwen3``: ``<tool_call><function=NAME><parameter=KEY>value</parameter></function></tool_call>``
  (Qwen3-Coder; the ``<tool_call>`` wrapper may be missing);
- ``qwen-xml``: ``<tool_calls><NAME key="value"/></tool_calls>``;
- ``kimi``: Kimi K2 section tokens ``<|tool_calls_section_begin|>`` ... ``<|tool_calls_section_end|>``;
- ``dsml``: DeepSeek's special tokens (``<｜tool▁calls▁begin｜>``, V3 and V3.1 forms) and its DSML tags
  (``<｜DSML｜function_calls>``), with fullwidth or ASCII bars and ``▁`` or ``_``.

Markup inside fenced code (``` or ~~~) or an inline code span is quoted, not called, and is ignored.
`scan` is total: on any input it returns a `Scan` and never raises.
"""

from __future__ import annotations

import ast
import json
import math
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from eukhe.json_types import JsonMapping, JsonObject, JsonValue

Markup = Literal["hermes", "qwen3", "qwen-xml", "kimi", "dsml"]


@dataclass(frozen=True)
class Call:
    """One tool call rebuilt from markup."""

    name: str
    arguments: JsonObject


@dataclass(frozen=True)
class Leak:
    """Markup that was found but could not be turned into offered, well-formed calls."""

    markup: Markup
    reason: str


@dataclass(frozen=True)
class Scan:
    """What a scan found: the calls (all or none), the leak if any, and the visible text."""

    calls: tuple[Call, ...]
    leak: Leak | None
    text: str


def scan(text: str, tools: Mapping[str, JsonMapping]) -> Scan:
    """Scan `text` for leaked tool-call markup against the offered `tools` (name -> JSON Schema).

    No markup: no calls, no leak, the text unchanged. Markup whose every call parses and names an
    offered tool: the calls in order, no leak, the text without the markup. Otherwise: no calls, a
    `Leak` naming the first failing section's family and why, and the text unchanged.
    """
    try:
        return _scan(text, tools)
    except Exception:  # pragma: no cover - last resort: scan must be total
        return Scan((), None, text)


# ---------------------------------------------------------------------------------------------------
# Internals
# ---------------------------------------------------------------------------------------------------


class _Bad(Exception):
    """A section that cannot be read; its message is the leak's reason."""


# How a parameter's value was given, which decides how it is typed.
_TEXT = "text"  # a raw string: convert by schema type; unknown parameters stay strings
_JSONISH = "jsonish"  # DSML string="false": convert by schema; unknown parameters are JSON if they parse
_RAW = "raw"  # DSML string="true": the string as given


@dataclass
class _Raw:
    """A call as read from markup, before its tool is checked and its parameters typed."""

    number: int
    name: str
    arguments: JsonObject
    modes: dict[str, str]  # parameter -> _TEXT / _JSONISH / _RAW; absent = JSON value kept as given


_MAX_SHOWN = 40


def _short(value: str) -> str:
    return repr(value if len(value) <= _MAX_SHOWN else value[:_MAX_SHOWN] + "…")


class _Finder:
    """Next match of a pattern at or after a position, memoised so forward scans stay linear."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._memo: dict[re.Pattern[str], tuple[int, re.Match[str] | None]] = {}

    def search(self, pattern: re.Pattern[str], pos: int) -> re.Match[str] | None:
        memo = self._memo.get(pattern)
        if memo is not None:
            since, m = memo
            if since <= pos and (m is None or m.start() >= pos):
                return m
        m = pattern.search(self.text, pos)
        self._memo[pattern] = (pos, m)
        return m

    def find(self, pattern: re.Pattern[str], pos: int) -> int:
        m = self.search(pattern, pos)
        return -1 if m is None else m.start()


def _bar(s: str) -> str:
    """A DeepSeek token pattern: `|` stands for either bar, `_` for `▁` or `_`."""
    return s.replace("|", "[｜|]").replace("_", "[▁_]")


# Openers, in one alternation so the earliest wins.
_OPEN = re.compile(
    r"<tool_calls>"
    r"|<tool_call>"
    r"|<function=[^<>\n]+>"
    r"|<\|tool_calls?_section_begin\|>"
    r"|<\|tool_call_begin\|>"
    r"|"
    + _bar(r"<|tool_calls_begin|>")
    + r"|"
    + _bar(r"<|tool_call_begin|>")
    + r"|<[｜|]DSML[｜|](?:function_calls>|invoke\b)"
)
_WS = re.compile(r"\s*")
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})", re.MULTILINE)
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_TICKS = re.compile(r"`+")

# hermes / qwen3
_TOOL_CALL = re.compile(r"<tool_call>")
_TOOL_CALL_END = re.compile(r"</tool_call>")
_FUNC_OPEN = re.compile(r"<function=([^<>\n]+)>")
_FUNC_END = "</function>"
_PARAM_OPEN = re.compile(r"<parameter=([^<>\n]+)>")
_PARAM_OPEN_ANY = re.compile(r"<parameter=")
_PARAM_END = re.compile(r"</parameter>")
_QWEN3_STOP = re.compile(r"<parameter=|</function>|</tool_call>")

# qwen-xml
_CALLS_END = "</tool_calls>"
_TAG_OPEN = re.compile(r"<([A-Za-z_][\w.\-]*)((?:\s+[\w.\-:]+\s*=\s*(?:\"[^\"]*\"|'[^']*'))*)\s*(/?)>")
_ATTR = re.compile(r"([\w.\-:]+)\s*=\s*(?:\"([^\"]*)\"|'([^']*)')")

# kimi
_K_SECTION = re.compile(r"<\|tool_calls?_section_begin\|>")
_K_SECTION_END = re.compile(r"<\|tool_calls?_section_end\|>")
_K_CALL = re.compile(r"<\|tool_call_begin\|>")
_K_SEP = re.compile(r"<\|tool_call_argument_begin\|>")
_K_CALL_END = re.compile(r"<\|tool_call_end\|>")
_K_ID = re.compile(r"(?:functions\.)?([\w.\-]+?)(?::\d+)?")

# DeepSeek tokens
_D_SECTION = re.compile(_bar(r"<|tool_calls_begin|>"))
_D_SECTION_END = re.compile(_bar(r"<|tool_calls_end|>"))
_D_CALL = re.compile(_bar(r"<|tool_call_begin|>"))
_D_SEP = re.compile(_bar(r"<|tool_sep|>"))
_D_CALL_END = re.compile(_bar(r"<|tool_call_end|>"))

# DeepSeek DSML tags
_DSML = "<[｜|]DSML[｜|]"
_X_CALLS = re.compile(_DSML + r"function_calls>")
_X_CALLS_END = re.compile("</[｜|]DSML[｜|]function_calls>")
_X_INVOKE = re.compile(_DSML + r"invoke\s+name\s*=\s*\"([^\"<>]*)\"\s*>")
_X_INVOKE_END = re.compile("</[｜|]DSML[｜|]invoke>")
_X_PARAM = re.compile(_DSML + r"parameter\s+name\s*=\s*\"([^\"<>]*)\"(?:\s+string\s*=\s*\"(\w*)\")?\s*>")
_X_PARAM_END = re.compile("</[｜|]DSML[｜|]parameter>")
_X_STOP = re.compile("(?:" + _DSML + r"parameter\b|</[｜|]DSML[｜|](?:invoke|function_calls)>)")


def _skip_ws(text: str, pos: int) -> int:
    m = _WS.match(text, pos)
    return pos if m is None else m.end()


def _trim_newline(value: str) -> str:
    """Drop one leading and one trailing newline, as the markup puts values on their own lines."""
    if value.startswith("\r\n"):
        value = value[2:]
    elif value.startswith("\n"):
        value = value[1:]
    if value.endswith("\r\n"):
        value = value[:-2]
    elif value.endswith("\n"):
        value = value[:-1]
    return value


def _strip_fence(body: str) -> str:
    """Unwrap a ```json ... ``` fence some models put around the arguments."""
    body = body.strip()
    if body.startswith(("```", "~~~")):
        newline = body.find("\n")
        body = "" if newline == -1 else body[newline + 1 :]
        body = body.rstrip()
        if body.endswith(("```", "~~~")):
            body = body[:-3]
    return body.strip()


def _json_message(msg: str, pos: int) -> str:
    return f"{msg} character {pos}" if msg.endswith(" at") else f"{msg} at character {pos}"


def _json_error(what: str, err: json.JSONDecodeError) -> _Bad:
    return _Bad(f"the JSON of {what} does not parse: {_json_message(err.msg, err.pos)}")


def _loads(body: str, what: str) -> JsonValue:
    try:
        return json.loads(body)
    except json.JSONDecodeError as err:
        raise _json_error(what, err) from None
    except (RecursionError, ValueError) as err:
        raise _Bad(f"the JSON of {what} does not parse: {type(err).__name__}") from None


def _object_arguments(value: JsonValue, number: int) -> JsonObject:
    """JSON arguments as given; a JSON string that holds a JSON object is unwrapped once."""
    if value is None:
        return {}
    if isinstance(value, str):
        stripped = value.strip()
        if not stripped:
            return {}
        value = _loads(stripped, f"the arguments of call {number}")
    if not isinstance(value, dict):
        raise _Bad(f"the arguments of call {number} are not a JSON object")
    return value


# --- hermes --------------------------------------------------------------------------------------------


def _hermes(f: _Finder, start: int, number: int) -> tuple[int, list[_Raw]]:
    text = f.text
    what = f"call {number}"
    pos = _skip_ws(text, start + len("<tool_call>"))
    fenced = text.startswith(("```", "~~~"), pos)
    if fenced:  # <tool_call>```json {...} ```</tool_call>
        newline = text.find("\n", pos)
        pos = len(text) if newline == -1 else newline + 1
    pos = _skip_ws(text, pos)
    # Decode the JSON value itself, so a string in it may hold "<tool_call>" or "</tool_call>".
    try:
        value, after = json.JSONDecoder().raw_decode(text, pos)
    except json.JSONDecodeError as err:
        raise _Bad(f"the JSON of {what} does not parse: {_json_message(err.msg, err.pos - pos)}") from None
    except (RecursionError, ValueError) as err:
        raise _Bad(f"the JSON of {what} does not parse: {type(err).__name__}") from None
    end = after
    at = _skip_ws(text, after)
    if fenced and text.startswith(("```", "~~~"), at):
        at = _skip_ws(text, at + 3)
    if text.startswith("</tool_call>", at):
        end = at + len("</tool_call>")
    else:
        close = f.find(_TOOL_CALL_END, at)
        again = f.find(_TOOL_CALL, at)
        if close != -1 and (again == -1 or close < again):
            raise _Bad(
                f"the JSON of {what} is followed by other text before </tool_call>: {_short(text[at:close])}"
            )
        # else unclosed at the end of the text (or before the next block): what follows stays text
    items = value if isinstance(value, list) else [value]
    if not items:
        raise _Bad(f"the JSON of call {number} holds no call")
    raws: list[_Raw] = []
    for item in items:
        n = number + len(raws)
        if not isinstance(item, dict):
            raise _Bad(f"the JSON of call {n} is not an object")
        name = item.get("name")
        if not isinstance(name, str) or not name.strip():
            raise _Bad(f"call {n} names no tool")
        args = item["arguments"] if "arguments" in item else item.get("parameters")
        raws.append(_Raw(n, name.strip(), _object_arguments(args, n), {}))
    return end, raws


# --- qwen3 ---------------------------------------------------------------------------------------------


def _qwen3(f: _Finder, start: int, wrapped: bool, number: int) -> tuple[int, list[_Raw]]:
    text = f.text
    pos = start + len("<tool_call>") if wrapped else start
    end = pos
    raws: list[_Raw] = []
    while True:
        m = _FUNC_OPEN.match(text, _skip_ws(text, pos))
        if m is None:
            break
        n = number + len(raws)
        name = m.group(1).strip()
        args: JsonObject = {}
        pos = end = m.end()
        while True:
            at = _skip_ws(text, pos)
            if text.startswith(_FUNC_END, at):
                pos = end = at + len(_FUNC_END)
                break
            if at >= len(text):  # truncated at the end of the text
                pos = end = len(text)
                break
            pm = _PARAM_OPEN.match(text, at)
            if pm is None:
                if text.startswith("</tool_call>", at):  # </function> forgotten
                    pos = end = at
                    break
                raise _Bad(f"call {n} ({name!r}) has text that is not a <parameter=...>")
            key = pm.group(1).strip()
            vstart = pm.end()
            close = f.find(_PARAM_END, vstart)
            other = f.find(_PARAM_OPEN_ANY, vstart)
            if close != -1 and (other == -1 or close < other):
                value, pos = text[vstart:close], close + len("</parameter>")
            else:  # </parameter> forgotten: the value runs to the next tag or the end of the text
                stop = f.find(_QWEN3_STOP, vstart)
                stop = len(text) if stop == -1 else stop
                value, pos = text[vstart:stop], stop
            args[key] = _trim_newline(value)
            end = pos
        raws.append(_Raw(n, name, args, dict.fromkeys(args, _TEXT)))
    if wrapped:
        at = _skip_ws(text, end)
        if text.startswith("</tool_call>", at):
            end = at + len("</tool_call>")
        elif at < len(text) and raws:
            raise _Bad(f"unexpected text after call {number + len(raws) - 1} inside <tool_call>")
    if not raws:
        raise _Bad(f"call {number} has no <function=...> inside <tool_call>")
    return end, raws


# --- qwen-xml ------------------------------------------------------------------------------------------


def _unescape_attr(value: str) -> str:
    for entity, char in (("&lt;", "<"), ("&gt;", ">"), ("&quot;", '"'), ("&apos;", "'"), ("&amp;", "&")):
        value = value.replace(entity, char)
    return value


def _qwen_xml(f: _Finder, start: int, number: int) -> tuple[int, list[_Raw]]:
    text = f.text
    pos = end = start + len("<tool_calls>")
    raws: list[_Raw] = []
    while True:
        at = _skip_ws(text, pos)
        if text.startswith(_CALLS_END, at):
            end = at + len(_CALLS_END)
            break
        if at >= len(text):  # truncated at the end of the text
            end = len(text)
            break
        n = number + len(raws)
        m = _TAG_OPEN.match(text, at)
        if m is None:
            raise _Bad(f"call {n} inside <tool_calls> is not a <NAME .../> element")
        name = m.group(1)
        args: JsonObject = {}
        for a in _ATTR.finditer(m.group(2)):
            args[a.group(1)] = _unescape_attr(a.group(2) if a.group(2) is not None else a.group(3))
        pos = end = m.end()
        if not m.group(3):  # <NAME ...> children </NAME>
            closing = f"</{name}>"
            while True:
                at = _skip_ws(text, pos)
                if text.startswith(closing, at):
                    pos = end = at + len(closing)
                    break
                if at >= len(text):
                    pos = end = len(text)
                    break
                child = _TAG_OPEN.match(text, at)
                if child is None or child.group(2).strip():
                    raise _Bad(f"call {n} ({name!r}) holds text that is not a <parameter>value</parameter>")
                key = child.group(1)
                if child.group(3):  # <key/>
                    args[key] = ""
                    pos = end = child.end()
                    continue
                vstart = child.end()
                close = text.find(f"</{key}>", vstart)
                if close == -1:
                    outer = text.find(closing, vstart)
                    stop = len(text) if outer == -1 else outer
                    args[key], pos = _trim_newline(text[vstart:stop]), stop
                else:
                    args[key], pos = _trim_newline(text[vstart:close]), close + len(key) + 3
                end = pos
        raws.append(_Raw(n, name, args, dict.fromkeys(args, _TEXT)))
    if not raws:
        raise _Bad("the <tool_calls> markup holds no call")
    return end, raws


# --- kimi and DeepSeek tokens: section_begin (call_begin X sep Y call_end)* section_end --------------


@dataclass(frozen=True)
class _Tokens:
    section: re.Pattern[str]
    section_end: re.Pattern[str]
    call: re.Pattern[str]
    sep: re.Pattern[str]
    call_end: re.Pattern[str]


_KIMI = _Tokens(_K_SECTION, _K_SECTION_END, _K_CALL, _K_SEP, _K_CALL_END)
_DEEPSEEK = _Tokens(_D_SECTION, _D_SECTION_END, _D_CALL, _D_SEP, _D_CALL_END)


def _first(*positions: int) -> int:
    found = [p for p in positions if p != -1]
    return min(found) if found else -1


def _token_calls(
    f: _Finder,
    start: int,
    tokens: _Tokens,
    number: int,
    read: Callable[[str, str, int], tuple[str, JsonObject]],
) -> tuple[int, list[_Raw]]:
    text = f.text
    sm = tokens.section.match(text, start)
    in_section = sm is not None
    pos = end = sm.end() if sm is not None else start
    raws: list[_Raw] = []
    while True:
        at = _skip_ws(text, pos)
        if in_section:
            em = tokens.section_end.match(text, at)
            if em is not None:
                end = em.end()
                break
        if at >= len(text):
            end = len(text) if in_section else end
            break
        n = number + len(raws)
        cm = tokens.call.match(text, at)
        if cm is None:
            if not raws:
                raise _Bad(f"call {n} does not start with a call-begin token")
            if in_section:
                raise _Bad(f"unexpected text after call {n - 1} inside the tool-call section")
            break
        head = cm.end()
        sep = f.search(tokens.sep, head)
        bound = _first(
            f.find(tokens.call_end, head), f.find(tokens.call, head), f.find(tokens.section_end, head)
        )
        if sep is None or (bound != -1 and bound < sep.start()):
            raise _Bad(f"call {n} has no argument separator token")
        ystart = sep.end()
        closing = f.search(tokens.call_end, ystart)
        close = -1 if closing is None else closing.start()
        stop = _first(close, f.find(tokens.call, ystart), f.find(tokens.section_end, ystart))
        if stop == -1:  # truncated at the end of the text
            y, pos = text[ystart:], len(text)
        elif closing is not None and stop == close:
            y, pos = text[ystart:close], closing.end()
        else:  # call-end token forgotten
            y, pos = text[ystart:stop], stop
        name, args = read(text[head : sep.start()], y, n)
        raws.append(_Raw(n, name, args, {}))
        end = pos
    return end, raws


def _read_kimi(ident: str, body: str, number: int) -> tuple[str, JsonObject]:
    m = _K_ID.fullmatch(ident.strip())
    if m is None:
        raise _Bad(f"call {number} has no readable tool name: {_short(ident.strip())}")
    return m.group(1), _object_arguments(_loads(_strip_fence(body), f"call {number}"), number)


def _read_deepseek(head: str, body: str, number: int) -> tuple[str, JsonObject]:
    head = head.strip()
    if head == "function":  # V3: function<sep>NAME\n```json\n{...}\n```
        first, _, rest = body.lstrip().partition("\n")
        name, body = first.strip(), rest
    else:  # V3.1: NAME<sep>{...}
        name = head
    if not name:
        raise _Bad(f"call {number} names no tool")
    return name, _object_arguments(_loads(_strip_fence(body), f"call {number}"), number)


# --- DeepSeek DSML tags --------------------------------------------------------------------------------


def _dsml(f: _Finder, start: int, number: int) -> tuple[int, list[_Raw]]:
    text = f.text
    wm = _X_CALLS.match(text, start)
    wrapped = wm is not None
    pos = end = wm.end() if wm is not None else start
    raws: list[_Raw] = []
    while True:
        at = _skip_ws(text, pos)
        if wrapped:
            em = _X_CALLS_END.match(text, at)
            if em is not None:
                end = em.end()
                break
        if at >= len(text):
            end = len(text) if wrapped else end
            break
        n = number + len(raws)
        im = _X_INVOKE.match(text, at)
        if im is None:
            if not raws:
                raise _Bad(f"call {n} is not an <｜DSML｜invoke name=...> element")
            if wrapped:
                raise _Bad(f"unexpected text after call {n - 1} inside <｜DSML｜function_calls>")
            break
        name = im.group(1).strip()
        args: JsonObject = {}
        modes: dict[str, str] = {}
        pos = end = im.end()
        while True:
            at = _skip_ws(text, pos)
            ie = _X_INVOKE_END.match(text, at)
            if ie is not None:
                pos = end = ie.end()
                break
            if at >= len(text) or _X_CALLS_END.match(text, at):  # truncated, or </invoke> forgotten
                pos = end = at if at < len(text) else len(text)
                break
            pm = _X_PARAM.match(text, at)
            if pm is None:
                raise _Bad(f"call {n} ({name!r}) has text that is not a <｜DSML｜parameter>")
            key, flag = pm.group(1).strip(), (pm.group(2) or "").lower()
            vstart = pm.end()
            closing = f.search(_X_PARAM_END, vstart)
            stop = f.find(_X_STOP, vstart)
            if closing is not None and (stop == -1 or closing.start() <= stop):
                value, pos = text[vstart : closing.start()], closing.end()
            else:  # </parameter> forgotten
                stop = len(text) if stop == -1 else stop
                value, pos = text[vstart:stop], stop
            args[key] = value
            modes[key] = _RAW if flag == "true" else _JSONISH
            end = pos
        if not name:
            raise _Bad(f"call {n} names no tool")
        raws.append(_Raw(n, name, args, modes))
    if not raws:
        raise _Bad("the <｜DSML｜function_calls> markup holds no call")
    return end, raws


# --- typing parameters by schema ---------------------------------------------------------------------

_INTEGER = re.compile(r"[+-]?\d+")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_NO = object()


def _schema_types(schema: JsonValue, depth: int = 0) -> list[str]:
    """The JSON types a property schema allows, in the order it lists them."""
    if not isinstance(schema, Mapping) or depth > 8:
        return []
    found: list[str] = []
    kind = schema.get("type")
    if isinstance(kind, str):
        found.append(kind)
    elif isinstance(kind, list):
        found.extend(k for k in kind if isinstance(k, str))
    for key in ("anyOf", "oneOf", "allOf"):
        options = schema.get(key)
        if isinstance(options, list):
            for option in options:
                found.extend(_schema_types(option, depth + 1))
    if not found:
        if "properties" in schema:
            found.append("object")
        elif "items" in schema:
            found.append("array")
    return list(dict.fromkeys(found))


def _as_json_container(value: str, kind: type) -> JsonValue:
    stripped = value.strip()
    try:
        parsed = json.loads(stripped)
    except (ValueError, RecursionError):
        parsed = _NO
    if parsed is _NO and len(stripped) <= 100_000:
        try:  # Python-ish literals: ['a', 'b'], {'k': True}
            parsed = json.loads(json.dumps(ast.literal_eval(stripped)))
        except Exception:
            parsed = _NO
    return parsed if isinstance(parsed, kind) else _NO


def _as_type(value: str, kind: str) -> JsonValue:
    """`value` converted to JSON type `kind`, or _NO."""
    s = value.strip()
    if kind in ("integer", "int"):
        if _INTEGER.fullmatch(s):
            try:
                return int(s)
            except ValueError:  # too many digits
                return _NO
        number = _as_type(s, "number")
        if isinstance(number, float) and number.is_integer():
            return int(number)
        return _NO
    if kind in ("number", "float"):
        if not _NUMBER.fullmatch(s):
            return _NO
        try:
            if _INTEGER.fullmatch(s):
                return int(s)
            number = float(s)
        except ValueError:
            return _NO
        return number if math.isfinite(number) else _NO
    if kind in ("boolean", "bool"):
        lowered = s.lower()
        return True if lowered == "true" else False if lowered == "false" else _NO
    if kind == "null":
        return None if s.lower() in ("null", "none", "") else _NO
    if kind == "array":
        return _as_json_container(s, list)
    if kind == "object":
        return _as_json_container(s, dict)
    return _NO


def _typed(key: str, value: JsonValue, mode: str, schema: JsonValue, number: int) -> JsonValue:
    if not isinstance(value, str) or mode == _RAW:
        return value
    kinds = _schema_types(schema)
    if not kinds:
        if mode == _JSONISH and schema is None:  # unknown DSML string="false" parameter: JSON as given
            try:
                return json.loads(value)
            except (ValueError, RecursionError):
                return value
        return value
    for kind in kinds:
        if kind == "string":
            continue
        converted = _as_type(value, kind)
        if converted is not _NO:
            return converted
    if "string" in kinds or not any(k in _KNOWN_TYPES for k in kinds):
        return value
    wanted = " or ".join(kinds)
    raise _Bad(f"parameter {key!r} of call {number} is not of type {wanted}: {_short(value)}")


_KNOWN_TYPES = frozenset(["integer", "int", "number", "float", "boolean", "bool", "null", "array", "object"])


def _check(raw: _Raw, tools: Mapping[str, JsonMapping]) -> Call:
    if raw.name not in tools:
        raise _Bad(f"tool {raw.name!r} is not offered")
    schema = tools[raw.name]
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(properties, Mapping):
        properties = {}
    arguments: JsonObject = {}
    for key, value in raw.arguments.items():
        mode = raw.modes.get(key)
        if mode is None:
            arguments[key] = value
        else:
            arguments[key] = _typed(key, value, mode, properties.get(key), raw.number)
    return Call(raw.name, arguments)


# --- the scan ------------------------------------------------------------------------------------------


class _Quotes:
    """Fenced code blocks and inline code spans, found lazily as the scan moves forward."""

    def __init__(self, f: _Finder) -> None:
        self.f = f
        text = f.text
        runs = [(m.start(), m.end()) for m in _TICKS.finditer(text)]
        self.run_starts = [s for s, _ in runs]
        self.runs = runs
        by_length: dict[int, list[int]] = {}
        for s, e in runs:
            by_length.setdefault(e - s, []).append(s)
        self.by_length = by_length
        self.blank_lines = [m.start() for m in _BLANK_LINE.finditer(text)]
        self._fence: tuple[int, tuple[int, int] | None] | None = None

    def next_fence(self, pos: int) -> tuple[int, int] | None:
        """(start, end) of the next fenced block at or after `pos`."""
        if self._fence is not None:
            since, found = self._fence
            if since <= pos and (found is None or found[0] >= pos):
                return found
        found = self._next_fence(pos)
        self._fence = (pos, found)
        return found

    def _next_fence(self, pos: int) -> tuple[int, int] | None:
        text = self.f.text
        while True:
            m = self.f.search(_FENCE, pos)
            if m is None:
                return None
            fence = m.group(1)
            line_end = text.find("\n", m.end())
            line_end = len(text) if line_end == -1 else line_end
            if fence[0] == "`" and "`" in text[m.end() : line_end]:
                pos = m.end()  # ```code``` on one line is an inline span, not a fence
                continue
            closing = re.compile(
                r"^[ \t]{0,3}" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}[ \t]*$", re.MULTILINE
            )
            c = closing.search(text, line_end)
            return m.start(), (len(text) if c is None else c.end())

    def next_span(self, pos: int) -> tuple[int, int] | None:
        """(start, end) of the next backtick run at or after `pos`, with its span if it closes."""
        i = bisect_left(self.run_starts, pos)
        if i >= len(self.runs):
            return None
        start, end = self.runs[i]
        same = self.by_length[end - start]
        j = bisect_right(same, start)
        if j < len(same):
            k = bisect_right(self.blank_lines, start)
            limit = self.blank_lines[k] if k < len(self.blank_lines) else len(self.f.text)
            if same[j] < limit:
                return start, same[j] + (end - start)
        return start, end  # an unmatched run is literal backticks


def _family(f: _Finder, m: re.Match[str]) -> Markup:
    """Which family an opener starts."""
    opener = m.group(0)
    if opener == "<tool_call>":
        return "qwen3" if f.text.startswith("<function=", _skip_ws(f.text, m.end())) else "hermes"
    if opener.startswith("<function="):
        return "qwen3"
    if opener == "<tool_calls>":
        return "qwen-xml"
    if "DSML" in opener:
        return "dsml"
    if opener.startswith("<|tool_call") and "section" in opener:
        return "kimi"
    if opener == "<|tool_call_begin|>":  # the same token in both families: the separator decides
        kimi, deepseek = f.find(_K_SEP, m.end()), f.find(_D_SEP, m.end())
        if deepseek == -1 or (kimi != -1 and kimi < deepseek):
            return "kimi"
    return "dsml"


def _parse(f: _Finder, m: re.Match[str], markup: Markup, number: int) -> tuple[int, list[_Raw]]:
    start = m.start()
    if markup == "hermes":
        return _hermes(f, start, number)
    if markup == "qwen3":
        return _qwen3(f, start, m.group(0) == "<tool_call>", number)
    if markup == "qwen-xml":
        return _qwen_xml(f, start, number)
    if markup == "kimi":
        return _token_calls(f, start, _KIMI, number, _read_kimi)
    if "DSML" in m.group(0):
        return _dsml(f, start, number)
    return _token_calls(f, start, _DEEPSEEK, number, _read_deepseek)


def _scan(text: str, tools: Mapping[str, JsonMapping]) -> Scan:
    f = _Finder(text)
    quotes = _Quotes(f)
    spans: list[tuple[int, int]] = []
    calls: list[Call] = []
    pos = 0
    while pos < len(text):
        opener = f.search(_OPEN, pos)
        if opener is None:
            break
        fence = quotes.next_fence(pos)
        span = quotes.next_span(pos)
        # On a tie the fence wins: its opening backticks are also a (literal) run.
        quoted = min((q for q in (fence, span) if q is not None), key=lambda q: (q[0], -q[1]), default=None)
        if quoted is not None and quoted[0] <= opener.start():
            pos = max(quoted[1], quoted[0] + 1)
            continue
        markup = _family(f, opener)
        try:
            end, raws = _parse(f, opener, markup, len(calls) + 1)
            for raw in raws:
                calls.append(_check(raw, tools))
        except _Bad as bad:
            return Scan((), Leak(markup, str(bad)), text)
        except Exception as err:  # RecursionError, MemoryError...: still a leak, never a crash
            return Scan((), Leak(markup, f"the markup could not be read: {type(err).__name__}"), text)
        spans.append((opener.start(), end))
        pos = max(end, opener.start() + 1)
    if not spans:
        return Scan((), None, text)
    return Scan(tuple(calls), None, _cut(text, spans))


def _cut(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` without the spans; the blank space around each removed span becomes one separator:
    a blank line if one side had a blank line, a newline if either side had one, else a space."""
    parts: list[str] = []
    prev = 0
    for s, e in spans:
        parts.append(text[prev:s])
        prev = e
    parts.append(text[prev:])
    out: list[str] = []
    newlines = -1  # most newlines on one side of removed markup since the last visible text; -1: no space
    for i, part in enumerate(parts):
        inner = part if i == 0 else part.lstrip()
        if i > 0:
            lead = part[: len(part) - len(inner)]
            if lead:
                newlines = max(newlines, lead.count("\n"))
            if not inner:
                continue
            if out:
                out.append(["", " ", "\n"][newlines + 1] if newlines < 2 else "\n\n")
        core = inner.rstrip()
        if core:
            out.append(core)
        trail = inner[len(core) :]
        newlines = trail.count("\n") if trail else -1
    return "".join(out).strip()
