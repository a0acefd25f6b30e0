"""The MCP servers in effect, configured the way Claude Code configures them.

Where servers come from, each an entry of a `mcpServers` object, by name:

1. the home's `settings.json` (`$EUKHE_HOME/settings.json`; `eukhe mcp add` writes there);
2. the project's `.mcp.json` (Claude Code's file: `{"mcpServers": {...}}`);
3. the project's `.eukhe/settings.json`.

4. each plugin in effect (`eukhe.plugins.in_effect`), its `.mcp.json` or its manifest's
   `mcpServers`, each server named `plugin:<plugin>:<server>` (its tools `mcp__plugin_<plugin>_
   <server>__<tool>`, as Claude Code names them), trusted as the home's are (the person added
   it), with `${CLAUDE_PLUGIN_ROOT}` its folder and `CLAUDE_PLUGIN_ROOT` in its environment.

The same name in more than one takes the later's entry whole (never merged field by
field): the project's `.eukhe/settings.json` over its `.mcp.json` over the home. The
nearer file is the more specific, as everywhere in settings; and a project's servers
apply only where its folder is trusted, so a project overrides a home server only there.

Trust (`eukhe.settings.trust`): `mcpServers` is a `TRUST` key. In a folder not trusted
(refused, or never asked) the project's servers, of either file, are held back: they
are not read further and never start, and one notice line a file names the file and
its servers, in the words of every held-back key (`trust.notice`). The notice of
`.eukhe/settings.json` is the very line `settings.loaded` gives among its notices (a
caller that shows both shows it once). Unreadable trust records trust nothing and say
so. Only the home's servers are `from_home`: only they are believed about their
tools' `readOnlyHint`.

An entry is stdio, `{"command": str, "args": [str], "env": {str: str}, "cwd": str}`
(only `command` required; `"type": "stdio"` may be said), or streamable HTTP,
`{"type": "http", "url": str, "headers": {str: str}}` (`"streamable-http"` and
`"streamableHttp"` are http too). `"type": "sse"` is refused by name. Either may set
`startupTimeoutMs` and `toolTimeoutMs`. Other fields are ignored, as Claude Code's
other fields would be. A malformed entry (or an `sse` one, or one naming an unset
variable) is left out, never guessed at, with a line naming the file, the server and
the field; the other servers still start. A file that is not JSON, or whose
`mcpServers` is not an object, is a `SettingsError`, like any malformed setting.

`command`, `args`, `env`, `url` and `headers` may name environment variables:
`${VAR}`, and `${VAR:-default}` (the default when VAR is unset or empty, as a shell
has it). The environment is the caller's mapping; an unset `${VAR}` without a default
is an error naming the server, the field and the variable. A stdio server's `cwd`
(`~` expanded; relative to the project) defaults to the project.

A server's name becomes `[A-Za-z0-9_-]+`: every other character is `_`, and a run of
`_` is one (`__` parts a tool's name). Of two names that become the same one, the
later is left out, both named.

Timeouts, each the first of: the environment (`EUKHE_MCP_STARTUP_TIMEOUT_MS`,
`EUKHE_MCP_TOOL_TIMEOUT_MS`), the server's own field, the settings
(`mcp.startupTimeoutMs`, `mcp.toolTimeoutMs`), the default (`rules.mcp`); 0 or
unset passes to the next. `mcp.startupGateMs` (`gate_ms`) is the settings' or the
default; 0 there means the turn does not wait.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from eukhe.home import home
from eukhe.json_types import JsonMapping, JsonObject, JsonValue
from eukhe.plugins import ROOT, Plugin, config_of, in_effect
from eukhe.rules import registry
from eukhe.settings.keys import BY_NAME
from eukhe.settings.load import SettingsError, Taken, merge, project_file, project_layer, read, value
from eukhe.settings.trust import Held, TrustError, notice, untrusted, verdict

KEY = "mcpServers"
"""The object of servers by name, in every file that configures them."""
CLAUDE_FILE = ".mcp.json"
"""Claude Code's project file of servers, at the project's root."""
STARTUP_VARIABLE = "EUKHE_MCP_STARTUP_TIMEOUT_MS"
TOOL_VARIABLE = "EUKHE_MCP_TOOL_TIMEOUT_MS"
STARTUP_KEY = "mcp.startupTimeoutMs"
TOOL_KEY = "mcp.toolTimeoutMs"
GATE_KEY = "mcp.startupGateMs"
HTTP_TYPES = ("http", "streamable-http", "streamableHttp")
"""The `type`s of a streamable HTTP server."""
STDIO_TYPES = ("stdio",)

Transport = Literal["stdio", "http"]

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass(frozen=True)
class ServerConfig:
    """One server as it starts. `name`: its safe name (`safe_name`); `transport`:
    "stdio" (`command`, `args`, `env`, `cwd`; `url` "" and `headers` empty) or "http"
    (`url`, `headers`; `command` "", `args` and `env` empty, `cwd` None); every value
    with its variables expanded. `startup_ms`, `tool_ms`: its deadlines (`rules.mcp`'s
    `Limits`). `source`: the file it came from; `from_home`: that file is the home's
    settings, so its tools' annotations are believed."""

    name: str
    transport: Transport
    command: str
    args: tuple[str, ...]
    env: Mapping[str, str] = field(hash=False)
    cwd: Path | None
    url: str
    headers: Mapping[str, str] = field(hash=False)
    startup_ms: int
    tool_ms: int
    source: Path
    from_home: bool


