"""Subagents users define, in Claude Code's format: a Markdown file (`.claude/agents/*.md`,
`.eukhe/agents/*.md`, `<home>/agents/*.md`) whose YAML frontmatter gives `name`,
`description` and, optionally, `tools`, `disallowedTools` and `model`, and whose body is
the agent's system prompt.

Three things are decided here, once:

- whether a definition loads, and every problem that says why not: `check` over its
  shape (`Shape`: enums, flags and lengths, what the laws range over), `check_file` over
  what the runtime read (law `agent_loaded_or_said`: loaded or said, never both);
- the tools a defined agent's run offers (`tools_for`): those it names that its parent's
  run offers, less those it denies; naming none, its parent's (laws `agent_never_widens`,
  `agent_inherits_unnamed`). Claude Code's tool names are read as eukhe's (`CLAUDE_TOOLS`);
- the model it runs on (`model_for`): its parent's for `inherit` or none, a
  `provider/model` as written, a bare name looked up among the configured models.

Every text a diagnostic carries is written here or in `rules.skill_load` (the read and
YAML failures, the name's rules), once.

Pure: standard library only, frozen data, total functions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from eukhe.rules import skill_load
from eukhe.rules.permission import MCP_PREFIX, RULE_TOOLS
from eukhe.rules.skill_load import Front, Given, Kind, Read, kind_of, name_ok, quoted
from eukhe.rules.states import Choice

MAX_PROMPT = 64 * 1024
"""Bytes of an agent's file read: it must end within them (every run of the session
carries its prompt in its spec)."""
MAX_AGENTS = 64
"""Agents loaded at most; those after are said and left out."""
MAX_PROMPTS = 256 * 1024
"""Characters of all the agents' prompts together, at most: an agent that would pass them is
said and left out."""
LIMITS = skill_load.Limits(skill_load.MAX_NAME, MAX_PROMPT)
"""A defined agent's name as a skill's, its description as long as its file: Claude Code sets
no bound on an agent's description, and its own plugins' run past a skill's 1024 characters
(every `<example>` of when to use it); the spawn tool shows `LISTED_DESCRIPTION` of it."""
LISTED = 24
"""Agents the `spawn` tool describes by name and description; the rest by name only."""
LISTED_DESCRIPTION = 200
"""Characters of a description the `spawn` tool shows."""

CLAUDE_TOOLS: Mapping[str, tuple[str, ...]] = {
    **{claude: (tool,) for tool, claude in RULE_TOOLS.items() if tool != "write"},
    "Write": ("write",),
    "MultiEdit": ("edit",),
    "WebFetch": ("web_fetch",),
    "WebSearch": ("web_search",),
    "TodoWrite": ("todo",),
    "ExitPlanMode": ("exit_plan",),
    "Task": ("spawn", "stop_child", "merge_child"),
    "Agent": ("spawn", "stop_child", "merge_child"),
    # Claude Code's own, with no tool of eukhe's: named, they give nothing
    "NotebookEdit": (),
    "NotebookRead": (),
    "KillBash": ("job_kill",),  # KillShell's name before
    "TaskOutput": ("job_output",),  # BashOutput's name since
    "SlashCommand": (),
    "Skill": (),
    "ListMcpResourcesTool": (),
    "ReadMcpResourceTool": (),
}
"""Claude Code's tool names (as its `tools:` lines spell them) and the tools of eukhe's
each one names: the reverse of `rules.permission.RULE_TOOLS` (`Edit` names `edit` alone
here: `Write` names `write`), and the rest. `Agent(name)` and `Task(name)` name the spawn
tool; a tool a run does not offer (web_fetch, where none is built) is simply not offered."""

OWN = frozenset(t for ts in CLAUDE_TOOLS.values() for t in ts)
"""eukhe's own names of the tools `CLAUDE_TOOLS` names: a definition may use them too."""

FAMILIES = ("haiku", "sonnet", "opus")
"""Claude Code's model aliases: each names the configured model of its family."""

INHERIT = "inherit"


class Names(Choice):
    """A `tools` or `disallowedTools` value: absent, every name known, a name unknown, or
    not names at all (neither a comma-separated string nor a list of strings)."""

    ABSENT = "absent"
    KNOWN = "known"
    UNKNOWN = "unknown"
    OTHER = "other"


