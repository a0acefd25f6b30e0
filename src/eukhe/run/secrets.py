"""A run's secrets, made once at its start from its settings and the process's environment
and passed down: the environment its tools' processes get (bash, the kernel and what they
start, a subagent's tools: each run makes its own), and the redaction of every secret value
the process knows (`settings.secrets.secret_values`: secret-looking variables, the
providers' keys, the settings' secret values and headers, its MCP servers' env and headers),
which takes them out of every message it stores, every event it shows and every request it
sends. The rules are `settings.secrets`'; here they are applied to a run's own types (a
reply, a tool call, a message)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from eukhe.ai.models import key_variables
from eukhe.ai.reply import Failure, Reply, Thinking, ToolCall
from eukhe.ai.request import Message
from eukhe.json_types import JsonMapping, JsonValue
from eukhe.mcp.config import servers
from eukhe.settings.load import SettingsError, Taken, value
from eukhe.settings.secrets import Redaction, secret_values, tool_environment

__all__ = ["Secrets", "call", "failure", "message", "redaction", "reply", "secrets"]

KEEP = "shell.environment.keep"


@dataclass(frozen=True)
class Secrets:
    env: dict[str, str]
    """The tools' environment: the process's, without its secret variables but those kept."""
    redact: Redaction
    """Every secret value the process knows, taken out of what the run stores, shows and sends."""


def secrets(
    settings: JsonMapping,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    taken: Taken | None = None,
) -> Secrets:
    """A run's secrets under `settings` (its providers' `apiKeyEnv`, `shell.environment.keep`),
    from `environ` (None: this process's environment, where the keys are read from); `cwd`:
    its project, `taken` its configuration (`redaction`)."""
    environ = os.environ if environ is None else environ
    keys = key_variables(settings.get("providers"))
    keep = value(settings, KEEP, list, [])
    return Secrets(tool_environment(environ, keep, keys), redaction(settings, environ, cwd, taken))


def redaction(
    settings: JsonMapping,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    taken: Taken | None = None,
) -> Redaction:
    """Every secret value known under `settings` and `environ` (None: this process's), taken
    out as one redaction. `cwd`: the project, whose MCP servers (`.mcp.json` included) count
    as eukhe starts them, their variables expanded; None: the servers of `settings` only, as
    written. `taken`: the run's configuration (None: the files as they are now)."""
    environ = os.environ if environ is None else environ
    trees: list[JsonValue] = [settings]
    if cwd is not None:
        try:
            configs, _ = servers(cwd, environ, taken=taken)
        except SettingsError:  # the run says it where it starts them; here only their values count
            configs = ()
        trees += [{"env": dict(c.env), "headers": dict(c.headers)} for c in configs]
    keys = key_variables(settings.get("providers"))
    return Redaction(secret_values(environ, trees, keys, _kept(settings)))


def _kept(settings: JsonMapping) -> list[str]:
    """`shell.environment.keep`: the variables the tools get on purpose, which come back
    as they are. Malformed, it keeps none here (the run refuses it where it starts)."""
    try:
        return [str(k) for k in value(settings, KEEP, list, [])]
    except SettingsError:
        return []


def call(c: ToolCall, redact: Redaction) -> ToolCall:
    """A tool call as it is stored, shown and sent back: its raw arguments, its parsed ones
    and its error redacted (the tool itself runs the call as the model sent it)."""
    arguments = redact.deep(c.arguments) if c.arguments is not None else None
    error = redact(c.error) if c.error is not None else None
    return dataclasses.replace(c, raw=redact(c.raw), arguments=arguments, error=error)


def message(m: Message, redact: Redaction) -> Message:
    """A message as the transcript keeps it: its text and its calls redacted."""
    return dataclasses.replace(m, content=redact(m.content), calls=tuple(call(c, redact) for c in m.calls))


def reply(r: Reply, redact: Redaction) -> Reply:
    """A reply as its step records it: its text, its thinking, its calls and its failure redacted."""
    f = r.failure
    return dataclasses.replace(
        r,
        text=tuple(redact(t) for t in r.text),
        thinking=tuple(Thinking(redact(t.text), t.signature) for t in r.thinking),
        calls=tuple(call(c, redact) for c in r.calls),
        failure=failure(f, redact) if f is not None else None,
    )


def failure(f: Failure, redact: Redaction) -> Failure:
    """A failure as it is stored and shown: its message, and the repeated line it names."""
    return dataclasses.replace(f, message=redact(f.message), line=redact(f.line) if f.line else f.line)
