"""Reading settings.json files: merged, validated where read, never rewritten; and a run's
configuration taken once (`Taken`): every JSON file its loaders read, read together when the
run is put together, so that nothing of its own (its subagents, its Stop and SessionEnd hooks)
reads the disk again in the middle of it."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from eukhe.errors import Code, EukheError
from eukhe.filekind import kind
from eukhe.home import home
from eukhe.json_types import JsonMapping, JsonObject, JsonValue
from eukhe.rules import fetch as _fetch
from eukhe.rules import job, registry
from eukhe.rules import queue as _queue
from eukhe.rules import view as _view
from eukhe.rules.child import stall_ms
from eukhe.rules.compactor import NODE
from eukhe.settings.keys import BY_NAME, RULE_KEYS, SUBAGENT_MAX_DEPTH, TOOL_BLOCKING_BUDGET_MS, WANT, fits
from eukhe.settings.rule_syntax import EXAMPLE, wrong
from eukhe.settings.run import Price, Settings
from eukhe.settings.trust import Held, TrustError, notice, untrusted, verdict


class SettingsError(EukheError, ValueError):
    """A settings file or value that cannot be used: names the file, the place and why."""

    code = Code.SETTINGS


CAP = 1 << 20
"""The largest settings file eukhe reads, in bytes."""


def read(path: Path, taken: Taken | None = None) -> JsonObject:
    """One settings file ({} when there is none), checked (`check`). Read the way skill
    files are: opened without blocking, a regular file only, at most CAP bytes, so a
    FIFO, a device or a huge file is an error and never a hang. `taken`: the run's
    configuration, which holds it as it was read when the run was put together."""
    data = taken.object(path) if taken is not None else read_object(path)
    check(data, path)
    return data


JSON_FILES = tuple(e.path for e in registry.ENTRIES if e.path.endswith(".json"))
"""The JSON files a project holds for eukhe's loaders (`rules.registry`): its settings, its MCP
servers, Claude Code's settings (for their hooks)."""


PLUGINS_RECORD = Path("plugins") / "known.json"
"""The home's record of the plugins a person added (`eukhe.plugins`), relative to the home."""


def plugin_files(home_path: Path) -> list[Path]:
    """The JSON files of configuration the home's plugins bring (their hooks, their MCP servers,
    their manifests), as the record lists them (`configs`, relative to each plugin's `root`):
    a run takes them with the rest. A record that cannot be read lists none (it is taken
    too, and its reader says why)."""
    try:
        record = read_object(home_path / PLUGINS_RECORD)
    except SettingsError:
        return []
    plugins = record.get("plugins")
    out: list[Path] = []
    for p in plugins.values() if isinstance(plugins, dict) else ():
        root, configs = (p.get("root"), p.get("configs")) if isinstance(p, dict) else (None, None)
        if isinstance(root, str) and isinstance(configs, list):
            out += [Path(root) / c for c in configs if isinstance(c, str)]
    return out


@dataclass(frozen=True)
class Taken:
    """A run's configuration, taken once (`take`): each JSON file its loaders read (the home's
    `settings.json`, and the project's registered ones), by absolute path, as its object or as
    why it could not be read. Every loader of a run reads through it (`object`); a path it did
    not take is an error, never a read of the disk: a run reads the configuration it started
    with, whatever is written on disk meanwhile."""

    files: Mapping[str, JsonObject | str] = field(default_factory=dict)

    @classmethod
    def take(cls, project: Path | None, env: Mapping[str, str] | None = None) -> Taken:
        """The home's settings and plugins (`plugin_files`) and, with a `project`, its
        registered JSON files, read now."""
        paths = [home(env) / "settings.json", home(env) / PLUGINS_RECORD, *plugin_files(home(env))]
        if project is not None:
            paths += [Path(registry.at(str(project), rel)) for rel in JSON_FILES]
        files: dict[str, JsonObject | str] = {}
        for p in paths:
            try:
                files[os.path.abspath(p)] = read_object(p)
            except SettingsError as e:
                files[os.path.abspath(p)] = str(e)
        return cls(files)

    def object(self, path: Path) -> JsonObject:
        """The object `path` held when the run took its configuration ({}: none was there).
        SettingsError: it could not be read then, or the run never took it."""
        got = self.files.get(os.path.abspath(path))
        if got is None:
            taken = ", ".join(self.files) or "none"
            raise SettingsError(
                f"settings file {path}: not part of the configuration this run took ({taken}); a loader "
                "reads only what rules.registry names"
            )
        if isinstance(got, str):
            raise SettingsError(got)
        return got


