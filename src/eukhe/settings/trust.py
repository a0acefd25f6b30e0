"""Trusted folders: a project's `.eukhe/settings.json` applies in full only in a folder
its user trusts (`eukhe trust`). Elsewhere, every key that could run code, route a
secret, or reach outside the project is ignored, each with a notice that names the
file, the key, what it would do, and `eukhe trust`.

Which key needs trust is one table, `SIDES`: every settings key takes a side there
(a test holds it to `keys.KEYS`, with no catch-all), and a key it does not know is
treated as one that needs trust. A key whose values are ordered by the rights they give
(`RIGHTS`) may be narrowed anywhere, and widened past the user's own value only where
trusted. A key that holds named entries (`models`: one a model) gives each field of an
entry its own side (`FIELDS`); a field it does not know needs trust too. The user's own
settings (the home's) always apply.

The records live in the home, `trust.json`: each folder's real path, whether it is
trusted (a "no" is recorded too), and when; a record covers the folders below it,
and the nearest one wins. They are read, changed and written under the file's lock
(`settings.locked`), so two terminals answering at once both count; atomically.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from eukhe.errors import Code, EukheError
from eukhe.home import HomeError
from eukhe.json_types import JsonMapping, JsonObject, JsonValue
from eukhe.settings.keys import APPROVAL_POLICIES, BY_NAME, PERMISSION_MODES, SANDBOX_MODES
from eukhe.settings.locked import locked, write

RECORDS = "trust.json"
"""The trust records' file in the home."""


class Side(Enum):
    SAFE = "safe"  # applies in any folder
    TRUST = "trust"  # applies only in a trusted folder
    INSIDE = "inside"  # paths: those inside the project apply anywhere, the rest only when trusted
    NARROW = "narrow"  # no wider than the user's own value (`RIGHTS`): anywhere; wider: only when trusted
    ENTRIES = "entries"  # named entries, each field of one on its own side (`FIELDS`)


