"""A short command run to its end within a deadline (`ran`): the helper processes eukhe runs
for itself (git for checkpoints and subagents' worktrees), never a tool's command (bash has
its own, bounded output and all)."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from eukhe.rules.wait import End
from eukhe.waits._clock import LoopClock
from eukhe.waits._race import race


@dataclass(frozen=True)
class Ran:
    """How it ended: its exit code, its stdout and stderr whole."""

    code: int
    out: bytes
    err: bytes

    def why(self) -> str:
        """Its failure in a line: the first `fatal:` or `error:` line of stderr, else its last."""
        said = self.err.decode("utf-8", "replace").strip().splitlines()
        first = next((s for s in said if s.startswith(("fatal:", "error:"))), said[-1] if said else "")
        return first or f"exit code {self.code}"


async def ran(
    argv: Sequence[str],
    cwd: Path | str,
    env: Mapping[str, str],
    deadline: float,
    given: bytes | None = None,
    umask: int = -1,
) -> Ran | None:
    """`argv` in `cwd`, in a session of its own, `given` on its stdin (None: empty), to its end
    or `deadline` seconds on the loop's clock, whichever comes first. None: the deadline passed,
    and its whole process group was killed and reaped. OSError: it could not be started."""
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL if given is None else asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd,
        env=dict(env),
        start_new_session=True,
        umask=umask,
    )
    clock = LoopClock()
    raced = await race(proc.communicate(given), clock.now() + deadline, None, clock, grace=0.0)
    if raced.end is not End.EVENT or raced.error is not None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 9)
        await proc.wait()
        return None
    out, err = raced.result()
    return Ran(proc.returncode if proc.returncode is not None else -1, bytes(out), bytes(err))
