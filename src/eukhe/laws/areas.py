"""Every area whose laws `eukhe laws` checks, by name."""

from __future__ import annotations

from eukhe.laws import (
    acp,
    admission,
    aux_fallback,
    child,
    child_take,
    child_watch,
    classify,
    compactor,
    confine,
    hook,
    lease,
    mcp,
    permission,
    permission_ask,
    plan,
    progress,
    queue,
    recovery,
    retry,
    run,
    skill_load,
    wait,
)
from eukhe.laws.engine import Area

AREAS: dict[str, Area] = {
    "run": run.AREA,
    "recovery": recovery.AREA,
    "classify": classify.AREA,
    "wait": wait.AREA,
    "lease": lease.AREA,
    "aux_fallback": aux_fallback.AREA,
    "skill_load": skill_load.AREA,
    "admission": admission.AREA,
    "compactor": compactor.AREA,
    "queue": queue.AREA,
    "child_watch": child_watch.AREA,
    "progress": progress.AREA,
    "child": child.AREA,
    "child_take": child_take.AREA,
    "permission": permission.AREA,
    "permission_ask": permission_ask.AREA,
    "plan": plan.AREA,
    "confine": confine.AREA,
    "mcp": mcp.AREA,
    "retry": retry.AREA,
    "hook": hook.AREA,
    "acp": acp.AREA,
}
