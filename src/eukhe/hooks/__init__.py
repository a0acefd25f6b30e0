"""The user's hook commands (issue 42), in Claude Code's format, each one bounded: `config`
reads them from the settings (trusted folders only for a project's). Every decision is
`rules.hook`'s."""

from eukhe.hooks.config import Hook, Hooks, Loaded, Matcher, load

__all__ = ["Hook", "Hooks", "Loaded", "Matcher", "load"]
