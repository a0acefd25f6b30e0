"""A subagent's git worktree (`isolation: "worktree"`): made in the home on a branch of its own,
bound writable in its sandbox, and ended once, its changes told in its report.

Where: `<home>/worktrees/<hash of the project's top folder>/<child id, flat>`, never inside the
project; on the branch `eukhe/<session>/<run>.c<n>` (`branch_of`), from the project's HEAD (the
parent's uncommitted changes are not in it).

What its sandbox writes besides its worktree (`Worktree.writable`): a commit in a worktree writes
its objects into the repository's object store, its branch's ref and reflog under the repository's
`refs/heads/eukhe/<session>` and `logs/...`, and its own HEAD and index in the repository's
`worktrees/<name>`; the parent's checkout, its HEAD, index, stash and every other ref stay
read-only (`Worktree.shown`).

How it ends (`end_worktree`, asked of `rules.child.kept`): nothing to keep, the worktree and its branch
are removed; uncommitted work is committed on its branch ("eukhe: uncommitted work of <child>");
then the worktree's folder is removed, its branch kept. A git call that fails leaves the
worktree as it is, and says so: never lost. Nothing reaches the parent's files unless the parent
asks (`merge_branch`, the `merge_child` tool, through the permission gate).

Every git call has a deadline; none runs a hook of the project's (`core.hooksPath` is
/dev/null): eukhe's own git calls run outside any sandbox.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from eukhe import waits
from eukhe.errors import Code, EukheError
from eukhe.json_types import JsonMapping, JsonObject
from eukhe.rules import child
from eukhe.rules.child import Kept

__all__ = [
    "DEADLINE",
    "PREFIX",
    "Changes",
    "Worktree",
    "WorktreeError",
    "branch_of",
    "branches",
    "end_worktree",
    "make_worktree",
    "merge_branch",
    "session_branches",
]

DEADLINE = 60.0
"""Seconds one git call may take before it is killed and said to have failed."""

PREFIX = "eukhe/"
"""Every subagent's branch begins so; `merge_child` takes no other."""

SHOWN_COMMITS = 10
"""Commits a report names one by one (the rest counted)."""

SHOWN_FILES = 20
"""Files a report names one by one (the rest counted)."""

NO_HOOKS = ("-c", f"core.hooksPath={os.devnull}", "-c", "core.fsmonitor=false")
"""No hook and no file-system monitor of the project's runs in eukhe's own git calls."""

SEALED = ("commondir", "gitdir", "config.worktree")
"""The files of a worktree's own folder in the repository that say where its repository is and
what configuration it reads: read-only to the subagent (its folder is writable), so that what
eukhe's own git calls read of them, outside any sandbox, is what eukhe wrote."""


class WorktreeError(EukheError):
    """A worktree that could not be made, ended or merged: which git call, and why."""

    code = Code.TOOL


@dataclass(frozen=True)
class Worktree:
    """A subagent's worktree: its folder (`path`), its `branch`, the parent's checkout it was
    made from (`checkout`: the repository's top folder), the repository's git folder
    (`common`), the worktree's own folder in it (`admin`), and the commit it began at (`base`)."""

    path: str
    branch: str
    checkout: str
    common: str
    admin: str
    base: str

    def json(self) -> JsonObject:
        return {
            "path": self.path,
            "branch": self.branch,
            "checkout": self.checkout,
            "common": self.common,
            "admin": self.admin,
            "base": self.base,
        }

    @classmethod
    def of(cls, obj: JsonMapping) -> Worktree:
        return cls(*(str(obj[k]) for k in ("path", "branch", "checkout", "common", "admin", "base")))

    @property
    def writable(self) -> tuple[Path, ...]:
        """What its sandbox binds writable besides the worktree: the repository's objects, the
        folder of its branch's ref and reflog (its session's), its own folder in the repository."""
        common = Path(self.common)
        folder = self.branch.rpartition("/")[0]
        out = [common / "objects", common / "refs" / "heads" / folder, Path(self.admin)]
        logs = common / "logs" / "refs" / "heads" / folder
        if logs.is_dir():
            out.append(logs)
        return tuple(out)

    @property
    def sealed(self) -> tuple[Path, ...]:
        """What its sandbox makes read-only again inside what it binds writable (`SEALED`)."""
        return tuple(Path(self.admin) / name for name in SEALED)

    def pinned(self) -> dict[str, str]:
        """eukhe's own git calls in the worktree: its git folders as eukhe made them, whatever
        the subagent wrote in its worktree's `.git` file or its own folder."""
        return {"GIT_DIR": self.admin, "GIT_COMMON_DIR": self.common, "GIT_WORK_TREE": self.path}

    @property
    def shown(self) -> tuple[Path, ...]:
        """What its sandbox shows read-only: the parent's checkout, and the repository's git
        folder when it lies elsewhere."""
        checkout = Path(self.checkout)
        common = Path(self.common)
        return (checkout,) if common.is_relative_to(checkout) else (checkout, common)

    def prompt(self) -> str:
        """What the subagent is told of where it works (after its parent's system prompt)."""
        return (
            f"You work in a git worktree of your own, {self.path}, on the branch {self.branch}, made "
            f"from the project's last commit (changes your parent has not committed are not in it). "
            f"The project's checkout, {self.checkout}, is read-only to you: write only in your "
            "worktree. Commit your work on your branch with git; what you leave uncommitted is "
            "committed on it for you when you end. Your parent decides whether to merge your branch."
        )