# ---------------------------------------------------------------- names and files


def safe_name(name: str) -> str:
    """The name a server goes by: every character but letters, digits, `_` and `-` is `_`,
    and a run of `_` is one: `__` parts a tool's name (`mcp__<server>__<tool>`), so a server
    named `time__x` would fall under the rules of a server `time`."""
    return re.sub("_{2,}", "_", _UNSAFE.sub("_", name))


def home_file(env: Mapping[str, str]) -> Path:
    """The home's settings file, where `eukhe mcp add` writes."""
    return home(env) / "settings.json"


def claude_file(project: Path) -> Path:
    return Path(registry.at(str(project), CLAUDE_FILE))


def entries(data: JsonMapping, f: Path) -> JsonObject:
    """A file's `mcpServers` ({} when it has none), checked to be an object (a settings
    file's `check` did so already; `.mcp.json` is checked here too)."""
    got = data.get(KEY, {})
    if got is None:
        return {}
    if not isinstance(got, Mapping):
        raise SettingsError(f"setting {KEY}={_shown(got)} in {f}: expected an object")
    return dict(got)


# ---------------------------------------------------------------- one entry's shape


def _shown(v: JsonValue) -> str:
    r = repr(v)
    return r if len(r) <= 80 else r[:79] + "…"


def _kind(v: JsonValue) -> str:
    kinds = {dict: "an object", list: "a list", str: "a string", bool: "true or false", type(None): "null"}
    return kinds.get(type(v), "a number")


def _where(name: str, fld: str) -> str:
    return f"setting {KEY}.{name}.{fld}"


def _bad(name: str, fld: str, v: JsonValue, f: Path, want: str) -> SettingsError:
    return SettingsError(f"{_where(name, fld)}={_shown(v)} in {f}: expected {want}")


def _strings(name: str, fld: str, spec: JsonMapping, f: Path) -> tuple[str, ...]:
    v = spec.get(fld, [])
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise _bad(name, fld, v, f, "a list of strings")
    return tuple(v)


def _table(name: str, fld: str, spec: JsonMapping, f: Path) -> dict[str, str]:
    """An object of strings (`env`, `headers`). Its values may be secret: an error shows
    only what kind of value it found."""
    v = spec.get(fld, {})
    if not isinstance(v, Mapping):
        raise SettingsError(f"{_where(name, fld)} in {f}: expected an object of strings, got {_kind(v)}")
    for k, x in v.items():
        if not isinstance(x, str):
            raise SettingsError(f"{_where(name, f'{fld}.{k}')} in {f}: expected a string, got {_kind(x)}")
    return dict(v)


