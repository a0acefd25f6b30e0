"""The question the interactive agent asks once, at the first open of a folder whose
settings hold keys that apply only where the user trusts it (`eukhe.settings.trust`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from eukhe.home import home
from eukhe.settings import SettingsError, trust
from eukhe.settings.load import loaded, project_file

QUESTION = "Trust this folder? Its settings then apply in full here and below. [y/N] "


def ask_once(folder: Path, read: Callable[[str], str], say: Callable[[str], None]) -> bool | None:
    """At the first open of an untrusted folder whose settings hold keys that need trust:
    say what each would do, ask, and record the answer (a "no" too). The answer, or None
    when there was nothing to ask or the question was left (Ctrl-C, Ctrl-D: nothing is
    recorded, the folder stays untrusted and is asked about again next time)."""
    try:
        got = loaded(folder)
    except SettingsError:
        return None  # the session says why it cannot run
    if got.trusted is not None or not got.held:
        return None
    say(f"{project_file(folder)} holds settings that apply only in a folder you trust:")
    for h in got.held:
        say(f"  {h.key}: {h.does}")
    while True:
        try:
            answer = read(QUESTION).strip().lower()
        except (EOFError, KeyboardInterrupt):
            say("not answered: this folder stays untrusted for now")
            return None
        if answer in ("y", "yes", "n", "no", ""):
            break
        say("answer y or n")
    yes = answer in ("y", "yes")
    try:
        trust.record(home(), folder, yes)
    except trust.TrustError as e:
        say(f"the answer was not recorded: {e}")
        return yes
    say(
        "trusted: its settings apply in full"
        if yes
        else "not trusted: those keys are ignored (`eukhe trust` changes it)"
    )
    return yes
