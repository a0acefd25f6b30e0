"""Every settings key eukhe reads: its name in settings.json, its kind and its default.

Names and defaults are the spec's where it gives them; where the running code
already holds the default (the run's `Settings`, the round cap), it is taken
from there, so the two cannot drift apart.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass

from eukhe.json_types import JsonObject, JsonValue
from eukhe.rules import fetch, job
from eukhe.rules.child import STALL_MS
from eukhe.rules.hook import MAX_STOP_BLOCKS
from eukhe.rules.mcp import GATE_MS, STARTUP_MS, TOOL_MS
from eukhe.rules.permission import ASK_TIMEOUT_MS
from eukhe.rules.queue import SETTLE_TIMEOUT
from eukhe.rules.run import DEFAULT_MAX_TOOL_ROUNDS
from eukhe.rules.view import VIEW
from eukhe.settings.run import Settings

INSTRUCTIONS_BYTES = 32_768
"""`context.instructionsBytes`: the bytes of instruction files a system prompt holds at most."""

SETTLE_TIMEOUT_MS = SETTLE_TIMEOUT
"""`memory.settleTimeoutMs` when unset or 0 (H2.3), as rules.queue has it."""
SUBAGENT_STALL_MS = STALL_MS
"""`subagentStallMs` when unset or 0 (H5.2), as rules.child has it."""
SUBAGENT_MAX_DEPTH = 2
"""`subagents.maxDepth`: how deep children may nest (the root run is depth 0; a child at
the limit is offered no spawn)."""
TOOL_BLOCKING_BUDGET_MS = 30_000
"""`toolBlockingBudgetMs`: how long a kernel cell blocks its tool call before it goes on
as a detached job (and what `jobs.wait` is clamped to)."""
BASH_TIMEOUT_MS = 120_000
JOB_LIFETIME_MS = int(job.LIFETIME_S * 1000)
"""`bash.defaultTimeoutMs`: the bash tool's own default (the spec gives it no rule)."""
SANDBOX_MODES = ("read-only", "workspace-write", "danger-full-access")
"""`sandbox.mode`'s values, narrowest first (`eukhe.sandbox.bwrap` says what each allows)."""
APPROVAL_POLICIES = ("never", "untrusted", "on-request")
"""`permissions.approval`'s values, narrowest first (`rules.permission.Policy` says what each does)."""
PERMISSION_MODES = ("plan", "default")
"""`permissions.defaultMode`'s values, narrowest first (Claude Code's key; its other modes are
eukhe's `sandbox.mode` and `permissions.approval`): plan mode, or the sandbox mode as it is."""
RULE_KEYS = ("permissions.deny", "permissions.ask", "permissions.allow")
"""The rule lists, in the order the permission rule reads them (Claude Code's syntax: `rule_syntax`)."""


@dataclass(frozen=True)
class Key:
    """One setting: dotted name, kind (`whole`, `bool`, `model`, `names`, `paths`,
    `globs`, `text`, `object`, `sandbox`: a `SANDBOX_MODES` value, `approval`: an
    `APPROVAL_POLICIES` value, `permission_mode`: a `PERMISSION_MODES` value, `rules`: a
    list of rules, `deadline`: a whole number >= 1, `positive`: a whole number >= 1),
    default, and what it does."""

    name: str
    kind: str
    default: JsonValue
    says: str


_RUN = Settings()

