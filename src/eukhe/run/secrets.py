"""A run's secrets, made once at its start from its settings and the process's environment
and passed down: the environment its tools' processes get (bash, the kernel and what they
start, a subagent's tools: each run makes its own), and the key values it takes out of
tool results, answers, errors and events. The rules are `settings.secrets`'."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from eukhe.ai.models import key_variables
from eukhe.settings.load import value
from eukhe.settings.secrets import Redaction, key_values, tool_environment

__all__ = ["Secrets", "secrets"]

KEEP = "shell.environment.keep"


@dataclass(frozen=True)
class Secrets:
    env: dict[str, str]
    """The tools' environment: the process's, without its secret variables but those kept."""
    redact: Redaction
    """The provider keys' values, taken out of what the run stores, shows and sends."""


def secrets(settings: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> Secrets:
    """A run's secrets under `settings` (its providers' `apiKeyEnv`, `shell.environment.keep`),
    from `environ` (None: this process's environment, where the keys are read from)."""
    environ = os.environ if environ is None else environ
    keys = key_variables(settings.get("providers"))
    keep = value(settings, KEEP, list, [])
    return Secrets(tool_environment(environ, keep, keys), Redaction(key_values(environ, keys)))
