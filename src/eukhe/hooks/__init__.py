"""The user's hook commands (issue 42), in Claude Code's format, each one bounded: `config`
reads them from the settings (trusted folders only for a project's), `runner` runs an
event's hooks and asks `rules.hook` what each end means. Every decision is the rule's."""

from eukhe.hooks.config import Hook, Hooks, Loaded, Matcher, load
from eukhe.hooks.runner import EventRun, HookRun, run_event, run_hook

__all__ = ["EventRun", "Hook", "HookRun", "Hooks", "Loaded", "Matcher", "load", "run_event", "run_hook"]