KEYS: tuple[Key, ...] = (
    Key("model", "model", None, "provider/model the session runs (e.g. openai/gpt-4.1)"),
    Key("providers", "object", {}, "providers by name: api, baseUrl, apiKeyEnv, concurrency"),
    Key("maxToolRounds", "whole", DEFAULT_MAX_TOOL_ROUNDS, "tool rounds a run makes at most; 0 = 250"),
    Key("retry.enabled", "bool", _RUN.retry_enabled, "transient errors are retried"),
    Key("retry.maxRetries", "whole", _RUN.max_retries, "transient retries per generation"),
    Key("retry.baseDelayMs", "whole", _RUN.base_delay_ms, "first wait before a retry"),
    Key("retry.provider.maxRetryDelayMs", "whole", _RUN.max_retry_delay_ms, "longest wait before a retry"),
    Key(
        "retry.provider.streamIdleTimeoutMs",
        "whole",
        _RUN.stream_idle_timeout_ms,
        "a stream with no event for this long is a stall",
    ),
    Key("memory.settleTimeoutMs", "whole", SETTLE_TIMEOUT_MS, "a turn waits this long for memory; 0 = 20 s"),
    Key("memory.viewBytes", "whole", VIEW, "the view of the chat a turn starts from, in bytes at most"),
    Key(
        "context.instructionsBytes",
        "whole",
        INSTRUCTIONS_BYTES,
        "bytes of AGENTS.md / CLAUDE.md files the system prompt holds at most",
    ),
    Key("subagentStallMs", "whole", SUBAGENT_STALL_MS, "a subagent without progress this long is stalled"),
    Key("subagents.maxDepth", "whole", SUBAGENT_MAX_DEPTH, "how deep subagents may nest; 0 = no subagents"),
    Key(
        "toolBlockingBudgetMs",
        "whole",
        TOOL_BLOCKING_BUDGET_MS,
        "a Python cell blocks this long, then goes on as a background job; 0 = 30 s",
    ),
    Key("bash.defaultTimeoutMs", "whole", BASH_TIMEOUT_MS, "a command's time when the call gives none"),
    Key(
        "bash.backgroundLifetimeMs",
        "whole",
        JOB_LIFETIME_MS,
        "a background job (run_in_background) is ended this long after it started; 0 = 4 h",
    ),
    Key("auxiliaryModel", "model", None, "provider/model for summarizer passes; unset = the session model"),
    Key("allowedModels", "names", [], "the models eukhe may use; empty = every model"),
    Key(
        "models",
        "object",
        {},
        "models by provider/model name: contextWindow, maxOutputTokens, price, reasoningEffort, input",
    ),
    Key("skills", "paths", [], "skill files or folders, besides <home>/skills and .eukhe/skills"),
    Key("prompts", "paths", [], "prompt templates or folders, besides <home>/prompts and .eukhe/prompts"),
    Key("durable.databaseUrl", "text", None, "the runs' store: a database URL; unset = SQLite in the home"),
    Key(
        "shell.environment.keep",
        "globs",
        [],
        "environment variables (names or globs) the tools keep though they look secret",
    ),
    Key(
        "sandbox.mode",
        "sandbox",
        "workspace-write",
        "bash and the Python kernel run in bubblewrap: read-only, workspace-write (the project and "
        "sandbox.writable) or danger-full-access (no sandbox)",
    ),
    Key("sandbox.writable", "paths", [], "folders besides the project that the sandbox lets bash write"),
    Key("sandbox.network", "bool", False, "the sandbox lets bash and the Python kernel reach the network"),
    Key("permissions.allow", "rules", [], "tool calls that run without asking (Claude Code's rule syntax)"),
    Key("permissions.ask", "rules", [], "tool calls that always ask (Claude Code's rule syntax)"),
    Key("permissions.deny", "rules", [], "tool calls that never run (Claude Code's rule syntax)"),
    Key(
        "permissions.approval",
        "approval",
        "on-request",
        "when to ask: on-request (leaving the sandbox, ask rules), untrusted (all but reads), "
        "never (what would ask is denied)",
    ),
    Key(
        "permissions.defaultMode",
        "permission_mode",
        "default",
        "plan: each run starts in plan mode (nothing writes or runs until you approve the model's "
        "plan); default: the sandbox mode as it is",
    ),
    Key(
        "permissions.askTimeoutMs",
        "deadline",
        ASK_TIMEOUT_MS,
        "an ask nobody answers is a denial after this long; below subagentStallMs",
    ),
    Key(
        fetch.KEYS["connect"],
        "deadline",
        fetch.CONNECT_MS,
        "web_fetch: the name resolved and the connection open (TLS too) within this",
    ),
    Key(
        fetch.KEYS["first_byte"],
        "deadline",
        fetch.FIRST_BYTE_MS,
        "web_fetch: the head of the answer within this after the connection",
    ),
    Key(
        fetch.KEYS["total"],
        "deadline",
        fetch.TOTAL_MS,
        "web_fetch: the whole fetch, its redirects included, within this",
    ),
    Key(
        fetch.KEYS["bytes"],
        "positive",
        fetch.MAX_BYTES,
        "web_fetch: bytes of a body read at most (the rest is not)",
    ),
    Key(
        fetch.KEYS["redirects"],
        "whole",
        fetch.MAX_REDIRECTS,
        "web_fetch: redirects to the same host followed at most",
    ),
    Key(
        "mcpServers",
        "object",
        {},
        "MCP servers by name (Claude Code's shape): command, args, env, cwd; or type http, url, headers",
    ),
    Key("mcp.startupTimeoutMs", "whole", STARTUP_MS, "an MCP server's start fails after this long; 0 = 10 s"),
    Key("mcp.toolTimeoutMs", "whole", TOOL_MS, "an MCP tool call fails after this long; 0 = 300 s"),
    Key(
        "mcp.startupGateMs",
        "whole",
        GATE_MS,
        "a turn's first request waits this long for MCP servers still starting; 0 = no wait",
    ),
    Key(
        "hooks",
        "object",
        {},
        "commands run at a session's events, by event (Claude Code's shape): matcher, hooks: "
        "type command, command, timeout (s), onFailure, env",
    ),
    Key(
        "hookLimits.maxStopBlocks",
        "whole",
        MAX_STOP_BLOCKS,
        "how many times Stop hooks may keep one run going before it ends failed",
    ),
    Key(
        "enabledPlugins",
        "object",
        {},
        'plugins switched on or off, {"name@marketplace": true} (Claude Code\'s key); only plugins you '
        "added (eukhe plugin add) are loaded",
    ),
    Key(
        "extraKnownMarketplaces",
        "object",
        {},
        'marketplaces by name (Claude Code\'s key), {"source": {"source": "directory", "path": ...}} or '
        "git, url, github: eukhe plugin add NAME adds one; nothing is fetched at run time",
    ),
)