class Problem(Choice):
    """Why a definition does not load, in the order they are reported."""

    UNREADABLE_ENTRY = "unreadable_entry"
    UNREADABLE_FILE = "unreadable_file"
    TOO_LARGE = "too_large"
    INVALID_YAML = "invalid_yaml"
    NO_NAME = "no_name"
    NAME_NOT_TEXT = "name_not_text"
    NAME_INVALID = "name_invalid"
    NAME_TOO_LONG = "name_too_long"
    NO_DESCRIPTION = "no_description"
    DESCRIPTION_NOT_TEXT = "description_not_text"
    DESCRIPTION_TOO_LONG = "description_too_long"
    TOOLS_NOT_NAMES = "tools_not_names"
    UNKNOWN_TOOL = "unknown_tool"
    DENIED_NOT_NAMES = "denied_not_names"
    UNKNOWN_DENIED = "unknown_denied"
    MODEL_NOT_TEXT = "model_not_text"
    COLLISION = "collision"


@dataclass(frozen=True)
class Shape:
    """The shape of one definition, as the check reads it. name_ok: the frontmatter's name
    is lowercase letters and digits in words joined by single hyphens; name_length: its
    characters; description_length: the description's, without blanks at the ends; cut:
    the file holds more than `MAX_PROMPT` bytes; taken: an agent loaded earlier has
    its name (the first one wins)."""

    read: Read
    front: Front
    cut: bool
    name: Given
    name_ok: bool
    name_length: int
    description: Given
    description_length: int
    tools: Names
    denied: Names
    model: Given
    taken: bool


@dataclass(frozen=True)
class Verdict:
    loads: bool
    problems: tuple[Problem, ...]


def check(lim: skill_load.Limits, s: Shape) -> Verdict:
    """The definition loads when nothing is wrong with it; else every problem, in order.
    Nothing past a failed read, a file too large or invalid frontmatter is looked at. It
    needs a valid name (no folder gives one, as a skill's does), a description, tool names
    eukhe knows, and a model that is text; a name collision is reported for one that would
    load otherwise."""
    if s.read is not Read.OK:
        return Verdict(False, (Problem.UNREADABLE_FILE if s.read is Read.FILE else Problem.UNREADABLE_ENTRY,))
    if s.cut:
        return Verdict(False, (Problem.TOO_LARGE,))
    if s.front is Front.INVALID:
        return Verdict(False, (Problem.INVALID_YAML,))
    named = skill_load.front_problems(
        lim, s.name, s.name_ok, s.name_length, s.description, s.description_length, name_needed=True
    )
    found = [Problem(v) for v in named]
    if s.tools is Names.OTHER:
        found.append(Problem.TOOLS_NOT_NAMES)
    elif s.tools is Names.UNKNOWN:
        found.append(Problem.UNKNOWN_TOOL)
    if s.denied is Names.OTHER:
        found.append(Problem.DENIED_NOT_NAMES)
    elif s.denied is Names.UNKNOWN:
        found.append(Problem.UNKNOWN_DENIED)
    if s.model is Given.OTHER:
        found.append(Problem.MODEL_NOT_TEXT)
    if (not found) & s.taken:
        found.append(Problem.COLLISION)
    return Verdict(not found, tuple(found))


# ---------------------------------------------------------------- tool names


def tool_name(word: str) -> tuple[str, ...] | None:
    """The tools of eukhe's one name in a `tools` line names: Claude Code's (`Read`,
    `Agent(reviewer)`), eukhe's own (`read`), or an MCP server's (`mcp__github__get_issue`,
    or `mcp__github` for all of the server's); None: no tool eukhe knows."""
    base = word.partition("(")[0].strip()
    if base in CLAUDE_TOOLS:
        return CLAUDE_TOOLS[base]
    if base in OWN:
        return (base,)
    server = base[len(MCP_PREFIX) :].partition("__")[0]
    if base.startswith(MCP_PREFIX) and server:
        return (base,)
    return None


@dataclass(frozen=True)
class Named:
    """A `tools` or `disallowedTools` value read: its kind, eukhe's names of the tools it
    names (None: absent or not names), and each word no tool answers."""

    kind: Names
    tools: tuple[str, ...] | None
    unknown: tuple[str, ...] = ()


def names(value: object, present: bool) -> Named:
    """`Read, Grep, Glob` (a comma-separated string, as Claude Code writes it) or a YAML list
    of strings, read as eukhe's tool names in order, each once."""
    if not present or value is None:
        return Named(Names.ABSENT, None)
    if isinstance(value, str):
        # `["Read", "Grep"]` read as text (Claude Code's second parse quotes a line with `[`):
        # the list it spells
        listed = value.strip()
        if listed.startswith("[") and listed.endswith("]"):
            listed = listed[1:-1]
        words = [w.strip().strip("\"'").strip() for w in listed.split(",")]
    elif isinstance(value, list) and all(isinstance(w, str) for w in value):
        words = [str(w).strip() for w in value]
    else:
        return Named(Names.OTHER, None)
    got: list[str] = []
    unknown: list[str] = []
    for w in (w for w in words if w):
        tools = tool_name(w)
        if tools is None:
            unknown.append(w)
        else:
            got += tools
    kind = Names.UNKNOWN if unknown else Names.KNOWN
    return Named(kind, tuple(dict.fromkeys(got)), tuple(unknown))


