"""The home's record of the plugins a person added: `<home>/plugins/known.json`.

It holds each marketplace added (its name, where it came from, when) and each plugin (its
marketplace, its folder in the home, whether it is enabled, and the JSON files of its
configuration a run takes: `configs`). It is written under its lock, all at once
(`settings.locked`), by `eukhe plugin` alone: a person's act. A run reads it as it reads
the home's `settings.json`, once (`settings.load.Taken`, which takes it and each plugin's
`configs` with the rest of the run's configuration)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from eukhe.errors import Code, EukheError
from eukhe.json_types import JsonMapping, JsonObject
from eukhe.settings.load import PLUGINS_RECORD, SettingsError, Taken, read_object
from eukhe.settings.locked import write

FOLDER = "plugins"
"""The home's folder of plugins: the record, the marketplaces cloned, the plugins' copies."""


class PluginError(EukheError, ValueError):
    """A plugin or marketplace that cannot be added, found or changed: says which and why."""

    code = Code.SETTINGS


@dataclass(frozen=True)
class Marketplace:
    """A marketplace added: its name (its `marketplace.json`'s; `local` for plugins added one
    by one), where it came from as the person named it, how (`folder` or `git`), when."""

    name: str
    source: str
    kind: str
    added: str

    def json(self) -> JsonObject:
        return {"source": self.source, "kind": self.kind, "added": self.added}


@dataclass(frozen=True)
class Plugin:
    """A plugin added: its name, its marketplace's, its folder in the home (`root`, what
    `${CLAUDE_PLUGIN_ROOT}` names), whether the person enabled it, what it says it does, its
    version, when it was added, and the JSON files of its configuration (relative to `root`)."""

    name: str
    marketplace: str
    root: str
    enabled: bool = True
    description: str = ""
    version: str = ""
    added: str = ""
    configs: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        """`name@marketplace`, as Claude Code's `enabledPlugins` names it."""
        return f"{self.name}@{self.marketplace}"

    def json(self) -> JsonObject:
        return {
            "name": self.name,
            "marketplace": self.marketplace,
            "root": self.root,
            "enabled": self.enabled,
            "description": self.description,
            "version": self.version,
            "added": self.added,
            "configs": list(self.configs),
        }


@dataclass(frozen=True)
class Record:
    """The record: marketplaces by name, plugins by id."""

    marketplaces: dict[str, Marketplace] = field(default_factory=dict)
    plugins: dict[str, Plugin] = field(default_factory=dict)

    def json(self) -> JsonObject:
        return {
            "marketplaces": {n: m.json() for n, m in self.marketplaces.items()},
            "plugins": {i: p.json() for i, p in self.plugins.items()},
        }


def record_path(home: Path) -> Path:
    return home / PLUGINS_RECORD


def _text(d: JsonMapping, key: str) -> str:
    v = d.get(key)
    return v if isinstance(v, str) else ""


def of(data: JsonMapping, path: Path) -> Record:
    """The record a file's object holds; PluginError naming the file for one that is not."""
    markets, plugins = data.get("marketplaces", {}), data.get("plugins", {})
    if not isinstance(markets, dict) or not isinstance(plugins, dict):
        raise PluginError(f"plugin record {path}: expected marketplaces and plugins objects; fix: remove it")
    out = Record()
    for name, m in markets.items():
        if isinstance(m, dict):
            out.marketplaces[str(name)] = Marketplace(
                str(name), _text(m, "source"), _text(m, "kind"), _text(m, "added")
            )
    for pid, p in plugins.items():
        if not isinstance(p, dict) or not _text(p, "root"):
            raise PluginError(
                f"plugin record {path}: plugins.{pid} has no root; fix: eukhe plugin remove {pid}"
            )
        configs = p.get("configs", [])
        out.plugins[str(pid)] = Plugin(
            name=_text(p, "name"),
            marketplace=_text(p, "marketplace"),
            root=_text(p, "root"),
            enabled=p.get("enabled") is not False,
            description=_text(p, "description"),
            version=_text(p, "version"),
            added=_text(p, "added"),
            configs=tuple(c for c in configs if isinstance(c, str)) if isinstance(configs, list) else (),
        )
    return out


def read(home: Path, taken: Taken | None = None) -> Record:
    """The home's record (empty when there is none), as the run took it (`taken`) or as it is
    now. PluginError: it cannot be read, naming the file and why."""
    path = record_path(home)
    try:
        data = taken.object(path) if taken is not None else read_object(path)
    except SettingsError as e:
        raise PluginError(f"the plugins cannot be read: {e}") from e
    return of(data, path)


def save(home: Path, record: Record) -> None:
    """Write the record at once (the caller holds its lock: `settings.locked.locked`)."""
    write(record_path(home), json.dumps(record.json(), indent=2, ensure_ascii=False) + "\n")
