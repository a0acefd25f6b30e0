"""The owner's log: its stderr, which the client that started it opened on the home's
owner.log (`client.client`); the warm template beside it writes there too. A line may
quote what came from outside (a recovered run's tool calls and errors, a project's
folder, a store's or a request's error): neutralized as every face's text
(`eukhe.terminal`), so the terminal a person reads the log on (`tail -f`, `less -R`)
shows the codes and acts on none."""

from __future__ import annotations

import sys

from eukhe.terminal import neutralized


def logged(line: str, who: str = "owner") -> None:
    """`line` on the log, after `eukhe WHO: `, whole and at once."""
    print(f"eukhe {who}: {neutralized(line)}", file=sys.stderr, flush=True)
