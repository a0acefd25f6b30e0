"""settings.json: the user's (`$EUKHE_HOME`, default `~/.eukhe`) deep-merged with the
project's (`.eukhe/settings.json`) over a default for every key; a malformed file is
a clear error naming the file and the place, and is never rewritten.

`resolve` gives the settings in effect and where each value came from (what
`eukhe settings` prints); `load` the files' merge alone; `KEYS` every key eukhe
reads, with its default.
"""

from eukhe.home import home
from eukhe.settings.keys import KEYS, Key, defaults
from eukhe.settings.load import (
    ChildSettings,
    Loaded,
    MemorySettings,
    SettingsError,
    child_settings,
    fetch_settings,
    load,
    loaded,
    memory_settings,
    run_settings,
    value,
)
from eukhe.settings.resolve import DEFAULT, Resolved, resolve

__all__ = [
    "DEFAULT",
    "KEYS",
    "ChildSettings",
    "Key",
    "Loaded",
    "MemorySettings",
    "Resolved",
    "SettingsError",
    "child_settings",
    "defaults",
    "fetch_settings",
    "home",
    "load",
    "loaded",
    "memory_settings",
    "resolve",
    "run_settings",
    "value",
]
