"""`python -m eukhe.owner`: the owner of the home `EUKHE_HOME` names (started by the
first client that finds none; it ends when idle). Lean on purpose: it imports no
provider and no CLI, so it listens soon after it starts."""

from __future__ import annotations

import asyncio
import os
import signal
import sys

from eukhe.owner.server import IDLE, Owner, Taken
from eukhe.settings import SettingsError
from eukhe.settings.load import home, load
from eukhe.store.turn import TurnStore, TurnStoreError
from eukhe.store.urls import StoreError, database_url


def main() -> int:
    try:
        idle = float(os.environ.get("EUKHE_OWNER_IDLE_MS", "")) / 1000
    except ValueError:
        idle = IDLE
    where = home()
    owner = Owner(where, idle=idle)
    try:
        owner.claim()
    except Taken as e:  # another client's owner won the home: it answers
        print(f"eukhe owner: {e}", file=sys.stderr)
        return 0
    try:  # the lease holder's record, beside the runs (durable.databaseUrl, else SQLite in the home)
        owner.turn_store = TurnStore(database_url(where, load(where)))
    except (SettingsError, StoreError, TurnStoreError) as e:
        print(f"eukhe owner: the lease holder is kept in memory only: {e}", file=sys.stderr, flush=True)

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
