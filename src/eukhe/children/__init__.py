"""Subagents (H5): spawned as durable child runs, watched for progress, and reported
back to their parent exactly once."""

from typing import TYPE_CHECKING

# Named, not loaded: each is imported from its module (the ledger and the watch load the store).
if TYPE_CHECKING:
    from eukhe.children.ledger import Ledger, with_ledger
    from eukhe.children.tools import MERGE_CHILD, PROGRESS, SPAWN, STOP_CHILD, SpawnError
    from eukhe.children.watch import Seen, Watcher
    from eukhe.children.worktree import (
        Worktree,
        WorktreeError,
        end_worktree,
        make_worktree,
        merge_branch,
        session_branches,
        worktree_of,
    )

__all__ = [
    "MERGE_CHILD",
    "PROGRESS",
    "SPAWN",
    "STOP_CHILD",
    "Ledger",
    "Seen",
    "SpawnError",
    "Watcher",
    "Worktree",
    "WorktreeError",
    "end_worktree",
    "make_worktree",
    "merge_branch",
    "session_branches",
    "with_ledger",
    "worktree_of",
]
