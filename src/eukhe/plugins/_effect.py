"""Which plugins are in effect in a project, and what each brings.

A plugin added by a person (`eukhe plugin add`) is trusted as that person's choice, like
the home's own settings: its hooks, agents, commands, skills and MCP servers load in every
project, untrusted ones too, while it is enabled. Whether it is: the record's flag (`eukhe
plugin enable`/`disable`), then Claude Code's `enabledPlugins` (`{"name@marketplace": true}`)
of the trusted settings, each over the one before: the home's `settings.json`, then, where the
project is trusted (`eukhe trust`), its `.claude/settings.json`, `.claude/settings.local.json`
and `.eukhe/settings.json`. A project's `enabledPlugins` can only switch plugins the person
added: one that names a plugin not added says so, and how to add it; nothing is fetched.
In a folder not trusted, a project's `enabledPlugins` is not read (one line says so)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from eukhe.json_types import JsonMapping, JsonValue
from eukhe.plugins._record import Plugin, PluginError, read
from eukhe.rules import registry
from eukhe.settings.load import SettingsError, Taken, read_object
from eukhe.settings.trust import TrustError, verdict

ENABLED = "enabledPlugins"
"""Claude Code's settings key: `{"name@marketplace": true | false}`."""
KNOWN = "extraKnownMarketplaces"
"""Claude Code's settings key: marketplaces by name, `{"source": {"source": "directory", "path":
…} | {"source": "git", "url": …} | {"source": "github", "repo": "owner/name"}}`; `eukhe plugin add
NAME` adds one (never a run)."""
ROOT = "CLAUDE_PLUGIN_ROOT"
"""The variable that names a plugin's folder, in its hooks' and servers' commands and
environments, and in its commands' text."""

PROJECT_FILES = (".claude/settings.json", ".claude/settings.local.json", ".eukhe/settings.json")
"""A project's settings files whose `enabledPlugins` count where it is trusted, in order."""


@dataclass(frozen=True)
class Effect:
    """The plugins in effect, in the order added, and the lines of what was not read or named
    a plugin not added."""

    plugins: tuple[Plugin, ...] = ()
    notices: tuple[str, ...] = ()


def root_in(text: str, plugin: Plugin) -> str:
    """`text` with `${CLAUDE_PLUGIN_ROOT}` (and `$CLAUDE_PLUGIN_ROOT`) as the plugin's folder."""
    return text.replace("${" + ROOT + "}", plugin.root).replace("$" + ROOT, plugin.root)


def _object(path: Path, taken: Taken | None) -> JsonMapping:
    return taken.object(path) if taken is not None else read_object(path)


def _switches(data: JsonMapping, f: Path, lines: list[str]) -> dict[str, bool]:
    v: JsonValue = data.get(ENABLED)
    if v is None:
        return {}
    if not isinstance(v, Mapping) or not all(isinstance(x, bool) for x in v.values()):
        lines.append(
            f'setting {ENABLED} in {f}: expected an object such as {{"name@marketplace": true}}; not read'
        )
        return {}
    return {str(k): bool(x) for k, x in v.items()}


def layers(
    home: Path, project: Path | None, taken: Taken | None = None
) -> tuple[list[tuple[Path, JsonMapping]], list[str]]:
    """The trusted settings objects that may switch plugins, in order (see the module's
    docstring), and the lines of what was not read."""
    lines: list[str] = []
    out: list[tuple[Path, JsonMapping]] = []
    for f in [home / "settings.json"]:
        try:
            out.append((f, _object(f, taken)))
        except SettingsError as e:
            lines.append(f"{e}; its {ENABLED} are not read")
    if project is None:
        return out, lines
    found: list[tuple[Path, JsonMapping]] = []
    for f in (Path(registry.at(str(project), rel)) for rel in PROJECT_FILES):
        try:
            data = _object(f, taken)
        except SettingsError:
            continue  # its own loader says why; a file that cannot be read switches nothing
        if ENABLED in data or KNOWN in data:
            found.append((f, data))
    if not found:  # the trust records are asked only when a project has something to say
        return out, lines
    try:
        trusted = verdict(home, project) is True
    except TrustError as e:
        lines.append(f"{e}; this folder is taken as untrusted: its {ENABLED} are not read")
        trusted = False
    return out + (found if trusted else []), lines


def in_effect(home: Path, project: Path | None = None, taken: Taken | None = None) -> Effect:
    """The enabled plugins for `project` (None: the home's settings only), as the run took
    them (`taken`) or as the files are now. Never raises: a record that cannot be read is a
    line, and no plugin is in effect."""
    try:
        record = read(home, taken)
    except PluginError as e:
        return Effect((), (str(e),))
    objects, lines = layers(home, project, taken)
    switched: dict[str, tuple[bool, Path]] = {}
    for f, data in objects:
        for pid, on in _switches(data, f, lines).items():
            switched[pid] = (on, f)
    for pid, (on, f) in switched.items():
        if on and pid not in record.plugins:
            market = pid.partition("@")[2] or "its marketplace"
            lines.append(
                f"setting {ENABLED} in {f} enables the plugin {pid!r}, which is not added; to add it, "
                f"run `eukhe plugin add` with {market}'s folder or git URL (nothing is fetched without you)"
            )
    chosen = tuple(p for pid, p in record.plugins.items() if switched.get(pid, (p.enabled, None))[0])
    return Effect(chosen, tuple(dict.fromkeys(lines)))


def config_of(plugin: Plugin, rel: str, taken: Taken | None) -> JsonMapping | None:
    """One JSON file of the plugin's (`hooks/hooks.json`, `.mcp.json`, its manifest), as the run
    took it; None when the plugin has none."""
    if rel not in plugin.configs:
        return None
    return _object(Path(plugin.root) / rel, taken)
