"""The `eukhe` command's first step: with no arguments (or only the interactive agent's
options) it opens the interactive agent, importing only what its prompt needs; any
other command goes to the command line proper (`cli/main.py`)."""

from __future__ import annotations

import sys

AGENT_OPTIONS = ("--model", "--base-url", "--api", "--session")


def main() -> None:
    argv = sys.argv[1:]
    if not argv or argv[0].partition("=")[0] in AGENT_OPTIONS:
        from eukhe.ui.app import main as agent

        agent(argv)
        return
    from eukhe.cli.main import main as command

    command(argv)


if __name__ == "__main__":
    main()