SIDES: Mapping[str, tuple[Side, str]] = {
    "model": (Side.SAFE, ""),
    "providers": (Side.TRUST, "sets where model requests go (baseUrl) and which environment variable's "
                  "value is sent as the API key (apiKeyEnv)"),
    "maxToolRounds": (Side.SAFE, ""),
    "retry.enabled": (Side.SAFE, ""),
    "retry.maxRetries": (Side.SAFE, ""),
    "retry.baseDelayMs": (Side.SAFE, ""),
    "retry.provider.maxRetryDelayMs": (Side.SAFE, ""),
    "retry.provider.streamIdleTimeoutMs": (Side.SAFE, ""),
    "memory.settleTimeoutMs": (Side.SAFE, ""),
    "memory.viewBytes": (Side.SAFE, ""),
    "subagentStallMs": (Side.SAFE, ""),
    "subagents.maxDepth": (Side.SAFE, ""),
    "toolBlockingBudgetMs": (Side.SAFE, ""),
    "bash.defaultTimeoutMs": (Side.SAFE, ""),
    "bash.backgroundLifetimeMs": (Side.SAFE, ""),  # a job ends with its session whatever it says
    "auxiliaryModel": (Side.TRUST, "sends the chat memory of every project to the model it names"),
    "allowedModels": (Side.SAFE, ""),
    "models": (Side.ENTRIES, ""),
    "skills": (Side.INSIDE, "loads skill files from outside the project into the model's prompt"),
    "prompts": (Side.INSIDE, "loads prompt templates from outside the project"),
    "durable.databaseUrl": (Side.TRUST, "opens a store of runs the project names, whose rows eukhe reads and "
                            "whose cut-off runs it would resume with your keys"),
    "shell.environment.keep": (Side.TRUST, "passes the secret environment variables it names to the "
                               "model's tools"),
    "sandbox.mode": (Side.NARROW, "sets how far bash and the Python kernel reach (danger-full-access runs "
                     "them outside the sandbox)"),
    "sandbox.writable": (Side.TRUST, "lets bash and the Python kernel write in the folders it names"),
    "sandbox.network": (Side.TRUST, "lets bash and the Python kernel reach the network"),
    "permissions.allow": (Side.TRUST, "lets the model's tool calls it names run without asking you"),
    "permissions.ask": (Side.SAFE, ""),  # an ask or a deny only narrows
    "permissions.deny": (Side.SAFE, ""),
    "permissions.approval": (Side.NARROW, "would ask you less often than your own approval policy"),
    "permissions.defaultMode": (Side.NARROW, "would start each run out of plan mode"),
    "permissions.askTimeoutMs": (Side.SAFE, ""),
    "context.instructionsBytes": (Side.SAFE, ""),
    # how long a fetch waits and how much it reads: a project could make each one wait an hour
    "webFetch.connectTimeoutMs": (Side.TRUST, "sets how long a web fetch waits to connect"),
    "webFetch.firstByteTimeoutMs": (Side.TRUST, "sets how long a web fetch waits for an answer"),
    "webFetch.totalTimeoutMs": (Side.TRUST, "sets how long a web fetch may take"),
    "webFetch.maxBytes": (Side.TRUST, "sets how much of a page a web fetch reads into memory"),
    "webFetch.maxRedirects": (Side.SAFE, ""),
    "mcpServers": (Side.TRUST, "starts the MCP servers it names: their programs run on your machine, "
                   "their URLs get what their headers send"),
    # how long a run waits on your own servers: a project could make every turn wait an hour
    "mcp.startupTimeoutMs": (Side.TRUST, "sets how long a run waits for an MCP server to start"),
    "mcp.toolTimeoutMs": (Side.TRUST, "sets how long a run waits for an MCP tool call"),
    "mcp.startupGateMs": (Side.TRUST, "sets how long each turn waits for MCP servers still starting"),
    "hooks": (Side.TRUST, "runs the commands it names on your machine at the session's events (a "
              "PreToolUse hook also decides which tool calls run)"),
    # a project could let your own Stop hooks keep every run going far longer
    "hookLimits.maxStopBlocks": (Side.TRUST, "sets how many times Stop hooks may keep a run going"),
    # a project may switch only what the person added, but switching one on runs its hooks
    "enabledPlugins": (Side.TRUST, "switches on plugins you added, whose hooks and MCP servers run on your "
                       "machine"),
    "extraKnownMarketplaces": (Side.TRUST, "names marketplaces that `eukhe plugin add NAME` would fetch"),
}  # fmt: skip

FIELDS: Mapping[str, Mapping[str, tuple[Side, str]]] = {
    "models": {
        "contextWindow": (Side.SAFE, ""),
        "maxOutputTokens": (Side.SAFE, ""),
        "price": (Side.TRUST, "sets what the model's tokens are said to cost you (a price of 0 shows "
                  "every run as free)"),
        "reasoningEffort": (Side.TRUST, "sets how hard the model reasons on each request, and so how many "
                            "tokens each one costs you"),
        "input": (Side.TRUST, 'says which inputs the model takes (with "image", the images you attach are '
                  "sent to it)"),
    },
}  # fmt: skip
"""The fields of each `ENTRIES` key's entries, each with its side (`SAFE` or `TRUST`) and what
it would do (a test holds them to `settings.load.MODEL_FIELDS`)."""

RIGHTS: Mapping[str, tuple[str, ...]] = {
    "permissions.approval": APPROVAL_POLICIES,  # never < untrusted < on-request
    "sandbox.mode": SANDBOX_MODES,  # read-only < workspace-write < danger-full-access
    "permissions.defaultMode": PERMISSION_MODES,  # plan < default
}
"""The values of each `NARROW` key, the narrowest first: what a project may narrow to."""

UNKNOWN = "is not a setting eukhe knows; what it would do cannot be told"

NAMED = frozenset({"mcpServers"})
"""`TRUST` keys whose notice names the entries of the object it holds back (the servers)."""

COUNTED = frozenset({"hooks"})
"""`TRUST` keys whose notice counts the commands it holds back, by event (`counted`)."""


class TrustError(EukheError, RuntimeError):
    """The trust records cannot be read or written: names the file and why."""

    code = Code.SETTINGS


# ---------------------------------------------------------------- the records