def read_object(path: Path) -> JsonObject:
    """A JSON object file ({} when there is none), read as `read` reads one, its keys not
    checked as eukhe's: another program's settings (Claude Code's `.claude/settings.json`,
    whose `sandbox` and `permissions` mean its own things), of which eukhe reads one key."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return {}
    except OSError as e:
        raise SettingsError(f"settings file {path}: cannot read it: {e.strerror or e}") from e
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SettingsError(
                f"settings file {path}: {kind(st.st_mode)}, not a regular file; eukhe reads settings "
                "from regular files only"
            )
        if st.st_size > CAP:
            raise SettingsError(
                f"settings file {path}: {st.st_size:,} bytes; a settings file holds at most {CAP:,}"
            )
        raw = b""
        while len(raw) <= CAP:
            got = os.read(fd, CAP + 1 - len(raw))
            if not got:
                break
            raw += got
    except OSError as e:
        raise SettingsError(f"settings file {path}: cannot read it: {e.strerror or e}") from e
    finally:
        os.close(fd)
    if len(raw) > CAP:
        raise SettingsError(
            f"settings file {path}: more than {CAP:,} bytes; a settings file holds at most {CAP:,}"
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SettingsError(f"settings file {path}: not UTF-8 text (byte {e.start})") from e
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise SettingsError(
            f"settings file {path}, line {e.lineno} column {e.colno}: not valid JSON: {e.msg}"
        ) from e
    except RecursionError as e:
        raise SettingsError(f"settings file {path}: nested too deeply to be settings") from e
    if not isinstance(data, dict):
        raise SettingsError(f"settings file {path}: expected a JSON object, got {_json_kind(data)}")
    return data


def _json_kind(v: JsonValue) -> str:
    kinds = {dict: "an object", list: "a list", str: "a string", bool: "true or false", type(None): "null"}
    return kinds.get(type(v), "a number")


def _shown(v: JsonValue) -> str:
    r = repr(v)
    return r if len(r) <= 80 else r[:79] + "…"


def at_path(tree: JsonMapping, path: tuple[str, ...]) -> JsonValue:
    node: JsonValue = tree
    for part in path:
        node = node[part]
    return node


def has_path(tree: JsonMapping, path: tuple[str, ...]) -> bool:
    node: JsonValue = tree
    for part in path:
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return True


# the fields of a provider's and of a model's object, and the kind of each
PROVIDER_FIELDS = {
    "api": "text",
    "baseUrl": "text",
    "apiKeyEnv": "text",
    "concurrency": "whole",
    "queueLimit": "whole",
}
MODEL_FIELDS = {
    "contextWindow": "whole",
    "maxOutputTokens": "whole",
    "price": "price",
    "reasoningEffort": "text",
    "input": "inputs",
}


def check(data: JsonMapping, f: Path) -> None:
    """The one check of a settings file, for every command: each known key it sets has
    the key's kind, each object on the way to one is an object, and each provider and
    model is an object whose known fields have their kinds. The error names the file,
    the key, the kind expected and what was found."""
    for name, spec in BY_NAME.items():
        path = tuple(name.split("."))
        for i in range(1, len(path)):
            if has_path(data, path[:i]) and not isinstance(at_path(data, path[:i]), Mapping):
                parent, got = ".".join(path[:i]), _shown(at_path(data, path[:i]))
                raise SettingsError(f"setting {parent}={got} in {f}: expected an object")
        if has_path(data, path) and not fits(spec.kind, at_path(data, path)):
            got = _shown(at_path(data, path))
            raise SettingsError(f"setting {name}={got} in {f}: expected {WANT[spec.kind]}")
    for name in RULE_KEYS:  # each rule in Claude Code's syntax, named by its place
        path = tuple(name.split("."))
        for i, rule in enumerate(at_path(data, path) if has_path(data, path) else []):
            if why := wrong(rule):
                got = _shown(rule)
                raise SettingsError(f"setting {name}[{i}]={got} in {f}: expected a rule {EXAMPLE}; {why}")
    for key, fields in (("providers", PROVIDER_FIELDS), ("models", MODEL_FIELDS)):
        for entry, v in (data.get(key) or {}).items():
            if not isinstance(v, Mapping):
                raise SettingsError(f"setting {key}.{entry}={_shown(v)} in {f}: expected an object")
            for field_, want in fields.items():
                if field_ in v and not fits(want, v[field_]):
                    got = _shown(v[field_])
                    raise SettingsError(f"setting {key}.{entry}.{field_}={got} in {f}: expected {WANT[want]}")


def merge(base: JsonMapping, over: JsonMapping) -> JsonObject:
    out = dict(base)
    for k, v in over.items():
        out[k] = merge(out[k], v) if isinstance(out.get(k), Mapping) and isinstance(v, Mapping) else v
    return out


@dataclass(frozen=True)
class Loaded:
    """The settings in effect, and what the project's file held back: `notices`, one
    line a key an untrusted folder ignores; `trusted`, the project folder's record
    (None: never asked); `held`, the keys held back."""

    values: JsonObject
    notices: tuple[str, ...] = ()
    trusted: bool | None = None
    held: tuple[Held, ...] = ()


def project_file(project: Path) -> Path:
    return Path(registry.at(str(project), ".eukhe/settings.json"))


def project_layer(
    project: Path, env: Mapping[str, str] | None = None, taken: Taken | None = None
) -> tuple[JsonObject, Loaded]:
    """The project's file as it applies (in full where trusted), and what it held back."""
    f = project_file(project)
    data = read(f, taken)
    if not data:
        return data, Loaded({})
    user = home(env) / "settings.json"  # what a project may narrow, not widen
    try:
        trusted = verdict(home(env), project)
    except TrustError as e:  # unreadable records trust nothing, and say so
        kept, held = untrusted(data, project, read(user, taken))
        return kept, Loaded({}, (f"{e}; this folder is taken as untrusted",), None, tuple(held))
    if trusted:
        return data, Loaded({}, (), True)
    kept, held = untrusted(data, project, read(user, taken))
    return kept, Loaded({}, tuple(notice(f, h, project) for h in held), trusted, tuple(held))


