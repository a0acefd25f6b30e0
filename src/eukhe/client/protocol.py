"""The owner's wire: one JSON object a line over a unix socket, both ways.

A request is `{"id": N, "kind": KIND, ...}`; its reply `{"id": N, "ok": {...}}` or
`{"id": N, "error": "why"}`. The owner also sends events no request asked for
(`{"event": "preempted", "slot": N}`; `{"event": "queued", "slot": N, "class": C,
"place": P, "ahead": A}` when an ADMIT that asked to be `told` waits, and again when
its place changes; `{"event": "queued", "lease": N, "holder": {...}}`;
`{"event": "abort", "run": R}`; `{"event": "progress", "request": N, "text": T}`, with
`pending` and `seconds` when it is a line of a settle wait).
Every request but two has a reply deadline (H6.1): a client never waits on an
owner that does not answer. The two without one end otherwise: the root-turn
lease with the turn or the run's cancel (H6.2), an admission slot with releases,
the run's cancel or the connection's close (H3.4).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import stat
import struct
import tempfile
from enum import Enum
from pathlib import Path
from typing import assert_never

from eukhe.errors import Code, EukheError
from eukhe.json_types import JsonMapping, JsonObject

REPLY = 30.0
"""Seconds an owner in another process has to answer a request (H6.1)."""

MAX_LINE = 16 * 1024 * 1024
"""The longest line either side reads: a longer one is a broken peer, not a request."""


class RequestKind(Enum):
    HELLO = "hello"  # who the client is (pid, start time, what it runs)
    STATUS = "status"  # the owner's state, for `eukhe status`
    ADMIT = "admit"  # a slot of a provider, in a class (H3)
    RELEASE = "release"  # a slot held or asked for ends
    LEASE = "lease"  # the root-turn lease (H6.2)
    UNLEASE = "unlease"  # a lease held or waited for ends
    CONFIGURE = "configure"  # new admission limits from a client's settings
    RUN = "run"  # a run starts or ends in the client (for status and abort)
    ABORT = "abort"  # end a run in whichever client executes it
    RECOVER = "recover"  # the owner takes up every run a dead process left; which runs it has
    SHUTDOWN = "shutdown"  # end once the work is checkpointed
    VIEW = "view"  # the chat's settled view for a turn (H2)
    UNVIEW = "unview"  # a turn's settle wait ends now (its run's cancel): the view as it is
    LOG = "log"  # a run's messages into the chat
    IMPORT = "import"  # other sessions' messages into the chat
    ZOOM = "zoom"  # a line of the chat opened
    DATE = "date"  # when a message was logged
    MEMORY = "memory"  # the chat's state: messages, lines unbuilt


IMPORT_ITEM = 0.1
"""Seconds an import's reply deadline grows by for each item (the owner writes each)."""


def reply_deadline(kind: RequestKind, fields: JsonMapping | None = None) -> float | None:
    """Seconds a request of `kind` (with `fields`) may wait for its reply; None: no
    deadline, the wait ends otherwise. Every kind takes a side: there is no default."""
    fields = fields or {}
    match kind:
        case RequestKind.LEASE:
            return None  # waits for another window's turn; ends with the turn or the run's cancel
        case RequestKind.ADMIT:
            return None  # bounded by releases (H3.4); the run's cancel, or the connection's close
        case RequestKind.VIEW:
            return REPLY + max(0, int(fields.get("settleMs") or 0)) / 1000  # the settle deadline, then 30 s
        case RequestKind.IMPORT:
            return REPLY + IMPORT_ITEM * len(fields.get("entries") or [])
        case (
            RequestKind.UNVIEW
            | RequestKind.LOG
            | RequestKind.ZOOM
            | RequestKind.DATE
            | RequestKind.MEMORY
            | RequestKind.HELLO
            | RequestKind.STATUS
            | RequestKind.RELEASE
            | RequestKind.UNLEASE
            | RequestKind.CONFIGURE
            | RequestKind.RUN
            | RequestKind.ABORT
            | RequestKind.RECOVER
            | RequestKind.SHUTDOWN
        ):
            return REPLY
    assert_never(kind)  # a kind that takes no side fails here, and in the test that walks them all


class ProtocolError(EukheError):
    """A line that is no message of the wire, or a message too long for one."""

    code = Code.OWNER


