"""Adding, removing and switching plugins: `eukhe plugin add|remove|enable|disable`.

`add SOURCE [PLUGIN...]`: SOURCE is a folder, a git URL (`https://`, `ssh://`, `git@`,
`file://`, or a local git repository's path), `owner/name` (GitHub's), or the name of a
marketplace the trusted settings know (`extraKnownMarketplaces`). What it holds:

- a marketplace: `.claude-plugin/marketplace.json`, `{"name": …, "plugins": [{"name": …,
  "source": "./plugins/x" | {"source": "github", "repo": …} | {"source": "url" | "git", "url":
  …}, "description": …, "version": …}]}`; every plugin it lists is added (or those named);
- one plugin: `.claude-plugin/plugin.json` (`{"name": …}`), added to the marketplace `local`.

A git source is cloned into the home (`git clone --depth 1`, within `GIT_SECONDS`, asking
nothing on the terminal); each plugin is copied into `<home>/plugins/cache/<marketplace>/<name>/`
(its links and `.git` left out), so that what runs is what the person added, whatever the
source becomes; adding it again takes it anew. Nothing is fetched at any other time.
Every change of the record is made under its lock and written at once."""

from __future__ import annotations

import datetime
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from eukhe.home import HomeError, private_dir
from eukhe.json_types import JsonMapping, JsonValue
from eukhe.plugins._effect import KNOWN, layers
from eukhe.plugins._record import FOLDER, Marketplace, Plugin, PluginError, Record, read, record_path, save
from eukhe.settings.load import SettingsError, read_object
from eukhe.settings.locked import locked

GIT_SECONDS = 300
"""How long a clone may take before it is stopped and the add fails, saying so."""
LOCAL = "local"
"""The marketplace of plugins added one by one."""
MANIFEST = ".claude-plugin/plugin.json"
MARKETPLACE = ".claude-plugin/marketplace.json"
CONFIGS = ("hooks/hooks.json", ".mcp.json", MANIFEST)
"""A plugin's JSON files of configuration, where Claude Code looks for them."""

_NAME = re.compile(r"[a-z0-9][a-z0-9._-]*")
_GITHUB = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
_URL = re.compile(r"(https?|ssh|git|file)://|[\w.-]+@[\w.-]+:")


@dataclass(frozen=True)
class Added:
    """What an add did: the marketplace, the plugins added, and what it left out, and why."""

    marketplace: Marketplace
    plugins: tuple[Plugin, ...]
    skipped: tuple[str, ...] = ()


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def _json(path: Path) -> JsonMapping:
    try:
        return read_object(path)
    except SettingsError as e:
        raise PluginError(str(e)) from e


def _name(value: JsonValue, where: str) -> str:
    if not isinstance(value, str) or not _NAME.fullmatch(value):
        raise PluginError(f"{where}: name={value!r}: expected lowercase letters, digits, '.', '_' and '-'")
    return value


ENTRY_PROTOCOLS = "https:ssh:git"
"""How git may fetch a marketplace's entry: over the network only. A stranger's marketplace
that named a local path, `file://` or `ext::` would copy one of the user's own repositories
into a plugin (and run its hooks), or run a command; the person's own `plugin add` of a
folder or a local repository they name is theirs to make."""


def clone(url: str, into: Path, protocols: str | None = None) -> None:
    """`git clone --depth 1 url into`, within `GIT_SECONDS`, over `protocols` only when given
    (git's GIT_ALLOW_PROTOCOL); PluginError naming the URL and git's own words when it fails
    or takes too long."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "SSH_ASKPASS": ""}
    if protocols is not None:
        env["GIT_ALLOW_PROTOCOL"] = protocols
    try:
        done = subprocess.run(
            ["git", "clone", "--quiet", "--depth", "1", "--", url, str(into)],
            capture_output=True,
            text=True,
            timeout=GIT_SECONDS,
            env=env,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        raise PluginError(
            f"cannot clone {url}: git took more than {GIT_SECONDS} s; nothing was added"
        ) from None
    except OSError as e:
        raise PluginError(f"cannot clone {url}: cannot run git: {e.strerror or e}") from e
    if done.returncode != 0:
        said = " ".join(done.stderr.split())[-400:] or f"exit status {done.returncode}"
        only = (
            f" (a marketplace's plugin is cloned over {', '.join(protocols.split(':'))} only)"
            if protocols
            else ""
        )
        raise PluginError(f"cannot clone {url}: {said}{only}; nothing was added")


def _git_repo(path: Path) -> bool:
    try:
        done = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "--git-dir"],
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def _copy(src: Path, dst: Path) -> None:
    """The plugin's folder copied to `dst` (replacing what was there), without links or `.git`."""

    def left_out(folder: str, names: list[str]) -> set[str]:
        return {n for n in names if n == ".git" or os.path.islink(os.path.join(folder, n))}

    if dst.exists():
        shutil.rmtree(dst)
    private_dir(dst.parent)
    try:
        shutil.copytree(src, dst, ignore=left_out)
    except (OSError, shutil.Error) as e:
        raise PluginError(f"cannot copy the plugin {src} into {dst}: {e}") from e