def _text(name: str, fld: str, spec: JsonMapping, f: Path) -> str:
    v = spec.get(fld, "")
    if not isinstance(v, str) or not v.strip():
        raise _bad(name, fld, v, f, "a non-empty string")
    return v


def _ms(name: str, fld: str, spec: JsonMapping, f: Path) -> int:
    v = spec.get(fld, 0)
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise _bad(name, fld, v, f, "a whole number of milliseconds >= 0 (0: the settings' own)")
    return v


@dataclass(frozen=True)
class Entry:
    """One entry as written (its variables not yet expanded), its shape checked."""

    name: str  # as written
    transport: Transport
    command: str
    args: tuple[str, ...]
    env: Mapping[str, str] = field(hash=False)
    cwd: str
    url: str
    headers: Mapping[str, str] = field(hash=False)
    startup_ms: int  # 0: unset
    tool_ms: int


def entry(name: str, spec: JsonValue, f: Path) -> Entry:
    """The entry `spec` of the server `name` in the file `f`, its shape checked: a
    `SettingsError` names the file, the server and the field."""
    if not safe_name(name):
        raise SettingsError(
            f"setting {KEY}.{name!r} in {f}: a server needs a name (letters, digits, '-' or '_')"
        )
    if not isinstance(spec, Mapping):
        raise SettingsError(f"setting {KEY}.{name}={_shown(spec)} in {f}: expected an object")
    kind = spec.get("type", "stdio")
    if kind == "sse":
        raise SettingsError(f"{f}: server {name}: type sse is not supported; use type http (streamable HTTP)")
    if kind not in STDIO_TYPES + HTTP_TYPES:
        want = "one of " + ", ".join(f'"{t}"' for t in STDIO_TYPES + HTTP_TYPES)
        raise _bad(name, "type", kind, f, want)
    startup, tool = _ms(name, "startupTimeoutMs", spec, f), _ms(name, "toolTimeoutMs", spec, f)
    if kind in HTTP_TYPES:
        url = _text(name, "url", spec, f)
        if "${" not in url and not _http(url):
            raise _bad(name, "url", url, f, "an http:// or https:// URL")
        headers = _table(name, "headers", spec, f)
        return Entry(name, "http", "", (), {}, "", url, headers, startup, tool)
    if "command" not in spec:
        hint = ', or "type": "http" with this "url"' if "url" in spec else " (a stdio server)"
        raise SettingsError(f'setting {KEY}.{name} in {f}: expected a "command"{hint}')
    command = _text(name, "command", spec, f)
    cwd = spec.get("cwd", "")
    if not isinstance(cwd, str):
        raise _bad(name, "cwd", cwd, f, "a path (a string)")
    env = _table(name, "env", spec, f)
    return Entry(name, "stdio", command, _strings(name, "args", spec, f), env, cwd, "", {}, startup, tool)


def _http(url: str) -> bool:
    scheme, sep, rest = url.partition("://")
    return bool(sep and rest) and scheme.lower() in ("http", "https")


# ---------------------------------------------------------------- variables


def expand(text: str, env: Mapping[str, str], name: str, fld: str, f: Path) -> str:
    """`text` with each `${VAR}` and `${VAR:-default}` replaced from `env`; an unset
    `${VAR}` without a default is an error naming the server, the field and VAR."""

    def one(m: re.Match[str]) -> str:
        var, default = m.group(1), m.group(2)
        got = env.get(var)
        if default is not None:
            return got if got else default
        if got is None:
            raise SettingsError(
                f"{_where(name, fld)} in {f}: the environment variable {var} is not set "
                f"(server {name} names it as ${{{var}}}); set it, or give a default: ${{{var}:-default}}"
            )
        return got

    return _VARIABLE.sub(one, text)