BY_NAME: Mapping[str, Key] = {k.name: k for k in KEYS}

WANT = {
    "whole": "a whole number >= 0",
    "bool": "true or false",
    "model": "a provider/model name or null",
    "names": "a list of provider/model names",
    "paths": "a list of paths",
    "globs": "a list of names or globs",
    "text": "a string or null",
    "object": "an object",
    "sandbox": "one of " + ", ".join(f'"{m}"' for m in SANDBOX_MODES),
    "approval": "one of " + ", ".join(f'"{m}"' for m in APPROVAL_POLICIES),
    "permission_mode": "one of " + ", ".join(f'"{m}"' for m in PERMISSION_MODES),
    "rules": 'a list of rules such as "Bash(npm test)", "Read(//etc/**)" or "WebFetch"',
    "deadline": "a whole number of milliseconds >= 1 (every wait has a deadline)",
    "positive": "a whole number >= 1",
    "price": 'an object of dollars per million tokens, {"input": N, "output": N} and "cached": N if known',
    "inputs": 'a list of what the model takes: ["text"] or ["text", "image"]',
}
"""How each kind is named in an error."""


def fits(kind: str, v: JsonValue) -> bool:
    """Whether the value `v` is of the kind."""
    if kind == "whole":
        return isinstance(v, int) and not isinstance(v, bool) and v >= 0
    if kind == "bool":
        return isinstance(v, bool)
    if kind == "model":
        return v is None or (isinstance(v, str) and bool(v.strip()))
    if kind in ("names", "paths", "globs"):
        return isinstance(v, list) and all(isinstance(x, str) for x in v)
    if kind == "text":
        return v is None or (isinstance(v, str) and bool(v.strip()))
    if kind == "sandbox":
        return v in SANDBOX_MODES
    if kind == "approval":
        return v in APPROVAL_POLICIES
    if kind == "permission_mode":
        return v in PERMISSION_MODES
    if kind == "rules":  # each rule's syntax: `load.check`
        return isinstance(v, list) and all(isinstance(x, str) for x in v)
    if kind in ("deadline", "positive"):
        return isinstance(v, int) and not isinstance(v, bool) and v >= 1
    if kind == "inputs":
        return isinstance(v, list) and bool(v) and all(x in ("text", "image") for x in v)
    if kind == "price":
        return (
            isinstance(v, Mapping)
            and {"input", "output"} <= set(v)
            and set(v) <= {"input", "output", "cached"}
            and all(isinstance(x, int | float) and not isinstance(x, bool) and x >= 0 for x in v.values())
        )
    return isinstance(v, Mapping)


def defaults() -> JsonObject:
    """Every default as a nested object, as a settings file would hold it."""
    out: JsonObject = {}
    for k in KEYS:
        *parents, last = k.name.split(".")
        node = out
        for p in parents:
            node = node.setdefault(p, {})
        node[last] = copy.deepcopy(k.default)
    return out
