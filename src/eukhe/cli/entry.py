"""The `eukhe` command's first step: with no arguments (or only the interactive agent's
options) it opens the interactive agent, importing only what its prompt needs; any
other command goes to the command line proper (`cli/main.py`), and `eukhe run` first to the
home's warm template, if one listens (`client/handoff.py`)."""

from __future__ import annotations

import sys

from eukhe.client.handoff import hand_off
from eukhe.home import HomeError, open_home
from eukhe.process_exit import exit_code, leave
from eukhe.ui import PROMPT
from eukhe.ui.typeahead import TypeAhead

AGENT_OPTIONS = (
    "--model",
    "--base-url",
    "--api",
    "--session",
    "--sandbox",
    "--approval",
    "--permission-mode",
    "--effort",
    "-c",
    "--continue",
)


def main(hand: bool = True) -> None:
    """`eukhe ARGS` (`sys.argv`). `hand`: `eukhe run` may go to the home's warm template;
    False in the template's own children, which are that run."""
    argv = sys.argv[1:]
    if not argv or argv[0].partition("=")[0] in AGENT_OPTIONS:
        try:  # before the prompt's mark: a notice of what was tightened prints on a line of its own
            open_home()
        except HomeError as e:
            print(f"eukhe: {e}", file=sys.stderr)
            raise SystemExit(2) from None
        held = _early_prompt()
        try:
            from eukhe.ui.app import main as agent

            agent(argv, held)  # ends the process, the terminal given back
        finally:  # a start that failed (Ctrl-C in the imports, a wrong option): the terminal as it was
            if held is not None:
                held.restore()
        return
    if hand and argv[0] == "run":  # to the home's warm template, where one listens: it returns if not
        hand_off(argv)
    from eukhe.cli.main import main as command

    try:
        command(argv)
    except SystemExit as e:  # every command ends so, its output written and its store closed
        leave(exit_code(e.code))
    leave(0)


def _early_prompt() -> TypeAhead | None:
    """On a terminal, the prompt's mark at once, before the agent's imports (a few tenths
    of a second on a slow machine), the terminal held from then on: what is typed meanwhile
    is kept as typed (`ui.typeahead`), and the agent's prompt shows it and acts on it."""
    held = TypeAhead.open()
    if held is None:
        return None
    sys.stdout.write(PROMPT)
    sys.stdout.flush()
    return held


if __name__ == "__main__":
    main()