def _configs(root: Path, manifest: JsonMapping) -> tuple[str, ...]:
    """The plugin's JSON files that hold configuration: those where Claude Code looks, and a
    `hooks` or `mcpServers` path its manifest names."""
    found = [c for c in CONFIGS if (root / c).is_file()]
    for key in ("hooks", "mcpServers"):
        v = manifest.get(key)
        if isinstance(v, str) and (root / v).is_file() and os.path.normpath(v) not in found:
            rel = os.path.normpath(v)
            if not rel.startswith(".."):
                found.append(rel)
    return tuple(found)


def _resolve(source: str, home: Path, cwd: Path) -> tuple[str, str]:
    """(kind, where): a `folder` path, or a `git` URL, for what the person named."""
    path = Path(os.path.expanduser(source))
    path = path if path.is_absolute() else cwd / path
    if path.is_dir():
        if (path / MARKETPLACE).is_file() or (path / MANIFEST).is_file():
            return "folder", str(path.resolve())
        if _git_repo(path):
            return "git", str(path.resolve())
        raise PluginError(f"{path} holds neither {MARKETPLACE} nor {MANIFEST}: no marketplace, no plugin")
    if _URL.match(source):
        return "git", source
    objects, _ = layers(home, cwd)
    for _f, data in reversed(objects):  # the nearest trusted settings first
        known = data.get(KNOWN)
        entry = known.get(source) if isinstance(known, Mapping) else None
        got = entry.get("source") if isinstance(entry, Mapping) else None
        if isinstance(got, Mapping):
            kind = got.get("source")
            if kind == "directory" and isinstance(got.get("path"), str):
                return _resolve(str(got["path"]), home, cwd)
            if kind in ("git", "url") and isinstance(got.get("url"), str):
                return "git", str(got["url"])
            if kind == "github" and isinstance(got.get("repo"), str):
                return "git", f"https://github.com/{got['repo']}.git"
    if _GITHUB.fullmatch(source):
        return "git", f"https://github.com/{source}.git"
    raise PluginError(
        f"no folder, git URL or known marketplace {source!r}: give a folder holding {MARKETPLACE} or "
        f"{MANIFEST}, a git URL, owner/name on GitHub, or a name of {KNOWN} in your settings"
    )


def _plugin_source(entry: JsonMapping, base: Path, plugin_root: str, staging: Path) -> Path:
    """The folder of one marketplace entry's plugin (cloned into `staging` when it is a git one)."""
    src = entry.get("source")
    # checked before it names a folder: `staging / f"plugin-{name}"` with a name holding `/..`
    # put a stranger's clone anywhere the user may write
    name = _name(entry.get("name"), "a plugin of the marketplace")
    if isinstance(src, str):
        rel = src if src.startswith(("./", "../", "/")) or not plugin_root else os.path.join(plugin_root, src)
        got = (base / rel).resolve()
        if not got.is_relative_to(base.resolve()):
            raise PluginError(f"plugin {name}: source={src!r} leads out of its marketplace")
        return got
    if isinstance(src, Mapping):
        url = src.get("url") if src.get("source") in ("url", "git") else None
        if src.get("source") == "github" and isinstance(src.get("repo"), str):
            url = f"https://github.com/{src['repo']}.git"
        if isinstance(url, str):
            into = staging / f"plugin-{name}"
            clone(url, into, ENTRY_PROTOCOLS)
            return into
    raise PluginError(
        f"plugin {name}: source={src!r}: expected a path such as ./plugins/{name}, or a git source"
    )


def _one(home: Path, market: str, src: Path, entry: JsonMapping, when: str) -> Plugin:
    """Copy one plugin into the home and say what it is."""
    manifest = _json(src / MANIFEST) if (src / MANIFEST).is_file() else {}
    name = _name(manifest.get("name", entry.get("name")), str(src / MANIFEST))
    root = home / FOLDER / "cache" / market / name
    _copy(src, root)
    description = manifest.get("description", entry.get("description", ""))
    version = manifest.get("version", entry.get("version", ""))
    return Plugin(
        name=name,
        marketplace=market,
        root=str(root),
        enabled=True,
        description=description if isinstance(description, str) else "",
        version=version if isinstance(version, str) else "",
        added=when,
        configs=_configs(root, manifest),
    )


