"""The user's hook commands (issue 42), in Claude Code's format, each one bounded: `config`
reads them from the settings (trusted folders only for a project's), `runner` runs an
event's hooks and asks `rules.hook` what each end means. Every decision is the rule's."""

from typing import TYPE_CHECKING

from eukhe.hooks.config import Hook, Hooks, Loaded, Matcher, load
from eukhe.hooks.runner import EventRun, HookRun, run_event, run_hook
from eukhe.hooks.transcript import Transcript, path_of

# Named, not loaded: a hook's payload and its listing are the command line's alone.
if TYPE_CHECKING:
    from eukhe.hooks import payload, report
    from eukhe.hooks.report import listing
    from eukhe.hooks.runner import run_event_blocking

__all__ = [
    "EventRun",
    "Hook",
    "HookRun",
    "Hooks",
    "Loaded",
    "Matcher",
    "Transcript",
    "listing",
    "load",
    "path_of",
    "payload",
    "report",
    "run_event",
    "run_event_blocking",
    "run_hook",
]