@dataclass(frozen=True)
class Record:
    folder: str  # the folder's real path
    trusted: bool
    at: str  # when it was recorded (ISO 8601)


def records_path(home: Path) -> Path:
    return home / RECORDS


def records(home: Path) -> list[Record]:
    """The home's trust records ([] when there are none). A file that cannot be read
    trusts nothing, and says so."""
    path = records_path(home)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as e:
        raise TrustError(
            f"trust records {path}: cannot read them: {getattr(e, 'strerror', None) or e}"
        ) from e
    try:
        data = json.loads(text)
        folders = data["folders"]
        return [Record(str(r["folder"]), bool(r["trusted"]), str(r.get("at") or "")) for r in folders]
    except (ValueError, KeyError, TypeError) as e:
        raise TrustError(
            f"trust records {path}: not what eukhe writes ({type(e).__name__}: {e}); "
            "remove the file and trust your folders again with `eukhe trust`"
        ) from e


def real(folder: Path) -> str:
    """A folder as the records hold it: its real path (links resolved)."""
    return os.path.realpath(folder)


def covers(record: str, folder: str) -> bool:
    return folder == record or folder.startswith(record.rstrip("/") + "/")


def verdict(home: Path, folder: Path) -> bool | None:
    """Whether `folder` is trusted: the nearest record at or above it, None when none
    covers it (never asked)."""
    where = real(folder)
    found = [r for r in records(home) if covers(r.folder, where)]
    if not found:
        return None
    return max(found, key=lambda r: len(r.folder)).trusted