def covers(name: str, tool: str) -> bool:
    """Whether a name a definition gives covers the tool a run offers: the same name, or
    `mcp__<server>` for each of that server's tools."""
    if name == tool:
        return True
    whole_server = name.startswith(MCP_PREFIX) and "__" not in name[len(MCP_PREFIX) :]
    return whole_server and tool.startswith(name + "__")


def tools_for(named: Sequence[str] | None, denied: Sequence[str], offered: Iterable[str]) -> tuple[str, ...]:
    """The tools a defined agent's run may offer, in its parent's order: of those its
    parent's run offers (`offered`), the ones it names (None: all of them), less the ones it
    denies. Never a tool its parent's run does not offer."""
    return tuple(
        t
        for t in offered
        if (named is None or any(covers(n, t) for n in named)) and not any(covers(d, t) for d in denied)
    )


# ---------------------------------------------------------------- the model


def model_for(value: str | None, parent: str, configured: Sequence[str]) -> str:
    """The model a defined agent runs on, as `/model` would take it: its parent's for
    `inherit` or none; a `provider/model` as written; a bare name, the configured model
    (`configured`: the settings' models, in order) whose model part it is, or for Claude
    Code's `haiku`, `sonnet` and `opus` the first whose model part holds it, else its
    parent's (a repository's agents written for Claude Code still run: `fallback`); any
    other bare name (a model's own id) on its parent's provider."""
    v = (value or "").strip()
    if v in ("", INHERIT):
        return parent
    if "/" in v:
        return v
    for m in configured:
        if m.partition("/")[2] == v:
            return m
    if v in FAMILIES:
        return next((m for m in configured if v in m.partition("/")[2]), parent)
    return f"{parent.partition('/')[0]}/{v}"


def fallback(value: str | None, chosen: str, parent: str) -> str:
    """What the spawn says when a Claude Code alias named no configured model and the agent
    runs on its parent's ("" otherwise)."""
    v = (value or "").strip()
    if v not in FAMILIES or chosen != parent or v in parent.partition("/")[2]:
        return ""
    return (
        f"its model {quoted(v)} names no configured model (model, auxiliaryModel, models, "
        f"allowedModels): it runs on yours, {parent}"
    )


# ---------------------------------------------------------------- what the runtime read


@dataclass(frozen=True)
class File:
    """What the runtime read of one definition: how the read went (and why not), whether
    the file holds more than `MAX_PROMPT` bytes, its frontmatter and its body."""

    read: Read
    front: Front = Front.NONE
    detail: str = ""
    meta: Mapping[object, object] | None = None
    body: str = ""
    cut: bool = False


@dataclass(frozen=True)
class Checked:
    """The check of one file: whether it loads, its messages (none when it loads), and
    what it loads with: its name, description, tools (eukhe's names; None: its parent's),
    the tools it denies, its model as written (None: its parent's) and its prompt."""

    name: str
    loads: bool
    messages: tuple[str, ...]
    description: str = ""
    tools: tuple[str, ...] | None = None
    denied: tuple[str, ...] = ()
    model: str | None = None
    prompt: str = ""
    verdict: Verdict = Verdict(False, ())
    isolation: str = ""  # "worktree" (`isolation: worktree`, as Claude Code writes it), else ""


def _meta(f: File) -> Mapping[object, object]:
    return f.meta if f.front is Front.MAPPING and f.meta is not None else {}


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def shape(f: File, taken: bool) -> Shape:
    meta = _meta(f)
    name, description = _text(meta.get("name")), _text(meta.get("description"))
    model = meta.get("model")
    return Shape(
        read=f.read,
        front=f.front,
        cut=f.cut,
        name=skill_load.given(meta.get("name"), "name" in meta),
        name_ok=name_ok(name),
        name_length=len(name),
        description=skill_load.given(meta.get("description"), "description" in meta),
        description_length=len(description),
        tools=names(meta.get("tools"), "tools" in meta).kind,
        denied=names(meta.get("disallowedTools"), "disallowedTools" in meta).kind,
        model=Given.ABSENT if model is None else skill_load.given(model, True),
        taken=taken,
    )


