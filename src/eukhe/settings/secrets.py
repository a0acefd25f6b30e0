"""What is secret, as plain pure functions: which environment variables the tools never
get, which settings values `eukhe settings` never prints, which values this process knows
as secret (`secret_values`), and how they are taken out of a text, or of every string of
a JSON-like value, before it is stored, shown or sent (`Redaction`).

The runtime asks these and decides nothing itself: `run.secrets` puts them together
for a run, the settings' faces mask with `masked`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from eukhe.json_types import JsonValue

__all__ = [
    "MASK",
    "MIN_KEY",
    "NO_SECRETS",
    "REDACTED",
    "SECRET_GLOBS",
    "Redaction",
    "held",
    "key_values",
    "masked",
    "masked_leaf",
    "redact",
    "secret_setting",
    "secret_values",
    "secret_variable",
    "tool_environment",
]

SECRET_GLOBS = ("*KEY*", "*SECRET*", "*TOKEN*", "*PASSWORD*", "*CREDENTIAL*")
"""Names of environment variables the tools never get (matched case-insensitively)."""

REDACTED = "[redacted]"
"""What a known key's value becomes in a tool result, an answer, an error or an event."""

MIN_KEY = 8
"""The shortest value taken for a key: a shorter one would cut ordinary words out of texts."""

MASK = "***"
"""How `eukhe settings` shows a value whose key name looks secret."""

SECRET_WORDS = frozenset(
    {
        "key",
        "apikey",
        "token",
        "secret",
        "password",
        "passwd",
        "credential",
        "credentials",
        "authorization",
        "cookie",
    }
)
"""A settings key whose last word is one of these holds a secret (`apiKey`, `api_key`, `token`,
`clientSecret`); one that only counts or names one does not (`maxOutputTokens`, `apiKeyEnv`)."""

_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def secret_variable(name: str, hidden: Collection[str] = ()) -> bool:
    """Whether the environment variable `name` is kept from the tools: it matches a secret
    glob, or it is one of `hidden` (the variables the providers' keys are read from)."""
    upper = name.upper()
    return name in hidden or any(fnmatchcase(upper, g) for g in SECRET_GLOBS)


def tool_environment(
    env: Mapping[str, str], keep: Sequence[str] = (), hidden: Collection[str] = ()
) -> dict[str, str]:
    """`env` without its secret variables (`secret_variable`), but for those a name or glob of
    `keep` (`shell.environment.keep`, matched as written) passes back."""
    return {
        k: v for k, v in env.items() if not secret_variable(k, hidden) or any(fnmatchcase(k, g) for g in keep)
    }


def key_values(env: Mapping[str, str], names: Collection[str]) -> tuple[str, ...]:
    """The values of the variables `names` that `env` holds, those of MIN_KEY characters or
    more, longest first (a key that holds another is taken whole)."""
    found = {env[n] for n in names if len(env.get(n) or "") >= MIN_KEY}
    return tuple(sorted(found, key=lambda v: (-len(v), v)))


def redact(text: str, values: Sequence[str]) -> str:
    """`text` with every occurrence of each of `values` replaced by REDACTED, in one pass
    (so a replacement is never matched again)."""
    if not values or not text:
        return text
    return re.sub("|".join(re.escape(v) for v in values), REDACTED, text)


def held(text: str, values: Sequence[str]) -> int:
    """How many characters at the end of `text` may be the start of one of `values`: a stream
    shows the rest now and these with what comes next, so a key split across two pieces is
    still taken out whole."""
    most = 0
    for v in values:
        for n in range(min(len(v) - 1, len(text)), most, -1):
            if text.endswith(v[:n]):
                most = n
                break
    return most


