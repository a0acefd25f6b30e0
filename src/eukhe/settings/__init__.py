"""settings.json: the user's (`$EUKHE_HOME`, default `~/.eukhe`) deep-merged with the
project's (`.eukhe/settings.json`) over a default for every key; a malformed file is
a clear error naming the file and the place, and is never rewritten.

`resolve` gives the settings in effect and where each value came from (what
`eukhe settings` prints); `load` the files' merge alone; `KEYS` every key eukhe
reads, with its default.
"""

from typing import TYPE_CHECKING

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

# Named, not loaded: imported from their modules, which `eukhe settings` and the run load alone.
if TYPE_CHECKING:
    from eukhe.settings import trust
    from eukhe.settings.approvals import approve
    from eukhe.settings.instructed import InstructedError, change, changes
    from eukhe.settings.keys import BY_NAME, INSTRUCTIONS_BYTES, SANDBOX_MODES, TOOL_BLOCKING_BUDGET_MS
    from eukhe.settings.load import (
        PLUGINS_RECORD,
        Taken,
        merge,
        project_file,
        project_layer,
        read,
        read_object,
    )
    from eukhe.settings.locked import locked, write
    from eukhe.settings.permissions import InForce, choice, in_force, permissions_in_force
    from eukhe.settings.run import Price, Settings
    from eukhe.settings.secrets import (
        MIN_KEY,
        NO_SECRETS,
        REDACTED,
        Redaction,
        key_values,
        redact,
        secret_values,
        secret_variable,
        tool_environment,
    )
    from eukhe.settings.trust import Held, TrustError, counted, notice, untrusted, verdict

__all__ = [
    "BY_NAME",
    "DEFAULT",
    "INSTRUCTIONS_BYTES",
    "KEYS",
    "MIN_KEY",
    "NO_SECRETS",
    "PLUGINS_RECORD",
    "REDACTED",
    "SANDBOX_MODES",
    "TOOL_BLOCKING_BUDGET_MS",
    "ChildSettings",
    "Held",
    "InForce",
    "InstructedError",
    "Key",
    "Loaded",
    "MemorySettings",
    "Price",
    "Redaction",
    "Resolved",
    "Settings",
    "SettingsError",
    "Taken",
    "TrustError",
    "approve",
    "change",
    "changes",
    "child_settings",
    "choice",
    "counted",
    "defaults",
    "fetch_settings",
    "home",
    "in_force",
    "key_values",
    "load",
    "loaded",
    "locked",
    "memory_settings",
    "merge",
    "notice",
    "permissions_in_force",
    "project_file",
    "project_layer",
    "read",
    "read_object",
    "redact",
    "resolve",
    "run_settings",
    "secret_values",
    "secret_variable",
    "tool_environment",
    "trust",
    "untrusted",
    "value",
    "verdict",
    "write",
]
