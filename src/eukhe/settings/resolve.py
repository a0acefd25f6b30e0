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

from eukhe.home import home
from eukhe.json_types import JsonMapping, JsonObject, JsonValue
from eukhe.settings.keys import BY_NAME, defaults
from eukhe.settings.load import Loaded, at_path, has_path, merge, project_file, project_layer, read
from eukhe.settings.secrets import masked, masked_leaf

DEFAULT = "default"
"""The source of a value no file sets."""


@dataclass(frozen=True)
class Resolved:
    """The merged settings, where each leaf came from, and the files looked at.

    values: the merged object (defaults under the files); sources: each leaf's dotted
    name -> "default" or the path of the file that set it; files: each file looked
    at, in merge order, and whether it exists; notices: the keys of the project's file
    an untrusted folder ignores (`settings.trust`)."""

    values: JsonObject
    sources: dict[str, str]
    files: tuple[tuple[Path, bool], ...]
    notices: tuple[str, ...] = ()  # the project's keys an untrusted folder ignores

    def get(self, key: str) -> JsonValue:
        node: JsonValue = self.values
        for part in key.split("."):
            node = node[part]
        return node

    def json(self) -> JsonObject:
        return {
            "settings": masked(self.values),  # a value under a secret-looking key shows as ***
            "sources": self.sources,
            "files": [{"path": str(p), "exists": e} for p, e in self.files],
            "notices": list(self.notices),
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

    def _leaf(self, key: str) -> JsonValue:
        path = tuple(key.split("."))
        return masked_leaf(path, at_path(self.values, path))


def _under_known(key: str) -> bool:
    """A leaf inside a known object key (a provider's settings, a model's)."""
    return any(key.startswith(k + ".") for k, spec in BY_NAME.items() if spec.kind == "object")


def leaves(tree: JsonMapping, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
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
    user = home(env) / "settings.json"
    layers: list[tuple[str, JsonObject]] = [(DEFAULT, defaults()), (str(user), read(user))]
    looked: list[tuple[Path, bool]] = [(user, user.is_file())]
    said = Loaded({})
    if project is not None:
        f = project_file(project)
        data, said = project_layer(project, env)
        looked.append((f, f.is_file()))
        layers.append((str(f), data))
    merged: JsonObject = {}
    for _, data in layers:
        merged = merge(merged, data)
    sources: dict[str, str] = {}
    for path in leaves(merged):
        for source, data in reversed(layers):
            if has_path(data, path):
                sources[".".join(path)] = source
                break
    return Resolved(merged, sources, tuple(looked), said.notices)
