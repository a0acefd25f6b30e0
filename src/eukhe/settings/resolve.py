"""The settings in effect: defaults, then the user's file, then the project's, and
where each value came from (what `eukhe settings` prints).

Every key the spec names has its default; keys eukhe does not know are kept as
the files have them; a known key of the wrong kind is an error naming the key,
the value and the file it came from. No file is ever written.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eukhe.settings.keys import BY_NAME, WANT, defaults, fits
from eukhe.settings.load import SettingsError, home, merge, read

DEFAULT = "default"
"""The source of a value no file sets."""


@dataclass(frozen=True)
class Resolved:
    """The merged settings, where each leaf came from, and the files looked at.

    values: the merged object (defaults under the files); sources: each leaf's dotted
    name -> "default" or the path of the file that set it; files: each file looked
    at, in merge order, and whether it exists."""

    values: dict[str, Any]
    sources: dict[str, str]
    files: tuple[tuple[Path, bool], ...]

    def get(self, key: str) -> Any:
        node: Any = self.values
        for part in key.split("."):
            node = node[part]
        return node

    def json(self) -> dict[str, Any]:
        return {
            "settings": self.values,
            "sources": self.sources,
            "files": [{"path": str(p), "exists": e} for p, e in self.files],
        }

    def lines(self) -> list[str]:
        """One line a value: `key = value  (source)`, unknown keys marked."""
        shown = {k: json.dumps(self._leaf(k), ensure_ascii=False) for k in self.sources}
        width = min(max((len(k) + len(v) + 3 for k, v in shown.items()), default=0), 60)
        out = []
        for f, exists in self.files:
            out.append(f"# {f}" + ("" if exists else " (none)"))
        for k in sorted(self.sources):
            left = f"{k} = {shown[k]}"
            note = "" if k in BY_NAME or _under_known(k) else "; unknown key, kept"
            out.append(f"{left.ljust(width)}  ({self.sources[k]}{note})")
        return out

    def _leaf(self, key: str) -> Any:
        return _at(self.values, tuple(key.split(".")))


def _under_known(key: str) -> bool:
    """A leaf inside a known object key (a provider's settings, a model's)."""
    return any(key.startswith(k + ".") for k, spec in BY_NAME.items() if spec.kind == "object")


def _at(tree: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = tree
    for part in path:
        node = node[part]
    return node


def _has(tree: Mapping[str, Any], path: tuple[str, ...]) -> bool:
    node: Any = tree
    for part in path:
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return True


def leaves(tree: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every leaf's path: a value that is not an object, an empty object, or a known
    key's whole value (a list of names is one leaf, `providers` is walked)."""
    out: list[tuple[str, ...]] = []
    for k, v in tree.items():
        path = (*prefix, str(k))
        spec = BY_NAME.get(".".join(path))
        if isinstance(v, Mapping) and v and (spec is None or spec.kind == "object"):
            out += leaves(v, path)
        else:
            out.append(path)
    return out


def resolve(project: Path | None = None, env: Mapping[str, str] | None = None) -> Resolved:
    """The settings in effect in `project` (None: the user's only)."""
    files = [home(env) / "settings.json"]
    if project is not None:
        files.append(project / ".eukhe" / "settings.json")
    layers: list[tuple[str, dict[str, Any]]] = [(DEFAULT, defaults())]
    looked: list[tuple[Path, bool]] = []
    for f in files:
        looked.append((f, f.is_file()))
        data = read(f)
        _check(data, f)
        layers.append((str(f), data))
    merged: dict[str, Any] = {}
    for _, data in layers:
        merged = merge(merged, data)
    sources: dict[str, str] = {}
    for path in leaves(merged):
        for source, data in reversed(layers):
            if _has(data, path):
                sources[".".join(path)] = source
                break
    return Resolved(merged, sources, tuple(looked))


def _shown(v: Any) -> str:
    r = repr(v)
    return r if len(r) <= 80 else r[:79] + "…"


def _check(data: Mapping[str, Any], f: Path) -> None:
    """Each known key the file sets has the key's kind; each object on its way is one."""
    for name, spec in BY_NAME.items():
        path = tuple(name.split("."))
        for i in range(1, len(path)):
            if _has(data, path[:i]) and not isinstance(_at(data, path[:i]), Mapping):
                parent, got = ".".join(path[:i]), _shown(_at(data, path[:i]))
                raise SettingsError(f"setting {parent}={got} in {f}: expected an object")
        if _has(data, path) and not fits(spec.kind, _at(data, path)):
            got = _shown(_at(data, path))
            raise SettingsError(f"setting {name}={got} in {f}: expected {WANT[spec.kind]}")
