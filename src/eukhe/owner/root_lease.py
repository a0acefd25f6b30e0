"""The root-turn lease, live (H6.2): its state is `rules.lease`'s state, and every
change is the model's step; futures only carry the model's grants to the waits.

A wait has no deadline (it waits for another window's turn): it ends with its
grant, or with its cancel, which stops it (a grant that came meanwhile is handed
on at once). A closed connection crashes its origin: every lease of it ends.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from eukhe import waits
from eukhe.errors import Code, EukheError
from eukhe.json_types import JsonObject
from eukhe.rules import lease
from eukhe.rules.lease import Kind, Op, Step
from eukhe.rules.wait import End


class Stopped(EukheError):
    """A lease wait ended by its cancel."""

    code = Code.LEASE


@dataclass
class RootLease:
    state: lease.Lease = field(default_factory=lease.start)
    about: dict[int, JsonObject] = field(default_factory=dict)  # key -> who holds or waits, since when
    _grants: dict[int, asyncio.Future[None]] = field(default_factory=dict)
    on_holder: Callable[[lease.Entry | None, JsonObject], None] = lambda holder, about: None

    def step(self, op: Op) -> Step:
        """One operation of the model (asks go through `_ask`, which keeps what each
        key is about); the grant it makes reaches its wait; `on_holder` hears of a new
        holder, or of none."""
        before = self.state.holder
        st = lease.step(self.state, op)
        self.state = st.lease
        if st.granted >= 0:
            fut = self._grants.pop(st.granted, None)
            if fut is not None and not fut.done():
                fut.set_result(None)
        live = {e.key for e in lease.live(self.state)}
        for key in [k for k in self.about if k not in live]:
            del self.about[key]
        if self.state.holder != before:  # handed on, or freed
            h = self.state.holder
            self.on_holder(h, {} if h is None else self.about.get(h.key, {}))
        return st

    def adopt(self, origin: int, about: JsonObject) -> int:
        """A holder from before this owner (a turn that may still run): it holds the
        free lease at once, until its origin crashes."""
        return self._ask(origin, about).key

    async def acquire(self, origin: int, about: JsonObject, cancel: asyncio.Event | None = None) -> int:
        """Wait for the lease, then hold it; its key. A cancel (or the caller's
        cancellation) stops the wait and leaves nothing: `Stopped` (or the
        CancelledError) goes on."""
        st = self._ask(origin, about)
        if st.granted == st.key:
            return st.key
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._grants[st.key] = fut
        try:
            raced = await waits.race(fut, None, cancel)
        except BaseException:
            self._stop(st.key)
            raise
        if raced.end is End.EVENT:
            return st.key
        self._stop(st.key)
        raise Stopped(f"the wait for the root-turn lease (key {st.key}) was cancelled")

    def _ask(self, origin: int, about: JsonObject) -> Step:
        """An ask; its holder (when it holds at once) is said with what it is about."""
        st = lease.step(self.state, Op(Kind.ASK, origin))
        self.about[st.key] = about
        self.state = st.lease
        if st.granted == st.key:
            self.on_holder(st.lease.holder, about)
        return st

    def _stop(self, key: int) -> None:
        self._grants.pop(key, None)
        self.step(Op(Kind.STOP, key))

    def release(self, key: int) -> bool:
        """The holder's lease ends (a waiter's wait, too: it raises `Stopped`); whether
        the key was live."""
        fut = self._grants.pop(key, None)
        if fut is not None and not fut.done():
            fut.cancel()
        return self.step(Op(Kind.RELEASE, key)).outcome is lease.Outcome.ENDED

    def crash(self, origin: int) -> None:
        """The origin is gone: every lease of it ends, held or awaited."""
        for e in lease.live(self.state):
            if e.origin == origin:
                fut = self._grants.pop(e.key, None)
                if fut is not None and not fut.done():
                    fut.cancel()
        self.step(Op(Kind.CRASH, origin))

    @property
    def holder(self) -> int:
        return -1 if self.state.holder is None else self.state.holder.key

    @property
    def waiters(self) -> list[int]:
        return [w.key for w in self.state.waiters]

    @property
    def pending(self) -> int:
        """Grant futures still kept (a dropped wait leaves none)."""
        return len(self._grants)