# ---------------------------------------------------------------- timeouts


def _from_env(env: Mapping[str, str], variable: str) -> int:
    raw = env.get(variable, "").strip()
    if not raw:
        return 0
    if not raw.isdigit():
        raise SettingsError(
            f"environment variable {variable}={raw!r}: expected a whole number of milliseconds >= 0"
        )
    return int(raw)


def _first(*candidates: int) -> int:
    return next((c for c in candidates if c > 0), candidates[-1])


def startup_ms(env: Mapping[str, str], own: int, settings: JsonMapping) -> int:
    """A server's start deadline: the environment, its own field, the settings, the default."""
    default = BY_NAME[STARTUP_KEY].default
    return _first(_from_env(env, STARTUP_VARIABLE), own, value(settings, STARTUP_KEY, int, 0), default)


def tool_ms(env: Mapping[str, str], own: int, settings: JsonMapping) -> int:
    """A call's deadline on a server: the environment, its own field, the settings, the default."""
    default = BY_NAME[TOOL_KEY].default
    return _first(_from_env(env, TOOL_VARIABLE), own, value(settings, TOOL_KEY, int, 0), default)


def gate_ms(settings: JsonMapping) -> int:
    """`mcp.startupGateMs`: how long a turn's first request waits for servers still
    starting (0: it does not wait)."""
    default: int = BY_NAME[GATE_KEY].default
    got: int = value(settings, GATE_KEY, int, default)
    return got


# ---------------------------------------------------------------- the servers in effect


def config(
    e: Entry,
    f: Path,
    from_home: bool,
    project: Path,
    env: Mapping[str, str],
    settings: JsonMapping,
    plugin_root: str = "",
) -> ServerConfig:
    """The entry as it starts: its variables expanded, its deadlines chosen; a plugin's
    (`plugin_root`, its folder) with `CLAUDE_PLUGIN_ROOT` to expand and in its environment."""
    n = e.name
    if plugin_root:
        env = {**env, ROOT: plugin_root}
        e = dataclasses.replace(e, env={ROOT: plugin_root, **e.env})
    limits = startup_ms(env, e.startup_ms, settings), tool_ms(env, e.tool_ms, settings)
    if e.transport == "http":
        url = expand(e.url, env, n, "url", f)
        if not _http(url):
            raise _bad(n, "url", url, f, "an http:// or https:// URL")
        headers = {k: expand(v, env, n, f"headers.{k}", f) for k, v in e.headers.items()}
        return ServerConfig(safe_name(n), "http", "", (), {}, None, url, headers, *limits, f, from_home)
    command = expand(e.command, env, n, "command", f)
    args = tuple(expand(a, env, n, f"args[{i}]", f) for i, a in enumerate(e.args))
    variables = {k: expand(v, env, n, f"env.{k}", f) for k, v in e.env.items()}
    cwd = project / os.path.expanduser(e.cwd) if e.cwd else project
    return ServerConfig(safe_name(n), "stdio", command, args, variables, cwd, "", {}, *limits, f, from_home)


def _trust(env: Mapping[str, str], project: Path) -> tuple[bool, str | None]:
    """Whether the project is trusted, and the line that says why not when its
    records cannot be read (they then trust nothing)."""
    try:
        return verdict(home(env), project) is True, None
    except TrustError as e:
        return False, f"{e}; this folder is taken as untrusted"


