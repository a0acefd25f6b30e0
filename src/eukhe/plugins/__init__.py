"""Claude Code's plugins, added by a person: their record in the home, which are in effect,
and what each brings (hooks, agents, commands, skills, MCP servers) with `${CLAUDE_PLUGIN_ROOT}`.

- `add`, `remove`, `enable`: `eukhe plugin add|remove|enable|disable` (a person's act; a git
  marketplace is cloned into the home then, and never at run time).
- `in_effect`: the plugins enabled for a project (the record, then `enabledPlugins` of the
  trusted settings), each a `Plugin` with its `root`; `config_of`: one of its JSON files as a
  run took it; `root_in`: a text with `${CLAUDE_PLUGIN_ROOT}` as the plugin's folder.
- `listing`, `listing_json`: what `eukhe plugin list` and `/plugins` show.
"""

from eukhe.plugins._add import GIT_SECONDS, LOCAL, Added, add, enable, remove
from eukhe.plugins._effect import ENABLED, KNOWN, ROOT, Effect, config_of, in_effect, root_in
from eukhe.plugins._listing import listing, listing_json
from eukhe.plugins._record import Marketplace, Plugin, PluginError, Record, read, record_path

__all__ = [
    "ENABLED",
    "GIT_SECONDS",
    "KNOWN",
    "LOCAL",
    "ROOT",
    "Added",
    "Effect",
    "Marketplace",
    "Plugin",
    "PluginError",
    "Record",
    "add",
    "config_of",
    "enable",
    "in_effect",
    "listing",
    "listing_json",
    "read",
    "record_path",
    "remove",
    "root_in",
]