def check_file(f: File, winners: Mapping[str, str], lim: skill_load.Limits = LIMITS) -> Checked:
    """Check one file; `winners` maps each name loaded so far to the path it came from."""
    meta = _meta(f)
    name = _text(meta.get("name"))
    verdict = check(lim, shape(f, name in winners))
    messages = tuple(message(p, f, name, winners.get(name, ""), lim) for p in verdict.problems)
    if not verdict.loads:
        return Checked(name, False, messages, verdict=verdict)
    model = _text(meta.get("model"))
    return Checked(
        name=name,
        loads=True,
        messages=(),
        description=_text(meta.get("description")),
        tools=names(meta.get("tools"), "tools" in meta).tools,
        denied=names(meta.get("disallowedTools"), "disallowedTools" in meta).tools or (),
        model=None if model in ("", INHERIT) else model,
        prompt=f.body.strip(),
        verdict=verdict,
        isolation=ISOLATION if _text(meta.get("isolation")).lower() == ISOLATION else "",
    )


ISOLATION = "worktree"
"""The one `isolation` an agent's frontmatter may give (Claude Code's): a git worktree of its own."""


# ---------------------------------------------------------------- the texts


def message(p: Problem, f: File, name: str, winner: str, lim: skill_load.Limits = LIMITS) -> str:
    """The text of one problem of the file `f`."""
    meta = _meta(f)
    as_skill = skill_load.File(Kind.SKILL, name, f.read, f.front, f.detail, f.meta, f.body)
    if p is Problem.UNREADABLE_ENTRY:
        return skill_load.message(skill_load.Problem.UNREADABLE_ENTRY, as_skill, name, "")
    if p is Problem.UNREADABLE_FILE:
        return skill_load.message(skill_load.Problem.UNREADABLE_FILE, as_skill, name, "")
    if p is Problem.INVALID_YAML:
        return skill_load.message(skill_load.Problem.INVALID_YAML, as_skill, name, "")
    if p is Problem.NAME_INVALID:
        return f"invalid name {quoted(name)}: use lowercase letters, digits and single hyphens"
    if p is Problem.NAME_TOO_LONG:
        return skill_load.message(skill_load.Problem.NAME_TOO_LONG, as_skill, name, "", lim)
    if p is Problem.NAME_NOT_TEXT:
        return skill_load.message(skill_load.Problem.NAME_NOT_TEXT, as_skill, name, "")
    if p is Problem.DESCRIPTION_NOT_TEXT:
        return skill_load.message(skill_load.Problem.DESCRIPTION_NOT_TEXT, as_skill, name, "")
    if p is Problem.DESCRIPTION_TOO_LONG:
        return skill_load.message(skill_load.Problem.DESCRIPTION_TOO_LONG, as_skill, name, "", lim)
    if p is Problem.TOO_LARGE:
        return f"larger than {MAX_PROMPT} bytes"
    if p is Problem.NO_NAME:
        return "agent without name: its frontmatter needs name: (lowercase letters and hyphens)"
    if p is Problem.NO_DESCRIPTION:
        return "agent without description: its frontmatter needs description: (when to use it)"
    if p in (Problem.TOOLS_NOT_NAMES, Problem.DENIED_NOT_NAMES):
        key = "tools" if p is Problem.TOOLS_NOT_NAMES else "disallowedTools"
        got = kind_of(meta.get(key))
        return f"invalid {key}: expected names separated by commas, or a list of them; got {got}"
    if p in (Problem.UNKNOWN_TOOL, Problem.UNKNOWN_DENIED):
        key = "tools" if p is Problem.UNKNOWN_TOOL else "disallowedTools"
        unknown = names(meta.get(key), True).unknown
        return (
            f"invalid {key}: no tool is named {', '.join(map(quoted, unknown))}; the names are Claude "
            f"Code's ({', '.join(CLAUDE_TOOLS)}), eukhe's ({', '.join(sorted(OWN))}) and "
            f"{MCP_PREFIX}<server>__<tool>"
        )
    if p is Problem.MODEL_NOT_TEXT:
        got = kind_of(meta.get("model"))
        return f"invalid model: expected inherit, an alias or provider/model, got {got}"
    return f"agent losing a name collision: {quoted(name)} was loaded first from {winner}"


def too_many() -> str:
    """Why an agent past `MAX_AGENTS` agents or `MAX_PROMPTS` characters of prompts is left out."""
    return (
        f"not loaded: the agents before it make {MAX_AGENTS} agents or {MAX_PROMPTS} characters of "
        "prompts, the most a session carries (every run of it carries them)"
    )


def untrusted(project: str) -> str:
    """Why a project's agents are not loaded."""
    return (
        f"not loaded: this folder is not trusted, and its agents would give the model their prompts and "
        f"tools. To load them, run `eukhe trust {project}` (see `eukhe trust --help`)"
    )