def plugin_servers(p: Plugin, taken: Taken | None) -> tuple[Path, JsonObject]:
    """A plugin's servers, each named `plugin:<plugin>:<server>`, and the file they are in: its
    `.mcp.json`'s `mcpServers` (or the file's own object, as plugins also write it), else its
    manifest's `mcpServers` (an object, or the path of a file that holds one)."""
    f = Path(p.root) / ".mcp.json"
    got = config_of(p, ".mcp.json", taken)
    if got is None:
        manifest = config_of(p, ".claude-plugin/plugin.json", taken) or {}
        named = manifest.get(KEY)
        f = Path(p.root) / (named if isinstance(named, str) else ".claude-plugin/plugin.json")
        got = (config_of(p, str(Path(named)), taken) or {}) if isinstance(named, str) else {KEY: named or {}}
    inner = got.get(KEY, got)
    found = entries({KEY: inner}, f)
    return f, {f"plugin:{p.name}:{name}": spec for name, spec in found.items()}


EDITOR = Path("session/new (the editor's MCP servers)")
"""Where an editor's servers are said to come from (`eukhe acp`)."""


def servers(
    cwd: Path, env: Mapping[str, str], editor: JsonMapping | None = None, taken: Taken | None = None
) -> tuple[tuple[ServerConfig, ...], tuple[str, ...]]:
    """The servers in effect in the project `cwd`, in the order first configured, and
    the notice lines of the servers held back (see the module's docstring). `env`:
    the environment variables expand from, and the timeouts' overrides (callers pass
    `os.environ`). `editor`: the servers an editor gave the session, in this file's shape,
    trusted as the home's (the person's own editor named them); `taken`: the run's
    configuration (None: the files as they are now). Raises SettingsError."""
    taken = Taken.take(cwd, env) if taken is None else taken
    user_file = home_file(env)
    user = read(user_file, taken)
    layer, said = project_layer(cwd, env, taken)  # `.eukhe/settings.json` as it applies here
    settings = merge(user, layer)
    said_file = project_file(cwd)
    lines: list[str] = []
    layers: list[tuple[Path, JsonObject, bool]] = [(user_file, entries(user, user_file), True)]
    effect = in_effect(home(env), cwd, taken)
    lines += effect.notices
    roots: dict[Path, str] = {}
    for p in effect.plugins:
        f, found_servers = plugin_servers(p, taken)
        if found_servers:
            roots[f] = p.root
            layers.append((f, found_servers, True))
    claude = claude_file(cwd)
    found = entries(read(claude, taken), claude)
    held: list[Held] = [h for h in said.held if h.key == KEY]
    trusted, why = _trust(env, cwd) if found or held else (False, None)
    lines += [why] if why else []  # the records could not be read: said once
    if found and trusted:
        layers.append((claude, found, False))
    elif found:
        lines += [notice(claude, h, cwd) for h in untrusted({KEY: found}, cwd)[1]]
    lines += [notice(said_file, h, cwd) for h in held]
    layers.append((said_file, entries(layer, said_file), False))
    if editor:
        layers.append((EDITOR, dict(editor), True))
    # one bad server is left out and said, never the others (a Claude Code file may hold an
    # sse server, or a variable unset here)
    chosen: dict[str, tuple[Entry, Path, bool] | None] = {}
    for f, specs, from_home in layers:
        for name, spec in specs.items():
            try:
                chosen[name] = (entry(str(name), spec, f), f, from_home)
            except SettingsError as bad:
                chosen[name] = None
                lines.append(f"MCP server {name!r} is not started: {bad}")
    by_safe: dict[str, tuple[str, Path]] = {}
    out: list[ServerConfig] = []
    for name, got in chosen.items():
        if got is None:
            continue
        e, f, h = got
        other = by_safe.setdefault(safe_name(name), (name, f))
        if other[0] != name:
            lines.append(
                f"MCP server {name!r} is not started: MCP servers {other[0]!r} ({other[1]}) "
                f"and {name!r} ({f}) both go by the name {safe_name(name)!r} (each character but letters, "
                "digits, '-' and '_' becomes '_'); rename one"
            )
            continue
        try:
            out.append(config(e, f, h, cwd, env, settings, roots.get(f, "")))
        except SettingsError as err:
            lines.append(f"MCP server {name!r} is not started: {err}")
    return tuple(out), tuple(dict.fromkeys(lines))
