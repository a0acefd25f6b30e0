"""What is secret, as plain pure functions: which environment variables the tools never
get, which settings values `eukhe settings` never prints, and how the known key values
are taken out of a text before it is stored, shown or sent.

The runtime asks these and decides nothing itself: `run.secrets` puts them together
for a run, the settings' faces mask with `masked`.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

__all__ = [
    "MASK",
    "MIN_KEY",
    "REDACTED",
    "SECRET_GLOBS",
    "Redaction",
    "held",
    "key_values",
    "masked",
    "masked_leaf",
    "redact",
    "secret_setting",
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
    """The key values a run takes out of what it stores, shows and sends."""

    values: tuple[str, ...] = ()

    def __call__(self, text: str) -> str:
        return redact(text, self.values)

    def stream(self, text: str) -> tuple[str, str]:
        """A stream's text so far (what it held back, then the new piece): what to show now,
        redacted, and what to hold for the next piece."""
        done = redact(text, self.values)
        cut = len(done) - held(done, self.values)
        return done[:cut], done[cut:]


def secret_setting(name: str) -> bool:
    """Whether a settings value under the key `name` is a secret (its last word is one of
    SECRET_WORDS)."""
    words = _WORDS.findall(name)
    return bool(words) and words[-1].lower() in SECRET_WORDS


def masked_leaf(path: Sequence[str], v: Any) -> Any:
    """A leaf of the settings at the dotted `path` as it may be shown: MASK under any key
    that looks secret, as `masked` shows its tree."""
    return MASK if v is not None and any(secret_setting(p) for p in path) else v


def masked(tree: Any) -> Any:
    """Settings as they may be shown: each value under a key that looks secret, MASK (a null
    stays null: it says no secret is set)."""
    if not isinstance(tree, Mapping):
        return tree
    return {k: (MASK if v is not None and secret_setting(str(k)) else masked(v)) for k, v in tree.items()}
