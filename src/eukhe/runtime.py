"""The one composition root: what a process puts together before it runs anything
durable. The command line (`eukhe run`, `eukhe resume`), the interactive agent and
the owner's recovery all open their runtime here, so the sequence is written once:

1. the secret values the process knows gathered once (`run.secrets.redaction`): every
   row it writes to the store (`store.codec`) and every line its runs show pass them;
2. the store opened (`store.durable`: DBOS launched, the run workflows registered);
3. this process's `ProcessContext` begun (`run.context`), the one object its runs find;
4. its slots from the home's owner (`client.admission.RemoteRegistry`), and, for a
   user's process, the root-turn lease through the same connection, and `eukhe
   abort` from another process as the run's cancel.

The owner's own recovered runs take slots from the owner like any client's, but hold
no lease: no user waits on them."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eukhe.client.admission import RemoteRegistry
from eukhe.client.lease import held
from eukhe.json_types import JsonObject
from eukhe.process_exit import leave
from eukhe.run import driver
from eukhe.run.context import ProcessContext, Show, begin
from eukhe.run.driver import Say
from eukhe.run.permit import Asker
from eukhe.run.secrets import redaction
from eukhe.run.session import on_ctrl_c, run_to_end
from eukhe.run.spec import RunSpec
from eukhe.settings.secrets import Redaction
from eukhe.store import durable
from eukhe.store.durable import Store

__all__ = ["Runtime", "leave", "open_runtime"]


@dataclass
class Runtime:
    """A process's durable runtime: its store and its `ProcessContext`."""

    store: Store
    process: ProcessContext

    async def recover(self, say: Say) -> list[str]:
        """Take up the runs dead processes left (`run.driver.recover`)."""
        return await driver.recover(say)

    async def finish(self, ids: list[str], say: Say) -> bool:
        """Run the runs `ids` to their end here (`run.driver.finish`)."""
        return await driver.finish(ids, say)

    def drive(
        self,
        spec: RunSpec | None,
        session: str | None,
        say: Say,
        ended: Callable[[JsonObject], None],
        recover_with: Callable[[list[str]], Awaitable[JsonObject]] | None,
        announced: str | None = None,
    ) -> bool:
        """Drive this process's runs on a loop of their own (`run.driver.drive`), Ctrl-C
        interrupting them; whether some were left in flight. `announced`: the run's line
        the caller already showed (`run.driver.drive`)."""

        async def main() -> bool:
            on_ctrl_c(asyncio.get_running_loop(), self.process.interrupt)
            return await driver.drive(spec, session, say, ended, recover_with, announced)

        return run_to_end(main())

    def close(self) -> None:
        self.store.close()


def open_runtime(
    home: Path,
    settings: JsonObject,
    show: Show,
    *,
    user: bool = True,
    asker: Asker | None = None,
    recovers: bool = False,
) -> Runtime:
    """Open the store and begin this process's `ProcessContext`, its slots from the owner of
    `home`. `user`: a user's process (its runs hold the root-turn lease, and `eukhe
    abort` reaches them); else the owner's, which runs what dead processes left.
    `asker`: who answers its runs' permission asks (None: nobody, headless).
    `recovers`: whether the process takes re-enqueued runs (`store.durable`).
    Raises `store.durable.StoreError` when the store cannot be opened."""
    redact = redaction(settings)  # the last line of defence: made once, for every row and every line
    store = durable.open_store(home, settings, recovers=recovers, redact=redact)
    show = redacted(show, redact)
    if not user:
        registry = RemoteRegistry(home)
        live = ProcessContext(
            show=show, chat_url=store.url, admission=registry, owner=registry.client, redact=redact
        )
        return Runtime(store, begin(live))
    # the chat beside the runs
    process = begin(ProcessContext(show=show, chat_url=store.url, asker=asker, redact=redact))
    registry = RemoteRegistry(home, on_abort=process.abort)
    process.admission, process.owner = registry, registry.client
    process.lease = functools.partial(held, registry)
    return Runtime(store, process)


def redacted(show: Show, redact: Redaction) -> Show:
    """`show` with every line's text and fields through `redact`: what a run shows past its
    loop (a notice, a steer, a subagent's report, a wait) passes the process's secrets too."""

    def shown(run: str, kind: str, text: str, data: Any = None) -> None:
        show(run, kind, redact(text), redact.deep(data))

    return shown