@dataclass(frozen=True)
class Changes:
    """What a subagent's worktree left as it ended: what was kept (`rules.child.Kept`), its
    commits (short sha, subject), the files its branch changes with lines added and removed,
    and what else is to say (`note`: a git call that failed, the worktree kept)."""

    branch: str
    kept: Kept
    commits: tuple[tuple[str, str], ...] = ()
    files: tuple[tuple[str, int, int], ...] = ()
    note: str = ""

    @property
    def brought(self) -> bool:
        """Whether there is anything to tell: a branch kept, or a worktree left as it was."""
        return self.kept is not Kept.NOTHING or bool(self.note)

    def text(self) -> str:
        """The changes as the report tells them (once: `rules.child.parts`), naming the branch
        once."""
        if not self.brought:
            return ""
        if self.kept is Kept.NOTHING:
            return f"Changes: none kept. {self.note}"
        n = len(self.commits)
        shown = "; ".join(f"{sha} {subject}" for sha, subject in self.commits[:SHOWN_COMMITS])
        more = f"; and {n - SHOWN_COMMITS} more" if n > SHOWN_COMMITS else ""
        added = sum(a for _, a, _ in self.files)
        removed = sum(r for _, _, r in self.files)
        files = ", ".join(f"{p} (+{a} -{r})" for p, a, r in self.files[:SHOWN_FILES])
        if len(self.files) > SHOWN_FILES:
            files += f", and {len(self.files) - SHOWN_FILES} more"
        lines = [
            f"Changes on branch {self.branch}: {n} commit{'s' if n != 1 else ''} ({shown}{more}); "
            f"{len(self.files)} file{'s' if len(self.files) != 1 else ''} changed, +{added} -{removed}"
            + (f": {files}." if files else ".")
        ]
        if self.kept is Kept.COMMITTED:
            lines.append("Its uncommitted work was committed on that branch for it.")
        if self.note:
            lines.append(self.note)
        lines.append(
            "Nothing of it is in your checkout: take it with merge_child (that branch), or by hand "
            "with git merge; or leave it."
        )
        return " ".join(lines)


def branch_of(cid: str) -> str:
    """A child's branch, from its id: `eukhe/<session>/<run>.c<n>` (each part made a valid
    ref name: what git refuses becomes `_`)."""
    parts = []
    for part in cid.split("/"):
        p = re.sub(r"[^A-Za-z0-9._-]", "_", part).replace("..", "__")
        if p.startswith(".") or p.endswith(".lock") or not p:
            p = "_" + p
        parts.append(p)
    return PREFIX + "/".join(parts)


def place_of(home: Path, top: Path, cid: str) -> Path:
    """Where a child's worktree is made: in the home, one folder a project."""
    key = hashlib.sha256(str(top).encode("utf-8", "surrogatepass")).hexdigest()[:16]
    flat = branch_of(cid)[len(PREFIX) :].replace("/", "-")
    return home / "worktrees" / key / flat


