"""What a run's id says: a root session's run is `<session>/<n>`, a subagent's run
`<run>.c<k>` (a grandchild's `<run>.c<k>.c<j>`), and a subagent's task its run's id
with `.task`. Every face and layer reads ids, so this sits at the ground."""

from __future__ import annotations


def is_root(run: str) -> bool:
    """A run of a root session, not a subagent's run or task (`<session>/0003.c1`)."""
    return ".c" not in run.rpartition("/")[2]


def name_of(child_id: str) -> str:
    """A child's name, from its id: `<session>/0003.c1` -> `c3.1` (short, and unique
    within its session; a grandchild `<session>/0003.c1.c2` -> `c3.1.2`)."""
    run, _, n = child_id.rpartition(".c")
    tail = run.rpartition("/")[2].split(".c")
    return "c" + ".".join([tail[0].lstrip("0") or "0", *tail[1:], n])
