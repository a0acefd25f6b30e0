"""`python tests/handed.py SOCKET ARGS`: `eukhe ARGS` forked by the pytest worker's template
at SOCKET (`tests/forks.py`), with this terminal as its own (`client.handoff.handed`: its
streams, signals relayed, its exit status ours), as the tests run `eukhe` on a terminal
(tests/ui/term.py, tests/cli/terminal.py): its imports done, a whole process all the same.
With no template there, or one that refuses, `eukhe ARGS` itself."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from eukhe.client.handoff import connect_path, handed


def main() -> None:
    path, args = sys.argv[1], sys.argv[2:]
    conn = connect_path(Path(path))
    if conn is not None:
        handed(args, conn)  # ends this process as the agent ended, when it was handed over
    os.execv(sys.executable, [sys.executable, "-m", "eukhe", *args])


if __name__ == "__main__":
    main()