def _env(pinned: Mapping[str, str] | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_TERMINAL_PROMPT"] = "0"
    env.update(pinned or {})
    return env


async def git(
    cwd: Path | str,
    *args: str,
    ok: tuple[int, ...] = (0,),
    deadline: float = DEADLINE,
    pinned: Mapping[str, str] | None = None,
) -> str:
    """`git ARGS` in `cwd`, no hook run, within `deadline` seconds: its stdout; `pinned`: git's
    folders given (`Worktree.pinned`). WorktreeError: it failed (its last line of stderr) or
    did not end in time (killed)."""
    try:
        got = await waits.ran(["git", *NO_HOOKS, *args], cwd, _env(pinned), deadline)
    except OSError as e:
        raise WorktreeError(f"git {args[0]} could not be started in {cwd}: {e.strerror or e}") from e
    if got is None:
        raise WorktreeError(f"git {args[0]} in {cwd} did not end within {deadline:g} s")
    if got.code not in ok:
        raise WorktreeError(f"git {args[0]} in {cwd} failed: {got.why()}")
    return got.out.decode("utf-8", "replace")


async def _top(project: Path) -> Path:
    try:
        top = (await git(project, "rev-parse", "--show-toplevel")).strip()
    except WorktreeError as e:
        raise WorktreeError(
            f"isolation worktree: {project} is not in a git repository ({e}); a subagent's worktree "
            "is a git worktree of the project: spawn it without isolation, or make the project a "
            "git repository with a first commit"
        ) from None
    if not top:
        raise WorktreeError(f"isolation worktree: {project} has no work tree (a bare repository)")
    return Path(top)


async def make_worktree(project: Path, home: Path, cid: str) -> Worktree:
    """A worktree for child `cid` of the repository that holds `project`, on its own branch from
    HEAD, in the home (made again as it was when it is there already: a replay). WorktreeError:
    not a repository, no commit yet, or git failed; nothing is left half made."""
    top = await _top(project)
    head = (await git(top, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", ok=(0, 1))).strip()
    if not head:
        raise WorktreeError(
            f"isolation worktree: the repository at {top} has no commit yet; a worktree starts from "
            "the last commit: commit once, or spawn without isolation"
        )
    common = Path((await git(top, "rev-parse", "--path-format=absolute", "--git-common-dir")).strip())
    branch = branch_of(cid)
    path = place_of(home, top, cid)
    if not (path / ".git").exists():
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        have = await git(top, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}", ok=(0, 1))
        # the branch of a worktree made before a crash is taken as it is
        if have.strip():
            await git(top, "worktree", "add", "--quiet", str(path), branch)
        else:
            await git(top, "worktree", "add", "--quiet", "-b", branch, str(path), head)
    admin = (await git(path, "rev-parse", "--path-format=absolute", "--git-dir")).strip()
    with contextlib.suppress(FileExistsError):  # there to be sealed (`SEALED`); read only where enabled
        Path(admin, "config.worktree").touch(exist_ok=False)
    base = (await git(top, "merge-base", head, branch)).strip() or head
    return Worktree(str(path), branch, str(top), str(common), admin, base)


async def _identity(cwd: Path, pinned: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """A commit's author where git knows none (the user's own, else eukhe)."""
    who = await git(cwd, "config", "user.email", ok=(0, 1), pinned=pinned)
    return () if who.strip() else ("-c", "user.name=eukhe", "-c", "user.email=eukhe@localhost")


async def _removed(wt: Worktree, branch: bool) -> str:
    """The worktree's folder removed (its branch too, when `branch`): "" done, else what failed."""
    try:
        await git(wt.checkout, "worktree", "remove", "--force", wt.path)
        if branch:
            await git(wt.checkout, "branch", "-D", "--quiet", wt.branch)
    except WorktreeError as e:
        return f"Its worktree {wt.path} could not be removed: {e}."
    return ""


async def end_worktree(wt: Worktree, name: str) -> Changes:
    """End child `name`'s worktree once (`rules.child.kept`): remove it with its branch when it
    holds nothing; commit its uncommitted work on its branch; keep the branch, remove the folder.
    What it left, to tell in the report. A worktree gone already (ended before) tells its branch
    as it is; one a git call fails on is kept as it is, and said."""
    path = Path(wt.path)
    if not (path / ".git").exists():  # ended already: the branch is what is left, if any
        have = await git(
            wt.checkout, "rev-parse", "--verify", "--quiet", f"refs/heads/{wt.branch}", ok=(0, 1)
        )
        if not have.strip():
            return Changes(wt.branch, Kept.NOTHING)
        return await _told(wt, Kept.BRANCH, "")
    pin = wt.pinned()
    try:
        on = (await git(path, "symbolic-ref", "--quiet", "HEAD", ok=(0, 1), pinned=pin)).strip()
        dirty = bool((await git(path, "status", "--porcelain", "--untracked-files=all", pinned=pin)).strip())
        commits = int((await git(wt.checkout, "rev-list", "--count", f"{wt.base}..{wt.branch}")).strip() or 0)
    except (WorktreeError, ValueError) as e:
        return Changes(wt.branch, Kept.BRANCH, note=f"Its worktree {wt.path} was kept as it is: {e}.")
    if on != f"refs/heads/{wt.branch}":  # its HEAD left its branch: nothing is committed for it
        where = on.removeprefix("refs/heads/") or "a detached HEAD"
        said = f"Its worktree {wt.path} is kept as it is: its HEAD is on {where}, not on its branch."
        return await _told(wt, Kept.BRANCH, said)
    keep = child.kept(commits, dirty)
    if keep is Kept.COMMITTED:
        try:
            await git(path, "add", "--all", pinned=pin)
            msg = f"eukhe: uncommitted work of {name}"
            who = await _identity(path, pin)
            await git(path, *who, "commit", "--quiet", "--no-verify", "-m", msg, pinned=pin)
        except WorktreeError as e:
            said = f"Its uncommitted work could not be committed ({e}): its worktree {wt.path} is kept"
            return await _told(wt, Kept.BRANCH, said)
    if keep is Kept.NOTHING:
        gone = await _removed(wt, branch=True)
        return Changes(wt.branch, Kept.NOTHING, note=gone)
    return await _told(wt, keep, await _removed(wt, branch=False))


async def _told(wt: Worktree, keep: Kept, note: str) -> Changes:
    """Its branch's commits since it began and its diff's summary."""
    try:
        log = await git(wt.checkout, "log", "--format=%h%x00%s", f"{wt.base}..{wt.branch}")
        stat = await git(
            wt.checkout,
            "diff",
            "--numstat",
            "--no-renames",
            "--no-ext-diff",
            "--no-textconv",
            wt.base,
            wt.branch,
        )
    except WorktreeError as e:
        return Changes(wt.branch, keep, note=f"{note} Its commits could not be listed: {e}.".strip())
    commits = tuple(
        (sha, subject) for sha, _, subject in (line.partition("\0") for line in log.splitlines()) if sha
    )[::-1]
    files: list[tuple[str, int, int]] = []
    for line in stat.splitlines():
        added, _, rest = line.partition("\t")
        removed, _, p = rest.partition("\t")
        files.append((p, int(added) if added.isdigit() else 0, int(removed) if removed.isdigit() else 0))
    return Changes(wt.branch, keep, commits, tuple(files), note)


async def branches(project: Path) -> list[str]:
    """The subagents' branches of the repository that holds `project` (none: not a repository)."""
    try:
        out = await git(project, "for-each-ref", "--format=%(refname:short)", f"refs/heads/{PREFIX}")
    except WorktreeError:
        return []
    return [b for b in out.splitlines() if b]


async def session_branches(project: Path, session: str, first: int = 1) -> list[str]:
    """The branches of the subagents that session `session`'s runs from run `first` on spawned
    (a grandchild's among its parent's run), in the repository that holds `project`."""
    head = branch_of(f"{session}/0")[: -len("0")]
    out = []
    for b in await branches(project):
        run = b[len(head) :].partition(".")[0] if b.startswith(head) else ""
        if run.isdigit() and int(run) >= first:
            out.append(b)
    return out


async def merge_branch(checkout: Path, branch: str) -> str:
    """Merge a subagent's `branch` into the checkout (its HEAD, index and files): what was done,
    in a line. WorktreeError: not a subagent's branch, no such branch, the checkout's own
    changes in the way, or conflicts (the merge aborted, the checkout as it was, the files
    that conflict named)."""
    if not branch.startswith(PREFIX):
        raise WorktreeError(f"merge_child: {branch!r} is not a subagent's branch (they begin {PREFIX})")
    top = await _top(checkout)
    have = await git(top, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}^{{commit}}", ok=(0, 1))
    if not have.strip():
        known = ", ".join(await branches(top)) or "none"
        raise WorktreeError(f"merge_child: no branch {branch!r} in {top} (the subagents' branches: {known})")
    before = (await git(top, "rev-parse", "--verify", "--quiet", "HEAD", ok=(0, 1))).strip()
    who = await _identity(top)
    msg = f"eukhe: merge {branch}"
    try:
        await git(top, *who, "merge", "--no-ff", "--no-edit", "-m", msg, branch)
    except WorktreeError as e:
        conflicts = (await git(top, "diff", "--name-only", "--diff-filter=U", ok=(0, 1, 128))).split()
        if not conflicts:
            raise WorktreeError(
                f"merge_child: {branch} was not merged, your checkout is as it was: {e}"
            ) from None
        await git(top, "merge", "--abort", ok=(0, 128))
        raise WorktreeError(
            f"merge_child: {branch} conflicts with your checkout in {', '.join(conflicts)}; the merge was "
            f"aborted and your checkout is as it was: merge it by hand (git merge {branch}) and resolve "
            "them, or leave it"
        ) from None
    after = (await git(top, "rev-parse", "HEAD")).strip()
    if after == before:
        return f"{branch} was merged already: nothing changed"
    stat = (await git(top, "diff", "--shortstat", before, after, ok=(0, 128))).strip()
    return f"merged {branch} into {top} ({after[:12]}): {stat or 'no file changed'}"


def worktree_of(spec: Mapping[str, object]) -> Worktree | None:
    """The worktree a child's watch names, if any."""
    got = spec.get("worktree")
    return Worktree.of(got) if isinstance(got, Mapping) else None