def encode(obj: JsonObject) -> bytes:
    """A message as one line; one over MAX_LINE is a ProtocolError that names the limit
    (the peer's reader would drop the connection on it, and say nothing of why)."""
    line = json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass") + b"\n"
    if len(line) > MAX_LINE:
        raise ProtocolError(
            f"a {obj.get('kind') or 'reply'} message of {len(line):,} bytes is over the owner's line of "
            f"{MAX_LINE:,} bytes (16 MiB): it cannot cross the socket"
        )
    return line


def decode(line: bytes) -> JsonObject:
    try:
        obj = json.loads(line)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ProtocolError(f"not a JSON line: {e}") from None
    if not isinstance(obj, dict):
        raise ProtocolError(f"not a JSON object: {line[:80]!r}")
    return obj


SUN_PATH = 100
"""Bytes a unix socket's path may have, with a margin (the kernel's limit is 108)."""


def socket_path(home: Path) -> Path:
    """The owner's socket: in the home, or, when that path is too long for a unix
    socket, in a directory of this user's own under the temp dir, named by the home."""
    p = home / "owner.sock"
    if len(os.fsencode(p)) <= SUN_PATH:
        return p
    name = hashlib.sha256(os.fsencode(home.resolve())).hexdigest()[:20]
    return _fallback() / f"{name}.sock"


PEERCRED = struct.Struct("3i")
"""SO_PEERCRED's answer: the process's pid, uid and gid."""


def peer(sock: socket.socket) -> tuple[int, int]:
    """The pid and uid of the process at the other end of a unix socket, from the kernel."""
    pid, uid, _ = PEERCRED.unpack(sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, PEERCRED.size))
    return pid, uid


def warm_path(home: Path) -> Path:
    """The warm template's socket (`warm/__main__.py`): beside the owner's, and no longer
    (`warm.sock` in the home, `<name>w.sock` in the temp dir's folder), so it fits wherever
    the owner's does and its folder is the one `socket_folder` checks."""
    p = socket_path(home)
    return p.with_name("warm.sock" if p.parent == home else p.stem[:-1] + "w.sock")


def _fallback() -> Path:
    """The folder of the sockets of homes whose own path is too long: this user's, in
    the temp dir, which every user may write."""
    return Path(tempfile.gettempdir()) / f"eukhe-{os.getuid()}"


class UnsafeSocket(EukheError):
    """The socket's folder in the temp dir is not this user's own: names it, what is
    wrong, and what to do."""

    code = Code.OWNER


def socket_folder(home: Path, make: bool = False) -> Path:
    """The folder of the home's socket, checked when it is the one in the temp dir:
    another user who made it first (or a symlink there to a folder of theirs) would
    receive every request, the API key in a compactor's route among them. It must be
    this user's, a folder (not a symlink), with no group or other bits; else
    UnsafeSocket. `make`: made 0700 when missing (the owner, before it listens)."""
    folder = socket_path(home).parent
    if folder != _fallback():
        return folder  # in the home: the home is the user's own (`eukhe.home.open_home`)
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        if not make:
            return folder  # no owner listens: connecting fails, and one is started
        with contextlib.suppress(FileExistsError):  # made meanwhile: by whom is checked below
            os.mkdir(folder, 0o700)
        st = os.lstat(folder)
    wrong = _wrong(st)
    if wrong is not None:
        raise UnsafeSocket(
            f"the owner's socket folder {folder} {wrong}: another user could receive what eukhe "
            f"sends its owner (API keys among it), so eukhe does not use it; fix: remove it "
            f"(`rm -r {folder}`, as its owner or root) if it is not yours to keep, or set a shorter "
            f"EUKHE_HOME, so that the socket fits in the home ({SUN_PATH} bytes at most)"
        )
    return folder


def _wrong(st: os.stat_result) -> str | None:
    """What makes a socket folder unsafe, or None."""
    if stat.S_ISLNK(st.st_mode):
        return "is a symlink"
    if not stat.S_ISDIR(st.st_mode):
        return "is not a folder"
    if st.st_uid != os.getuid():
        return f"belongs to uid {st.st_uid}, not to you (uid {os.getuid()})"
    if st.st_mode & 0o077:
        return f"is open to other users (mode {stat.S_IMODE(st.st_mode):04o}, not 0700)"
    return None


def lock_path(home: Path) -> Path:
    return home / "owner.lock"


def info_path(home: Path) -> Path:
    return home / "owner.json"


def warm_info_path(home: Path) -> Path:
    """What the owner wrote of the template it started (`{"pid", "owner"}`; pid None: none)."""
    return home / "warm.json"


def log_path(home: Path) -> Path:
    return home / "owner.log"
