"""The hooks in effect, configured the way Claude Code configures them.

Where hooks come from, each a `hooks` object of events (`rules.hook.Event`'s names), each
event a list of `{"matcher": str, "hooks": [{"type": "command", "command": str, "timeout":
seconds, ...}]}`:

1. the home's `settings.json` (`$EUKHE_HOME/settings.json`);
2. the project's `.claude/settings.json` (Claude Code's, so a team's hooks work unchanged)
   and `.claude/settings.local.json` (a person's own, beside it);
3. the project's `.eukhe/settings.json`.

4. each plugin in effect (`eukhe.plugins.in_effect`: added by the person, enabled), its
   `hooks/hooks.json` (Claude Code's `{"hooks": {...}}`) or its manifest's `hooks`; a plugin's
   hook runs with `CLAUDE_PLUGIN_ROOT` set to its folder, and `${CLAUDE_PLUGIN_ROOT}` in its
   command is that folder. A plugin is the person's choice: its hooks load in any folder, and
   fall under every law a hook does (they run through the one runner).

Every source adds its hooks (none replaces another's), in that order, as Claude Code adds
those of its settings files; an event runs every hook whose matcher takes it, and the same
command once (`Hooks.for_event`).

Trust (`eukhe.settings.trust`): `hooks` is a `TRUST` key. In a folder not trusted (refused,
or never asked), the project's hooks, of any of its three files, never load: one notice
line a file names the file and how many hooks it holds back, by event
(`trust.counted`), in the words of every held-back key (`trust.notice`). The notice of
`.eukhe/settings.json` is the very line `settings.loaded` gives among its notices (a caller
that shows both shows it once). Unreadable trust records trust nothing, and say so. A
`.claude/` file is read as another program's settings (`settings.load.read_object`: only
its `hooks` key is eukhe's business).

A hook is `{"type": "command", "command": str}` with, optionally, `timeout` (seconds, a
number > 0; unset: `rules.hook.TIMEOUT_MS`), and eukhe's own fields `onFailure` ("deny",
the default: a guard that fails denies its call; "allow": it lets the call through, the
failure still shown) and `env` (the names of the variables of eukhe's own environment the
hook also sees; it sees the tools' environment, without secrets, besides). `matcher` (a
regular expression over a tool's Claude Code name, `rules.hook.matches`; empty or `*`:
every tool) counts for the tool events, and for the events whose matcher is over a field of
theirs (`rules.hook.MATCHED_ON`: a SessionStart's `source`, ...). Other fields are
ignored, as Claude Code's other fields would be.

What cannot be read, and what becomes of it (every line names the file and the key):

- a file that is not a JSON object, or a `hooks` that is not an object: `SettingsError`,
  like any malformed setting;
- a malformed entry of a guard's event (`rules.hook.GUARDS`: PreToolUse,
  PermissionRequest): `SettingsError`, every such place named, one a line. A guard left
  out would let the calls it guards run unguarded (`hook_guard_fails_closed`), so the
  settings are refused instead, as a malformed setting is;
- a malformed entry of any other event: left out, with a notice line; the rest load;
- one of Claude Code's events with no meaning in eukhe (`rules.hook.NOT_FIRED`): its hooks
  are left out, with a notice line saying why eukhe never fires it;
- an event eukhe does not know (a newer Claude Code's, or a misspelt one): its hooks are
  left out, with a notice line naming it and the events eukhe fires.

`hookLimits.maxStopBlocks` (default `rules.hook.MAX_STOP_BLOCKS`): how many times Stop
(and SubagentStop) hooks may keep one run going before it ends failed
(`rules.hook.after_stop`). It is eukhe's own key, beside `hooks` and not inside it, since
Claude Code's `hooks` holds events only; a `TRUST` key too (a project could otherwise let
your own Stop hooks keep every run going longer).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from eukhe.home import home
from eukhe.json_types import JsonMapping, JsonValue
from eukhe.plugins import Plugin, config_of, in_effect, root_in
from eukhe.rules import hook as rule
from eukhe.rules import registry
from eukhe.settings.load import SettingsError, Taken, merge, project_file, project_layer, read, value
from eukhe.settings.trust import TrustError, counted, notice, untrusted, verdict

__all__ = [
    "CLAUDE_FILES",
    "KEY",
    "LIMIT_KEY",
    "Hook",
    "Hooks",
    "Loaded",
    "Matcher",
    "load",
    "parse",
]

KEY = "hooks"
"""The object of hooks by event, in every file that configures them."""
LIMIT_KEY = "hookLimits.maxStopBlocks"
"""eukhe's cap on a run's Stop blocks (`rules.hook.after_stop`)."""
CLAUDE_FILES = (Path(".claude/settings.json"), Path(".claude/settings.local.json"))
"""Claude Code's project settings files, relative to the project, in the order read (each one
`rules.registry` names: `claude_files`)."""
TYPES = ("command",)
"""The hook types eukhe runs (Claude Code's `prompt` and `agent` hooks are not among them)."""
FAILURES = ("deny", "allow")
"""`onFailure`'s values: a guard that fails denies its call, or lets it through."""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_EVENTS = {e.value: e for e in rule.Event}


@dataclass(frozen=True)
class Hook:
    """One command as it runs: `bash -c command` for at most `timeout_ms` (None: the rule's
    `TIMEOUT_MS`) and its grace; `open_on_failure`: `onFailure: allow`; `env_names`: the
    variables of eukhe's environment it also sees; `source`: the file it came from;
    `plugin_root`: a plugin's hook's folder, its `CLAUDE_PLUGIN_ROOT` ("": no plugin's)."""

    command: str
    timeout_ms: int | None
    open_on_failure: bool
    env_names: tuple[str, ...]
    source: Path
    plugin_root: str = ""


@dataclass(frozen=True)
class Matcher:
    """One entry of an event's list: its matcher (empty: every tool) and its hooks."""

    event: rule.Event
    matcher: str
    hooks: tuple[Hook, ...]


@dataclass(frozen=True)
class Hooks:
    """Every hook in effect, in the order configured, and the cap on a run's Stop blocks."""

    matchers: tuple[Matcher, ...] = ()
    max_stop_blocks: int = rule.MAX_STOP_BLOCKS

    def for_event(self, event: rule.Event, subject: str | None = None) -> list[Hook]:
        """The hooks `event` runs, in the order configured: for an event with a matcher
        (`rule.has_matcher`), those whose matcher takes `subject` (a tool event's tool, by
        eukhe's name; a SessionStart's source, ...; None: none, which only an empty or `*`
        matcher takes); for any other, all of them. A command
        configured twice runs once (Claude Code's deduplication), as first configured."""
        out: list[Hook] = []
        seen: set[str] = set()
        for m in self.matchers:
            if m.event is not event:
                continue
            if rule.has_matcher(event) and not rule.matches(m.matcher, subject or ""):
                continue
            for h in m.hooks:
                if h.command not in seen:
                    seen.add(h.command)
                    out.append(h)
        return out


@dataclass(frozen=True)
class Loaded:
    """The hooks in effect, and the notice lines of what was held back or left out."""

    hooks: Hooks
    notices: tuple[str, ...] = ()


# ---------------------------------------------------------------- one file's `hooks`


def _shown(v: JsonValue) -> str:
    r = repr(v)
    return r if len(r) <= 80 else r[:79] + "…"


class _Bad(Exception):
    """One place that cannot be read: its message names the file and the key."""


def _bad(where: str, v: JsonValue, f: Path, want: str) -> _Bad:
    return _Bad(f"setting {where}={_shown(v)} in {f}: expected {want}")


def _hook(where: str, spec: JsonValue, f: Path) -> Hook:
    if not isinstance(spec, Mapping):
        raise _bad(where, spec, f, 'an object such as {"type": "command", "command": "./check.sh"}')
    kind = spec.get("type", None)
    if kind not in TYPES:
        raise _bad(f"{where}.type", kind, f, '"command" (eukhe runs command hooks only)')
    command = spec.get("command")
    if not isinstance(command, str) or not command.strip():
        raise _bad(f"{where}.command", command, f, "a command (a non-empty string), run with bash -c")
    timeout = spec.get("timeout")
    ms: int | None = None
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
            raise _bad(f"{where}.timeout", timeout, f, "a number of seconds > 0")
        ms = max(round(timeout * 1000), 1)
    failure = spec.get("onFailure", "deny")
    if failure not in FAILURES:
        raise _bad(f"{where}.onFailure", failure, f, 'one of "deny", "allow"')
    names = spec.get("env", [])
    if not isinstance(names, list) or not all(isinstance(n, str) and _NAME.fullmatch(n) for n in names):
        raise _bad(f"{where}.env", names, f, 'a list of environment variable names, such as ["GITHUB_TOKEN"]')
    return Hook(command, ms, failure == "allow", tuple(names), f)


def _matcher(event: rule.Event, where: str, spec: JsonValue, f: Path) -> Matcher:
    if not isinstance(spec, Mapping):
        raise _bad(where, spec, f, 'an object such as {"matcher": "Bash", "hooks": [...]}')
    matcher = spec.get("matcher", "")
    if not isinstance(matcher, str):
        raise _bad(f"{where}.matcher", matcher, f, "a string (a regular expression over tool names)")
    if rule.has_matcher(event) and matcher not in ("", "*"):
        try:
            re.compile(matcher)
        except re.error as e:
            raise _bad(f"{where}.matcher", matcher, f, f"a regular expression ({e})") from None
    hooks = spec.get("hooks")
    if not isinstance(hooks, list):
        want = 'a list of hooks such as [{"type": "command", "command": "…"}]'
        raise _bad(f"{where}.hooks", hooks, f, want)
    return Matcher(event, matcher, tuple(_hook(f"{where}.hooks[{i}]", h, f) for i, h in enumerate(hooks)))


def parse(data: JsonValue, f: Path) -> tuple[list[Matcher], list[str], list[str]]:
    """A file's `hooks` object: its matchers, the notice lines of what is left out, and the
    errors of the guards' entries that cannot be read (see the module's docstring). A
    `hooks` that is not an object is an error of its own."""
    if data is None:
        return [], [], []
    if not isinstance(data, Mapping):
        return [], [], [str(_bad(KEY, data, f, "an object of events such as PreToolUse"))]
    out: list[Matcher] = []
    notices: list[str] = []
    errors: list[str] = []
    for name, groups in data.items():
        event = _EVENTS.get(str(name))
        why = rule.NOT_FIRED.get(str(name))
        if event is None and why is not None:
            notices.append(
                f"setting {KEY}.{name} in {f}: {name} is Claude Code's, and eukhe never fires it: "
                f"{why}; its {counted({name: groups})} never run"
            )
            continue
        if event is None:
            fires = ", ".join(_EVENTS)
            notices.append(
                f"setting {KEY}.{name} in {f}: {name} is not an event eukhe fires ({fires}); "
                f"its {counted({name: groups})} never run"
            )
            continue
        if not isinstance(groups, list):
            bad = str(_bad(f"{KEY}.{name}", groups, f, 'a list such as [{"matcher": "", "hooks": [...]}]'))
            (errors if event in rule.GUARDS else notices).append(bad)
            continue
        for i, spec in enumerate(groups):
            try:
                out.append(_matcher(event, f"{KEY}.{name}[{i}]", spec, f))
            except _Bad as e:
                if event in rule.GUARDS:
                    errors.append(str(e))
                else:
                    notices.append(f"{e}; the hooks of {KEY}.{name}[{i}] are left out")
    return out, notices, errors


# ---------------------------------------------------------------- the hooks in effect


def _trust(env: Mapping[str, str], project: Path) -> tuple[bool, str | None]:
    """Whether the project is trusted, and the line that says why not when its records
    cannot be read (they then trust nothing)."""
    try:
        return verdict(home(env), project) is True, None
    except TrustError as e:
        return False, f"{e}; this folder is taken as untrusted"


def _limit(settings: JsonMapping) -> int:
    got: int = value(settings, LIMIT_KEY, int, rule.MAX_STOP_BLOCKS)
    return got


def claude_files(project: Path) -> list[Path]:
    """Claude Code's settings files of `project`, where the registry places them."""
    return [Path(registry.at(str(project), str(c))) for c in CLAUDE_FILES]


PLUGIN_HOOKS = "hooks/hooks.json"
"""Where a plugin keeps its hooks (Claude Code's place), relative to its folder."""


def plugin_hooks(p: Plugin, taken: Taken | None) -> tuple[Path, JsonValue]:
    """A plugin's `hooks` object and the file it is in: its `hooks/hooks.json`'s, else its
    manifest's `hooks` (an object, or the path of a file that holds one). SettingsError: a file
    that cannot be read."""
    got = config_of(p, PLUGIN_HOOKS, taken)
    if got is not None:
        return Path(p.root) / PLUGIN_HOOKS, got.get(KEY)
    manifest = config_of(p, ".claude-plugin/plugin.json", taken) or {}
    named = manifest.get(KEY)
    if isinstance(named, str):
        inner = config_of(p, str(Path(named)), taken) or {}
        return Path(p.root) / named, inner.get(KEY)
    return Path(p.root) / ".claude-plugin/plugin.json", named


def _of_plugin(m: Matcher, p: Plugin) -> Matcher:
    hooks = tuple(dataclasses.replace(h, command=root_in(h.command, p), plugin_root=p.root) for h in m.hooks)
    return dataclasses.replace(m, hooks=hooks)


def load(project: Path | None, env: Mapping[str, str], taken: Taken | None = None) -> Loaded:
    """The hooks in effect in `project` (None: the home's only), and the notice lines of
    what was held back or left out (see the module's docstring). `env`: where the home is
    found (callers pass `os.environ`); `taken`: the run's configuration (None: the files as
    they are now). Raises SettingsError: a file that cannot be read, or a guard's entry that
    cannot be (every one named, a line each)."""
    taken = Taken.take(project, env) if taken is None else taken
    user_file = home(env) / "settings.json"
    user = read(user_file, taken)
    sources: list[tuple[Path, JsonValue]] = [(user_file, user.get(KEY))]
    settings = user
    lines: list[str] = []
    if project is not None:
        layer, said = project_layer(project, env, taken)  # `.eukhe/settings.json` as it applies here
        settings = merge(user, layer)
        claude = claude_files(project)
        found: list[tuple[Path, JsonValue, SettingsError | None]] = []
        for c in claude:
            try:
                data = taken.object(c)
            except SettingsError as e:  # said below: an error where trusted, a notice elsewhere
                found.append((c, None, e))
                continue
            if KEY in data:
                found.append((c, data[KEY], None))
        trusted, why = _trust(env, project) if found else (False, None)
        lines += [why] if why else []
        for c, hooks, unread in found:
            if unread is not None and trusted:
                raise unread
            if unread is not None:
                lines.append(f"{unread}; its hooks are not read: this folder is not trusted")
            elif trusted:
                sources.append((c, hooks))
            else:
                lines += [notice(c, h, project) for h in untrusted({KEY: hooks}, project)[1]]
        said_file = project_file(project)
        lines += [notice(said_file, h, project) for h in said.held if h.key == KEY]
        sources.append((said_file, layer.get(KEY)))
    matchers: list[Matcher] = []
    errors: list[str] = []
    for f, data in sources:
        got, notices, bad = parse(data, f)
        matchers += got
        lines += notices
        errors += bad
    effect = in_effect(home(env), project, taken)
    lines += effect.notices
    for p in effect.plugins:
        f, data = plugin_hooks(p, taken)
        got, notices, bad = parse(data, f)
        matchers += [_of_plugin(m, p) for m in got]
        lines += notices
        errors += bad
    if errors:
        raise SettingsError("\n".join(errors))
    return Loaded(Hooks(tuple(matchers), _limit(settings)), tuple(dict.fromkeys(lines)))
