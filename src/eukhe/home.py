"""Where an eukhe home is: `$EUKHE_HOME`, else `~/.eukhe`. A module of its own so that
the interactive agent finds its history before it imports anything else."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def home(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    return Path(env.get("EUKHE_HOME") or Path.home() / ".eukhe")