def loaded(
    project: Path | None = None, env: Mapping[str, str] | None = None, taken: Taken | None = None
) -> Loaded:
    """The user's settings merged with the project's as it applies (see `settings.trust`);
    `taken`: the run's configuration (None: the files as they are now)."""
    taken = Taken.take(project, env) if taken is None else taken
    merged = read(home(env) / "settings.json", taken)
    if project is None:
        return Loaded(merged)
    layer, said = project_layer(project, env, taken)
    return Loaded(merge(merged, layer), said.notices, said.trusted, said.held)


def load(
    project: Path | None = None, env: Mapping[str, str] | None = None, taken: Taken | None = None
) -> JsonObject:
    """The settings in effect (`loaded`'s values)."""
    return loaded(project, env, taken).values


def value(settings: JsonMapping, key: str, kind: type, default: JsonValue) -> JsonValue:
    """The dotted key's value, checked against its kind (bool is not an int here)."""
    node: JsonValue = settings
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return default
        node = node[part]
    ok = isinstance(node, kind) and not (kind is int and isinstance(node, bool))
    if not ok or (kind is int and node < 0):
        want = "a whole number >= 0" if kind is int else kind.__name__
        raise SettingsError(f"setting {key}={node!r}: expected {want}")
    return node


def model_limit(settings: JsonMapping, model: str | None, key: str, what: str) -> int:
    """`models.<provider/model>.<key>` (0 when unset). Read from the `models` object by
    the whole name, which may hold dots. `what`: what the number is, for the error."""
    models = settings.get("models")
    if model is None or not isinstance(models, Mapping):
        return 0
    spec = models.get(model)
    if not isinstance(spec, Mapping) or key not in spec:
        return 0
    n = spec[key]
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise SettingsError(f"setting models.{model}.{key}={n!r}: expected a whole number >= 1 ({what})")
    return n


def max_output_tokens(settings: JsonMapping, model: str | None) -> int:
    """The most tokens a reply may have (0: the provider's own limit)."""
    what = "the most tokens a reply may have; leave it out for the provider's own limit"
    return model_limit(settings, model, "maxOutputTokens", what)


def context_window(settings: JsonMapping, model: str | None) -> int:
    """The model's context window in tokens (0: unknown, so no threshold compaction)."""
    what = "the model's context window in tokens; leave it out when unknown"
    return model_limit(settings, model, "contextWindow", what)


def price(settings: JsonMapping, model: str | None) -> Price | None:
    """`models.<model>.price` (its shape checked by `check`), or None when unset."""
    models = settings.get("models")
    spec = models.get(model) if isinstance(models, Mapping) and model else None
    p = spec.get("price") if isinstance(spec, Mapping) else None
    if not isinstance(p, Mapping):
        return None
    cached = p.get("cached")
    return Price(float(p["input"]), float(p["output"]), None if cached is None else float(cached))


