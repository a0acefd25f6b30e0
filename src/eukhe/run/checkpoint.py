"""Checkpoints of the project's files, and their rewind.

Before the first call of a run that may change files (bash, write, edit, a cell, an MCP tool
that does not say it only reads), the run records its project's working tree: tracked and
untracked files, what `.gitignore` ignores left out. The snapshot goes into a shadow git
repository in the home, one per project (`<home>/checkpoints/<hash of the project's path>`),
never into the project's own `.git`; it is taken inside the call's durable `intent` step, and a
run's first snapshot is its checkpoint (a replay after a crash finds it and takes no other).
When the run ends, its files are recorded again, so a rewind can tell what a person changed
by hand since.

It is the `git` binary's work, with its own `GIT_DIR`, `GIT_WORK_TREE` and index: faster than
dulwich on a large tree (its index keeps each file's stat, so a snapshot after one edit hashes
one file), and already on every machine that has a repository. No configuration of the user's
or the system's is read (`GIT_CONFIG_GLOBAL`, `GIT_CONFIG_NOSYSTEM`): a stranger's repository
cannot have a filter or a hook of yours run. A folder that holds its own `.git` (a nested
repository) is not entered.

Every git call has a deadline; a checkpoint that fails or times out never fails the run: it
is said, and the run goes on without one.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hashlib
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from eukhe import waits
from eukhe.errors import Code, EukheError
from eukhe.fdwrite import write_all
from eukhe.tools.reach import beneath
from eukhe.tools.search.walk import Walked, walk

__all__ = ["DEADLINE", "Change", "CheckpointError", "Shadow", "project_of"]

DEADLINE = 120.0
"""Seconds one git call may take before it is killed and the checkpoint said to have failed."""

MAX_FILES = 50_000
"""Files a project may have (what `.gitignore` leaves, as the search tools count them) for a
checkpoint: a run started in a home folder or at `/` is not copied whole into the shadow."""


class CheckpointError(EukheError):
    """A git call that failed or timed out: what it was, and why."""

    code = Code.TOOL


def project_of(cwd: Path) -> Path:
    """The project a run's files belong to: the repository's root (the nearest folder up with a
    `.git`), else the working directory."""
    here = Path(os.path.realpath(cwd))
    for d in (here, *here.parents):
        if (d / ".git").exists():
            return d
    return here


@dataclass(frozen=True)
class Change:
    """A file that differs between a checkpoint and now: `A` added since, `M` changed, `D` gone."""

    status: str
    path: str


class Shadow:
    """The shadow repository of one project."""

    def __init__(self, project: Path, home: Path, deadline: float = DEADLINE) -> None:
        self.project = Path(os.path.realpath(project))
        key = hashlib.sha256(str(self.project).encode()).hexdigest()[:16]
        self.git_dir = home / "checkpoints" / key
        self.deadline = deadline
        # a home inside the project (EUKHE_HOME=./home) is never snapshotted: its store and this
        # shadow repository itself would be, and a rewind would put an old store over the live one
        inside = Path(os.path.realpath(home))
        self.skip = str(inside.relative_to(self.project)) if inside.is_relative_to(self.project) else None

    def _env(self, index: Path | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(
            GIT_DIR=str(self.git_dir),
            GIT_WORK_TREE=str(self.project),
            GIT_INDEX_FILE=str(index or self.git_dir / "index"),
            GIT_CONFIG_GLOBAL=os.devnull,
            GIT_CONFIG_NOSYSTEM="1",
            GIT_TERMINAL_PROMPT="0",
            GIT_AUTHOR_NAME="eukhe",
            GIT_AUTHOR_EMAIL="eukhe@localhost",
            GIT_COMMITTER_NAME="eukhe",
            GIT_COMMITTER_EMAIL="eukhe@localhost",
        )
        return env

    async def git(
        self, *args: str, index: Path | None = None, ok: tuple[int, ...] = (0,), private: bool = True
    ) -> str:
        """One git call on the shadow repository, within the deadline; its stdout. `private`: what
        it writes is the home's, 0600 and 0700 (a checkout writes the project's files as yours)."""
        return (await self._run(args, index, ok, private)).decode("utf-8", "replace")

    async def _run(
        self,
        args: tuple[str, ...],
        index: Path | None,
        ok: tuple[int, ...],
        private: bool,
        given: bytes = b"",
    ) -> bytes:
        """`git ARGS` with `given` on its standard input, within the deadline; its stdout, raw."""
        umask = 0o077 if private else -1
        got = await waits.ran(["git", *args], self.project, self._env(index), self.deadline, given, umask)
        if got is None:
            raise CheckpointError(f"git {args[0]} did not end within {self.deadline:g} s")
        if got.code not in ok:
            why = got.err.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit {got.code}"]
            raise CheckpointError(f"git {args[0]} failed: {why[0]}")
        return got.out

    async def _ready(self) -> None:
        if not (self.git_dir / "HEAD").exists():
            self.git_dir.parent.mkdir(parents=True, exist_ok=True, mode=0o700)  # the home's: private
            self.git_dir.mkdir(exist_ok=True, mode=0o700)
            await self.git("init", "--quiet", "--template=")  # no sample hooks: nothing executable
            # the snapshot never runs the project's or the user's hooks and filters
            await self.git("config", "core.hooksPath", os.devnull)

    async def tree(self, index: Path | None = None) -> str:
        """The project's files now, as a tree in the shadow repository."""
        await self._ready()
        outside = (f":(exclude,literal){self.skip}",) if self.skip else ()
        await self.git("add", "--all", "--ignore-errors", "--", ".", *outside, index=index, ok=(0, 1))
        if self.skip:  # and out of an index an earlier eukhe filled with it
            rm = ("rm", "-r", "--cached", "--quiet", "--ignore-unmatch", "--", f":(literal){self.skip}")
            await self.git(*rm, index=index)
        return (await self.git("write-tree", index=index)).strip()

    async def _commit(self, tree: str, label: str) -> str:
        return (await self.git("commit-tree", tree, "-m", label)).strip()

    async def ref(self, name: str) -> str | None:
        """The commit a ref names, or None."""
        await self._ready()
        got = await self.git("rev-parse", "--verify", "--quiet", f"refs/eukhe/{name}^{{commit}}", ok=(0, 1))
        return got.strip() or None

    async def take(self, name: str) -> str:
        """Record the files now under `name`, unless it is recorded already (a run's first
        snapshot stands); the commit."""
        have = await self.ref(name)
        if have is not None:
            return have
        await asyncio.to_thread(self._bounded)
        commit = await self._commit(await self.tree(), name)
        # "" as the old value: only when the ref does not exist yet (two takers: the first stands)
        await self.git("update-ref", f"refs/eukhe/{name}", commit, "", ok=(0, 1, 128))
        return await self.ref(name) or commit

    def _bounded(self) -> None:
        if self.project in (Path.home().resolve(), Path("/")):
            raise CheckpointError(f"{self.project} is a home folder or the root, not a project")
        walked = Walked()
        for _ in walk(self.project, walked, MAX_FILES):
            pass
        if walked.capped:
            raise CheckpointError(f"{self.project} holds more than {MAX_FILES:,} files")

    async def record(self, name: str) -> str:
        """Record the files now under `name`, over what it held (a run's files at its end)."""
        commit = await self._commit(await self.tree(), name)
        await self.git("update-ref", f"refs/eukhe/{name}", commit)
        return commit

    async def names(self, prefix: str) -> list[str]:
        """The recorded names under `prefix`, in order."""
        await self._ready()
        out = await self.git("for-each-ref", "--format=%(refname)", f"refs/eukhe/{prefix}")
        return sorted(line.removeprefix("refs/eukhe/") for line in out.splitlines() if line)

    async def changes(self, commit: str, against: str | None = None) -> list[Change]:
        """What differs between `commit` and `against` (another commit), or the files now."""
        if against is None:
            scratch = self.git_dir / f"index.now.{os.getpid()}"
            try:
                with contextlib.suppress(FileNotFoundError):  # the stat cache: only changed files hashed
                    scratch.write_bytes((self.git_dir / "index").read_bytes())
                against = await self.tree(index=scratch)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    scratch.unlink()
        out = await self.git("diff-tree", "-r", "--no-renames", "--name-status", "-z", commit, against)
        parts = out.split("\0")
        return [Change(parts[i], parts[i + 1]) for i in range(0, len(parts) - 1, 2) if parts[i]]

    async def restore(self, commit: str, changes: list[Change]) -> None:
        """Put the files back as `commit` has them: changed and gone ones written, added ones
        removed. Each is written or removed through the project's folder descriptor, one part
        of its path at a time without following a link (`tools.reach.beneath`): a link planted
        or flipped in the project since leads nothing of a rewind outside it."""
        back = [c.path for c in changes if c.status in ("M", "D", "T")]
        entries: list[tuple[str, str, str]] = []  # (mode, blob, path)
        for i in range(0, len(back), 200):  # a long list in parts: the command line has a bound
            listed = await self.git("ls-tree", "-r", "-z", commit, "--", *back[i : i + 200])
            for line in filter(None, listed.split("\0")):
                meta, _, path = line.partition("\t")
                mode, kind, blob = meta.split()
                if kind == "blob":  # a nested repository's commit (a gitlink) is not the shadow's to write
                    entries.append((mode, blob, path))
        gone = [c.path for c in changes if c.status == "A"]
        blobs = await self._blobs([blob for _, blob, _ in entries])
        await asyncio.to_thread(self._put, entries, blobs, gone)

    async def _blobs(self, shas: list[str]) -> dict[str, bytes]:
        """The contents of `shas`, by one `git cat-file --batch`, within the deadline."""
        if not shas:
            return {}
        asked = "".join(f"{sha}\n" for sha in dict.fromkeys(shas)).encode()
        out = await self._run(("cat-file", "--batch"), None, (0,), True, asked)
        got: dict[str, bytes] = {}
        at = 0
        while at < len(out):
            head_end = out.index(b"\n", at)
            head = out[at:head_end].decode().split()
            if len(head) != 3:  # "<sha> missing": the shadow lost an object
                raise CheckpointError(f"git cat-file has no object {head[0]} of the checkpoint")
            sha, _kind, size = head
            body = head_end + 1
            got[sha] = out[body : body + int(size)]
            at = body + int(size) + 1
        return got

    def _put(self, entries: list[tuple[str, str, str]], blobs: dict[str, bytes], gone: list[str]) -> None:
        root = os.open(self.project, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            for mode, blob, path in entries:
                try:
                    dfd, name = beneath(root, path, make=True)
                except (OSError, ValueError) as e:
                    raise CheckpointError(f"{path} could not be put back: {_why(e)}") from e
                try:
                    _place(dfd, name, mode, blobs[blob])
                except OSError as e:
                    raise CheckpointError(f"{path} could not be put back: {_why(e)}") from e
                finally:
                    os.close(dfd)
            for path in gone:
                try:
                    dfd, name = beneath(root, path)
                except (OSError, ValueError):
                    continue  # its folder is gone, or a link now: nothing of the project's to remove
                try:
                    with contextlib.suppress(FileNotFoundError, IsADirectoryError):
                        os.unlink(name, dir_fd=dfd)
                finally:
                    os.close(dfd)
        finally:
            os.close(root)


def _why(e: BaseException) -> str:
    if isinstance(e, OSError) and e.errno in (errno.ELOOP, errno.ENOTDIR):
        return "a part of its path is no longer a folder of the project (a link or a file now)"
    return (e.strerror if isinstance(e, OSError) else None) or str(e)


def _place(dfd: int, name: str, mode: str, data: bytes) -> None:
    """`name` in the folder `dfd` made the file (or link) git recorded: written beside it and
    renamed over it, so what stood there, a link included, is replaced, never followed."""
    tmp = f".{name}.{secrets.token_hex(4)}.rewind"
    if mode == "120000":
        os.symlink(data.decode("utf-8", "surrogateescape"), tmp, dir_fd=dfd)
    else:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(tmp, flags, 0o777 if mode == "100755" else 0o666, dir_fd=dfd)  # the umask applies
        try:
            write_all(fd, data)
        finally:
            os.close(fd)
    try:
        os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dfd)
        raise


async def plan(shadow: Shadow, session: str, n: int) -> tuple[str | None, str, list[Change], set[str], str]:
    """Going back before the session's run n (`eukhe rewind`, `/rewind`): the checkpoint to go
    back to (None: none from run n on), its name, what differs now, the paths changed by hand
    since the last run ended, and a line on how those were told."""
    names = await shadow.names(f"{session}/")
    runs = [x for x in names if not x.endswith(".after") and int(x.rpartition("/")[2].partition(".")[0]) >= n]
    if not runs:
        return None, "", [], set(), ""
    first = runs[0]
    commit = await shadow.ref(first)
    assert commit is not None
    changes = await shadow.changes(commit)
    afters = [x for x in names if x.endswith(".after")]
    if not afters:
        return (
            commit,
            first,
            changes,
            set(),
            "no record of the files at a run's end: changes by hand cannot be told",
        )
    last = afters[-1]
    end = await shadow.ref(last)
    assert end is not None
    hand = {c.path for c in await shadow.changes(end)}
    return commit, first, changes, hand, f"changed by hand since run {last.removesuffix('.after')} ended"