def add(home: Path, source: str, cwd: Path, only: Sequence[str] = ()) -> Added:
    """Add the marketplace or plugin `source` names (see the module's docstring), with every
    plugin it lists or those in `only`, enabled. PluginError: what cannot be added, and why;
    the record is then as it was."""
    kind, where = _resolve(source, home, cwd)
    when = _now()
    private_dir(home / FOLDER)
    with tempfile.TemporaryDirectory(dir=home / FOLDER, prefix=".adding-") as tmp:
        staging = Path(tmp)
        base = Path(where)
        if kind == "git":
            base = staging / "clone"
            clone(where, base)
        if (base / MARKETPLACE).is_file():
            listing = _json(base / MARKETPLACE)
            market = _name(listing.get("name"), str(base / MARKETPLACE))
            if market == LOCAL:
                raise PluginError(
                    f"{base / MARKETPLACE}: the name {LOCAL!r} is eukhe's, for plugins added one by one"
                )
            entries = listing.get("plugins")
            if not isinstance(entries, list):
                raise PluginError(f"{base / MARKETPLACE}: plugins={entries!r}: expected a list of plugins")
            meta = listing.get("metadata")
            plugin_root = str(meta.get("pluginRoot", "")) if isinstance(meta, Mapping) else ""
        elif (base / MANIFEST).is_file():
            market, entries, plugin_root = (
                LOCAL,
                [{"name": _json(base / MANIFEST).get("name"), "source": "./"}],
                "",
            )
        else:
            raise PluginError(
                f"{source}: holds neither {MARKETPLACE} nor {MANIFEST}: no marketplace, no plugin"
            )
        wanted = set(only)
        added: list[Plugin] = []
        skipped: list[str] = []
        for i, entry in enumerate(entries):
            if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
                skipped.append(f"plugins[{i}]: expected an object with a name")
                continue
            if wanted and entry["name"] not in wanted:
                continue
            try:
                added.append(
                    _one(home, market, _plugin_source(entry, base, plugin_root, staging), entry, when)
                )
            except PluginError as e:
                skipped.append(str(e))
        missing = wanted - {p.name for p in added}
        if missing:
            skipped.append(f"not in {market}: {', '.join(sorted(missing))}")
        if not added:
            raise PluginError(
                f"nothing was added from {source}: " + ("; ".join(skipped) or "it lists no plugin")
            )
        marketplace = Marketplace(
            market, source if kind == "folder" or market == LOCAL else where, kind, when
        )
        if kind == "git" and market != LOCAL:
            kept = home / FOLDER / "marketplaces" / market
            if kept.exists():
                shutil.rmtree(kept)
            private_dir(kept.parent)
            os.replace(base, kept)
        try:
            with locked(record_path(home)):
                record = read(home)
                record.marketplaces[market] = marketplace
                for p in added:
                    record.plugins[p.id] = p
                save(home, record)
        except HomeError as e:
            raise PluginError(str(e)) from e
    return Added(marketplace, tuple(added), tuple(skipped))


def _match(record: Record, name: str) -> list[str]:
    """The ids `name` names: an id, a plugin's name, or a marketplace's (all its plugins)."""
    if name in record.plugins:
        return [name]
    by_name = [i for i, p in record.plugins.items() if p.name == name]
    if by_name:
        return by_name
    return [i for i, p in record.plugins.items() if p.marketplace == name]


def _change(home: Path, name: str, act: str) -> list[Plugin]:
    try:
        with locked(record_path(home)):
            record = read(home)
            ids = _match(record, name)
            if not ids:
                known = ", ".join(record.plugins) or "none added"
                raise PluginError(f"no plugin or marketplace {name!r} (the plugins: {known})")
            changed: list[Plugin] = []
            for i in ids:
                p = record.plugins[i]
                if act == "remove":
                    del record.plugins[i]
                    shutil.rmtree(p.root, ignore_errors=True)
                else:
                    record.plugins[i] = replace(p, enabled=act == "enable")
                changed.append(record.plugins.get(i, p))
            if act == "remove":
                for m in [
                    m
                    for m in record.marketplaces
                    if not any(p.marketplace == m for p in record.plugins.values())
                ]:
                    del record.marketplaces[m]
                    shutil.rmtree(home / FOLDER / "marketplaces" / m, ignore_errors=True)
            save(home, record)
    except HomeError as e:
        raise PluginError(str(e)) from e
    return changed


def remove(home: Path, name: str) -> list[Plugin]:
    """Remove the plugins `name` names (an id, a plugin's name, a marketplace's), their copies
    with them, and a marketplace left with none."""
    return _change(home, name, "remove")


def enable(home: Path, name: str, on: bool) -> list[Plugin]:
    """Enable (or disable) the plugins `name` names, in the record."""
    return _change(home, name, "enable" if on else "disable")