def reasoning_effort(settings: JsonMapping, model: str | None) -> str | None:
    """`models.<model>.reasoningEffort`, or None when unset."""
    models = settings.get("models")
    spec = models.get(model) if isinstance(models, Mapping) and model else None
    effort = spec.get("reasoningEffort") if isinstance(spec, Mapping) else None
    return effort.strip() if isinstance(effort, str) and effort.strip() else None


def run_settings(settings: JsonMapping, model: str | None = None) -> Settings:
    """The settings a run of `model` reads."""
    d = Settings()
    return Settings(
        max_output_tokens=max_output_tokens(settings, model),
        context_window=context_window(settings, model),
        price=price(settings, model),
        reasoning_effort=reasoning_effort(settings, model),
        max_tool_rounds=value(settings, "maxToolRounds", int, d.max_tool_rounds),
        retry_enabled=value(settings, "retry.enabled", bool, d.retry_enabled),
        max_retries=value(settings, "retry.maxRetries", int, d.max_retries),
        base_delay_ms=value(settings, "retry.baseDelayMs", int, d.base_delay_ms),
        max_retry_delay_ms=value(settings, "retry.provider.maxRetryDelayMs", int, d.max_retry_delay_ms),
        stream_idle_timeout_ms=value(
            settings, "retry.provider.streamIdleTimeoutMs", int, d.stream_idle_timeout_ms
        )
        or d.stream_idle_timeout_ms,
    )


@dataclass(frozen=True)
class MemorySettings:
    view_bytes: int  # memory.viewBytes: the view's budget
    settle_ms: int  # memory.settleTimeoutMs: how long a turn waits for its view


SMALLEST_VIEW = len(_view.OPEN) + len(_view.CLOSE) + len(f"{2**64}+1|") + NODE + 1
"""The least view budget that holds one line of any message: under it not even the newest fits."""


@dataclass(frozen=True)
class ChildSettings:
    """What subagents, the kernel and background jobs run within: `subagentStallMs` (0 or
    unset: the default), `subagents.maxDepth`, `toolBlockingBudgetMs` (0 or unset: the
    default), `bash.backgroundLifetimeMs`."""

    stall_ms: int
    max_depth: int
    budget_ms: int
    job_lifetime_s: float = job.LIFETIME_S  # `bash.backgroundLifetimeMs` (0 or unset: the rule's)


def child_settings(settings: JsonMapping) -> ChildSettings:
    budget = value(settings, "toolBlockingBudgetMs", int, 0)
    lifetime = value(settings, "bash.backgroundLifetimeMs", int, 0)
    return ChildSettings(
        stall_ms(value(settings, "subagentStallMs", int, 0)),
        value(settings, "subagents.maxDepth", int, SUBAGENT_MAX_DEPTH),
        budget if budget > 0 else TOOL_BLOCKING_BUDGET_MS,
        lifetime / 1000 if lifetime > 0 else job.LIFETIME_S,
    )


def fetch_settings(settings: JsonMapping) -> _fetch.Cfg:
    """A web fetch's bounds, `webFetch.*` (each file's check has refused a time of 0)."""
    d, key = _fetch.Cfg(), _fetch.KEYS
    return _fetch.Cfg(
        connect_ms=value(settings, key["connect"], int, d.connect_ms),
        first_byte_ms=value(settings, key["first_byte"], int, d.first_byte_ms),
        total_ms=value(settings, key["total"], int, d.total_ms),
        max_bytes=value(settings, key["bytes"], int, d.max_bytes),
        max_redirects=value(settings, key["redirects"], int, d.max_redirects),
    )


def memory_settings(settings: JsonMapping) -> MemorySettings:
    """`memory.viewBytes` (default VIEW) and `memory.settleTimeoutMs` (0 or unset: 20 s)."""
    budget = value(settings, "memory.viewBytes", int, _view.VIEW)
    if budget < SMALLEST_VIEW:
        raise SettingsError(
            f"setting memory.viewBytes={budget}: the view could not hold even the newest message's line; "
            f"it takes at least {SMALLEST_VIEW} bytes (the default is {_view.VIEW})"
        )
    settle = _queue.settle_timeout(value(settings, "memory.settleTimeoutMs", int, 0))
    return MemorySettings(budget, settle)