def record(home: Path, folder: Path, trusted: bool) -> Record:
    """Record the folder's answer (replacing an earlier one for the same folder)."""
    r = Record(real(folder), trusted, datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"))
    with _changing(home):  # what another process recorded meanwhile is read, and kept
        _write(home, [*(x for x in records(home) if x.folder != r.folder), r])
    return r


def revoke(home: Path, folder: Path) -> bool:
    """Remove the folder's record; whether there was one."""
    where = real(folder)
    with _changing(home):
        before = records(home)
        after = [r for r in before if r.folder != where and r.folder != str(folder)]
        if len(after) == len(before):
            return False
        _write(home, after)
    return True


@contextlib.contextmanager
def _changing(home: Path) -> Iterator[None]:
    """The records' lock held for a read-modify-write (`settings.locked`); a lock or a write
    that fails is a TrustError naming the file."""
    path = records_path(home)
    try:
        with locked(path):
            yield
    except HomeError as e:
        raise TrustError(f"trust records {path}: cannot write them: {e}") from e


def _write(home: Path, rs: list[Record]) -> None:
    """Atomically, readable by the user only (under the records' lock: `_changing`)."""
    data = {"folders": [{"folder": r.folder, "trusted": r.trusted, "at": r.at} for r in rs]}
    write(records_path(home), json.dumps(data, indent=1))


# ---------------------------------------------------------------- the rule


@dataclass(frozen=True)
class Held:
    """A key of the project's file that an untrusted folder does not apply: what it
    would do."""

    key: str
    does: str


def side(path: tuple[str, ...]) -> tuple[Side, str, str] | None:
    """The side of the known key at or above `path`, with its name and what it does;
    None when no known key is there (`path` may be on the way to one)."""
    for i in range(len(path), 0, -1):
        name = ".".join(path[:i])
        if name in SIDES:
            s, does = SIDES[name]
            return s, name, does
    return None


def _inside(p: str, project: Path) -> bool:
    full = os.path.expanduser(p)
    full = full if os.path.isabs(full) else os.path.join(project, full)
    return covers(real(project), os.path.realpath(full))


def no_wider(name: str, value: JsonValue, user: JsonMapping) -> tuple[bool, JsonValue]:
    """Whether the `NARROW` key's `value` gives no more rights than the user's own (their
    settings' value, else the default), and that value."""
    node: JsonValue = user
    for part in name.split("."):
        node = node.get(part, BY_NAME[name].default) if isinstance(node, Mapping) else BY_NAME[name].default
    order = RIGHTS[name]
    return value in order and node in order and order.index(value) <= order.index(node), node


def untrusted(
    data: JsonMapping, project: Path, user: JsonMapping | None = None
) -> tuple[JsonObject, list[Held]]:
    """The project's settings as an untrusted folder applies them, and the keys it holds
    back. `user`: the user's own settings, which a `NARROW` key may narrow, not widen."""
    held: list[Held] = []

    def walk(node: JsonMapping, prefix: tuple[str, ...]) -> JsonObject:
        out: JsonObject = {}
        for k, v in node.items():
            path = (*prefix, str(k))
            known = side(path)
            if known is None:
                if isinstance(v, Mapping) and any(n.startswith(".".join(path) + ".") for n in SIDES):
                    below = walk(v, path)  # on the way to known keys
                    if below or not v:
                        out[k] = below
                else:
                    held.append(Held(".".join(path), UNKNOWN))
                continue
            s, name, does = known
            if s is Side.SAFE:
                out[k] = v
            elif s is Side.TRUST:
                named = name in NAMED and isinstance(v, Mapping) and v
                if name in COUNTED:
                    held.append(Held(name, f"{does} ({counted(v)})"))
                else:
                    held.append(Held(name, f"{does} ({', '.join(map(str, v))})" if named else does))
            elif s is Side.NARROW:
                ok, mine = no_wider(name, v, user or {})
                if ok:
                    out[k] = v
                else:
                    held.append(Held(name, f"{does} ({json.dumps(v)} is wider than your {json.dumps(mine)})"))
            elif s is Side.ENTRIES:
                out[k] = _entries(name, v, held)
            elif isinstance(v, list):  # INSIDE: the paths inside the project apply
                inside = [p for p in v if isinstance(p, str) and _inside(p, project)]
                if len(inside) < len(v):
                    outside = [p for p in v if p not in inside]
                    held.append(Held(name, f"{does} ({', '.join(map(str, outside))})"))
                out[k] = inside
            else:
                out[k] = v  # a malformed value: validation names it
        return out

    return walk(data, ()), held


def _entries(name: str, node: JsonValue, held: list[Held]) -> JsonValue:
    """An `ENTRIES` key's value as an untrusted folder applies it: each entry's `SAFE` fields;
    the rest held back, one `Held` a field (`models.<m>.price`)."""
    if not isinstance(node, Mapping):
        return node  # a malformed value: validation names it
    fields = FIELDS[name]
    out: JsonObject = {}
    for entry, spec in node.items():
        if not isinstance(spec, Mapping):
            out[entry] = spec
            continue
        kept: JsonObject = {}
        for f, v in spec.items():
            s, does = fields.get(str(f), (Side.TRUST, UNKNOWN))
            if s is Side.SAFE:
                kept[f] = v
            else:
                held.append(Held(f"{name}.{entry}.{f}", does))
        out[entry] = kept
    return out


def counted(hooks: JsonValue) -> str:
    """What a `hooks` object holds, for a notice: its commands by event (`3 hooks: PreToolUse 2,
    Stop 1`), each entry of an event's list counted by its own `hooks` list. Total: a
    malformed value counts what can be counted."""
    if not isinstance(hooks, Mapping):
        return "0 hooks"
    by_event: dict[str, int] = {}
    for event, groups in hooks.items():
        n = 0
        for g in groups if isinstance(groups, list) else []:
            inner = g.get("hooks") if isinstance(g, Mapping) else None
            n += len(inner) if isinstance(inner, list) else 0
        by_event[str(event)] = n
    total = sum(by_event.values())
    parts = ", ".join(f"{e} {n}" for e, n in by_event.items() if n)
    return f"{total} hook{'' if total == 1 else 's'}" + (f": {parts}" if parts else "")


def notice(file: Path, h: Held, folder: Path) -> str:
    """The one line an ignored key shows."""
    return (
        f"{file}: {h.key} is ignored: this folder is not trusted, and {h.key} {h.does}. "
        f"To apply it, run `eukhe trust {folder}` (see `eukhe trust --help`)"
    )


def sides_cover_keys() -> list[str]:
    """Keys without a side, and sides without a key (both should be empty)."""
    return sorted(set(BY_NAME) ^ set(SIDES))
