"""Instruction files a run changed (issue 51): which of them a run's model changed, and
what a session says of them before it loads them.

Every session loads its instruction files (`AGENTS.md`, `CLAUDE.md`) into its system
prompt. A model that writes one (the `write` tool, `echo … > CLAUDE.md`) would speak in
every later session, unseen. So each run takes a digest of every instruction file its
session would load, and the records, at its start (`Taken`; a subagent takes its parent's)
and the digests again at its end; a file whose digest differs between the two (changed,
appeared, vanished), or that a run beside it recorded meanwhile with a digest it no longer
holds, is recorded as that run's change, with the digest it was left with (`moved`,
`recorded`). A change made while a run was at work is counted as the run's, whoever made
it: the run cannot tell its model's writes from a person's.

At a session's start (`at_start`), each recorded file still as a run left it (its digest
now is the recorded one) is said, once a file, before the session's first run; in the
interactive agent a file that would load is asked about first (load it, or start without
it). A record whose file changed since (the person's own edit) is cleared, never said; a
person's answer clears a record too (`without`), so it is said once. Headless faces only
say the line: nobody answers there, and the record waits for a person.

Pure: digests are opaque strings (`UNREAD`: a file that is there but is not read, such as
a link out of the repository; None: no file).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

Digests = Mapping[str, "str | None"]
"""Each instruction file a session would load (or would, were it there), by its path: its
digest, `UNREAD`, or None when there is no file."""

UNREAD = "unread"
"""The digest of a file that is there but is not read (a link out of the repository, a
FIFO, a file that cannot be opened): it does not load."""


@dataclass(frozen=True)
class Change:
    """A file a run changed: its path, the run and its session, when (epoch seconds), and
    the digest the run left it with (None: the run removed it)."""

    path: str
    run: str
    session: str
    at: float
    digest: str | None

    def json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "run": self.run,
            "session": self.session,
            "at": self.at,
            "digest": self.digest,
        }

    @classmethod
    def of(cls, r: object) -> Change:
        """A record as `json` wrote it, checked: TypeError says what is wrong."""
        if not isinstance(r, dict):
            raise TypeError(f"expected an object, found {r!r:.80}")
        path, run, session, at, digest = (r.get(k) for k in ("path", "run", "session", "at", "digest"))
        if not (isinstance(path, str) and isinstance(run, str) and isinstance(session, str)):
            raise TypeError(f"expected path, run and session as text, found {r!r:.120}")
        if isinstance(at, bool) or not isinstance(at, int | float):
            raise TypeError(f"expected at as a number, found {r!r:.120}")
        if not (digest is None or isinstance(digest, str)):
            raise TypeError(f"expected digest as text or null, found {r!r:.120}")
        return cls(path, run, session, float(at), digest)


@dataclass(frozen=True)
class Start:
    """What a session's start does with the records: the files to say (one line each), the
    files to ask a person about before they load, and the paths whose record goes now (the
    file changed since the run left it, or a removal said to a person)."""

    say: tuple[Change, ...] = ()
    ask: tuple[Change, ...] = ()
    clear: tuple[Change, ...] = ()


def changed(before: Digests, after: Digests) -> tuple[str, ...]:
    """The paths whose digest differs between the two, in order (a path absent from one
    holds no file there)."""
    return tuple(p for p in sorted(set(before) | set(after)) if before.get(p) != after.get(p))


@dataclass(frozen=True)
class Taken:
    """What a run takes as it begins: its files' digests, and the records as they were
    (`recorded` tells by them which records other runs made while it was at work)."""

    digests: Mapping[str, str | None]
    records: tuple[Change, ...] = ()

    def json(self) -> dict[str, object]:
        return {"digests": dict(self.digests), "records": [c.json() for c in self.records]}

    @classmethod
    def of(cls, got: object) -> Taken | None:
        """What `json` wrote (None: not that, as a spec of an earlier eukhe has none)."""
        if not isinstance(got, dict) or not isinstance(got.get("digests"), dict):
            return None
        try:
            records = tuple(Change.of(r) for r in got.get("records") or ())
        except TypeError:
            records = ()
        digests = {str(k): None if v is None else str(v) for k, v in got["digests"].items()}
        return cls(digests, records)


def moved(kept: Sequence[Change], taken: Taken, after: Digests) -> tuple[str, ...]:
    """The files a run changed: those whose digest differs between its start and its end,
    and those a run that ended while it was at work recorded with a digest the file no
    longer holds (that run's text was there as this one began, or came meanwhile: what
    the file holds now came in this run)."""
    since = {c.path for c in kept if c not in taken.records and c.path in after and c.digest != after[c.path]}
    return tuple(sorted(set(changed(taken.digests, after)) | since))


def recorded(
    kept: Sequence[Change], taken: Taken, after: Digests, run: str, session: str, at: float
) -> tuple[Change, ...]:
    """The records after a run that took `taken` at its start and the digests `after` at
    its end: each file it changed (`moved`) recorded as it left it. A file recorded already
    with that very digest keeps its record (the run that ended first with it: a subagent
    inside this run, or a run beside it); every other record stays as it was."""
    out = {c.path: c for c in kept}
    for path in moved(kept, taken, after):
        now = after.get(path)
        old = out.get(path)
        if old is not None and old.digest == now:
            continue
        out[path] = Change(path, run, session, at, now)
    return tuple(out[p] for p in sorted(out))


def loads(digest: str | None) -> bool:
    """Whether a file with this digest loads into the system prompt (there, and read)."""
    return digest is not None and digest != UNREAD


def at_start(kept: Sequence[Change], now: Digests, person: bool) -> Start:
    """What a session's start does with the records `kept`, its files' digests `now`;
    `person`: a person answers here (the interactive agent). A record of a file this
    session does not load (another folder's) is left alone."""
    say: list[Change] = []
    ask: list[Change] = []
    clear: list[Change] = []
    for c in kept:
        if c.path not in now:
            continue
        if now[c.path] != c.digest:  # changed since the run left it: the person's own edit
            clear.append(c)
        elif person and loads(c.digest):
            ask.append(c)
        else:
            say.append(c)
            if person:  # nothing to load: said to the person, once
                clear.append(c)
    return Start(tuple(say), tuple(ask), tuple(clear))


def without(kept: Sequence[Change], gone: Sequence[Change]) -> tuple[Change, ...]:
    """The records but `gone` (a person answered them, or changed the file since): a record
    another run made of the file meanwhile is another record, and stays."""
    return tuple(c for c in kept if c not in gone)


def ago(seconds: float) -> str:
    """How long ago, as a person reads it: `12 s`, `5 min`, `3 h`, `2 days`."""
    s = max(int(seconds), 0)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min"
    if s < 86400:
        return f"{s // 3600} h"
    days = s // 86400
    return f"{days} day" if days == 1 else f"{days} days"


def line(c: Change, now: float, how: str) -> str:
    """The one line a session says of a file a run changed: its name, what the run did, the
    run, how long ago, its path, then `how` (what the person may do)."""
    name = c.path.rpartition("/")[2]
    did = "removed" if c.digest is None else "changed"
    return f"{name} {did} by run {c.run}, by the model ({ago(now - c.at)} ago): {c.path}; {how}"