@dataclass(frozen=True)
class Redaction:
    """The secret values a run (or a process) takes out of what it stores, shows and sends.

    Each value is taken out as written and as JSON escapes it (a value holding `"`, `\\`, a
    control character or a non-ASCII one is spelled otherwise inside a JSON string: a tool
    call's raw arguments, a body already serialized), so neither spelling survives."""

    values: tuple[str, ...] = ()
    forms: tuple[str, ...] = field(init=False, repr=False, compare=False)
    """The values and their JSON spellings, longest first (a value that holds another is taken whole)."""
    _pattern: re.Pattern[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        forms = {f for v in self.values if v for f in _spellings(v)}
        ordered = tuple(sorted(forms, key=lambda v: (-len(v), v)))
        object.__setattr__(self, "forms", ordered)  # frozen: made once, here
        pattern = re.compile("|".join(re.escape(f) for f in ordered)) if ordered else None
        object.__setattr__(self, "_pattern", pattern)

    def __call__(self, text: str) -> str:
        """`text` with every value (in either spelling) replaced by REDACTED, in one pass."""
        if self._pattern is None or not text:
            return text
        return self._pattern.sub(REDACTED, text)

    def deep(self, value: JsonValue) -> JsonValue:
        """`value` with every string in it redacted, the keys of its dicts too: a JSON-like
        value (dicts, lists, tuples; any other leaf is kept as it is). Strings are redacted
        before they are serialized, so no escaping hides a value."""
        if self._pattern is None:
            return value
        if isinstance(value, str):
            return self(value)
        if isinstance(value, Mapping):
            return {(self(k) if isinstance(k, str) else k): self.deep(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.deep(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self.deep(v) for v in value)
        return value

    def stream(self, text: str) -> tuple[str, str]:
        """A stream's text so far (what it held back, then the new piece): what to show now,
        redacted, and what to hold for the next piece."""
        done = self(text)
        cut = len(done) - held(done, self.forms)
        return done[:cut], done[cut:]


NO_SECRETS = Redaction()
"""The redaction that knows no value: what a part given none takes out (nothing)."""


def _spellings(value: str) -> set[str]:
    """`value` as written and as JSON writes it inside a string, with and without ASCII escapes."""
    return {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}


CARRIERS = frozenset({"headers", "env"})
"""Settings objects whose entries are a name and its value: an MCP server's `env` and `headers`,
a provider's `headers`. A value there is secret when its name looks secret."""


def secret_values(
    environ: Mapping[str, str],
    trees: Iterable[JsonValue] = (),
    hidden: Collection[str] = (),
    keep: Sequence[str] = (),
) -> tuple[str, ...]:
    """Every secret value this process knows, longest first: the value of each environment
    variable whose name is secret (`secret_variable`, `hidden`: the providers' key
    variables, whatever `keep` says) but those the tools are given on purpose (`keep`, as
    `tool_environment` has it), and of the settings `trees` (the settings in effect; MCP servers as eukhe
    loads them, as `{"env": ..., "headers": ...}`) each string under a key that looks secret
    (`secret_setting`) or under `headers` or `env` with a name that does; and of a value
    like `Bearer abc…`, its token too. A value shorter than MIN_KEY is left out: it would
    cut ordinary words out of texts. One that names a variable still (`${VAR}`) is no
    value: the variable's own is taken where it is secret."""
    given = tool_environment(environ, keep, hidden)  # a provider's key is never given back
    found = [v for k, v in environ.items() if k in hidden or (secret_variable(k) and k not in given)]
    for tree in trees:
        found += _under_secret_keys(tree, ())
    out = {part for v in found for part in (v, *_token(v))}
    return tuple(sorted((v for v in out if len(v) >= MIN_KEY and "${" not in v), key=lambda v: (-len(v), v)))


def _under_secret_keys(tree: JsonValue, path: tuple[str, ...]) -> Iterator[str]:
    if isinstance(tree, Mapping):
        for k, v in tree.items():
            yield from _under_secret_keys(v, (*path, str(k)))
    elif isinstance(tree, list | tuple):
        for v in tree:
            yield from _under_secret_keys(v, path)
    elif isinstance(tree, str) and _secret_at(path):
        yield tree


def _secret_at(path: tuple[str, ...]) -> bool:
    if any(secret_setting(p) for p in path):
        return True
    named = len(path) >= 2 and path[-2] in CARRIERS
    return named and (secret_setting(path[-1]) or secret_variable(path[-1]))


def _token(value: str) -> tuple[str, ...]:
    """The token of a header value that names its scheme first (`Bearer abc…`, `Basic …`)."""
    parts = value.split()
    return (parts[1],) if len(parts) == 2 else ()


def secret_setting(name: str) -> bool:
    """Whether a settings value under the key `name` is a secret (its last word is one of
    SECRET_WORDS)."""
    words = _WORDS.findall(name)
    return bool(words) and words[-1].lower() in SECRET_WORDS


def masked_leaf(path: Sequence[str], v: JsonValue) -> JsonValue:
    """A leaf of the settings at the dotted `path` as it may be shown: MASK under any key
    that looks secret, as `masked` shows its tree."""
    return MASK if v is not None and any(secret_setting(p) for p in path) else v


def masked(tree: JsonValue) -> JsonValue:
    """Settings as they may be shown: each value under a key that looks secret, MASK (a null
    stays null: it says no secret is set)."""
    if not isinstance(tree, Mapping):
        return tree
    return {k: (MASK if v is not None and secret_setting(str(k)) else masked(v)) for k, v in tree.items()}
