"""`python -m eukhe.owner`: the owner of the home `EUKHE_HOME` names (started by the
first client that finds none; it ends when idle). Lean on purpose: it imports no
provider and no CLI, so it listens soon after it starts."""

from __future__ import annotations

import asyncio
import os
import signal
import sys

from eukhe.owner.server import IDLE, Owner, Taken
from eukhe.settings.load import home


def main() -> int:
    try:
        idle = float(os.environ.get("EUKHE_OWNER_IDLE_MS", "")) / 1000
    except ValueError:
        idle = IDLE
    owner = Owner(home(), idle=idle)
    try:
        owner.claim()
    except Taken as e:  # another client's owner won the home: it answers
        print(f"eukhe owner: {e}", file=sys.stderr)
        return 0

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, owner.stop)
        await owner.serve()

    print(f"eukhe owner: pid {os.getpid()} owns {owner.home}", file=sys.stderr, flush=True)
    asyncio.run(serve())
    print(f"eukhe owner: pid {os.getpid()} ended", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
