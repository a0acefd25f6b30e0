"""What `eukhe plugin list` and the agent's `/plugins` show."""

from __future__ import annotations

from pathlib import Path

from eukhe.json_types import JsonObject
from eukhe.plugins._effect import in_effect
from eukhe.plugins._record import PluginError, read


def listing(home: Path, project: Path | None = None) -> list[str]:
    """A line a marketplace and a plugin (whether it is in effect here, and why not), then the
    lines of what was not read."""
    try:
        record = read(home)
    except PluginError as e:
        return [str(e)]
    if not record.plugins:
        return ["no plugins are added (eukhe plugin add FOLDER|GIT-URL; see docs/plugins.md)"]
    effect = in_effect(home, project)
    live = {p.id for p in effect.plugins}
    out: list[str] = []
    for name, m in record.marketplaces.items():
        out.append(f"{name}: {m.kind} {m.source}, added by you {m.added}")
        for pid, p in record.plugins.items():
            if p.marketplace != name:
                continue
            state = "enabled" if pid in live else ("disabled here by settings" if p.enabled else "disabled")
            version = f" {p.version}" if p.version else ""
            out.append(f"  {pid}{version}: {state}; {p.description or 'no description'}")
            out.append(f"    {p.root}")
    return out + list(effect.notices)


def listing_json(home: Path, project: Path | None = None) -> JsonObject:
    """The record, and which plugins are in effect here."""
    record = read(home)
    effect = in_effect(home, project)
    out = record.json()
    out["inEffect"] = [p.id for p in effect.plugins]
    out["notices"] = list(effect.notices)
    return out
