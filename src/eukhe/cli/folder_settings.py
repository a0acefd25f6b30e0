"""The settings in effect in the current folder, as every command reads them: the keys
its `.eukhe/settings.json` holds that an untrusted folder ignores are said first, one
line each (`eukhe.settings.trust`), on stderr."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from eukhe.cli.output import echo
from eukhe.json_types import JsonObject
from eukhe.settings import loaded


def notices(lines: Sequence[str]) -> None:
    """One line a key the folder's settings hold back; never asked (commands go on untrusted)."""
    for line in lines:
        echo(f"eukhe: {line}", err=True)


def settings_here() -> JsonObject:
    """The current folder's settings; what they hold back, said. Raises SettingsError."""
    got = loaded(Path.cwd())
    notices(got.notices)
    return got.values
