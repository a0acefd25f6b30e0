"""A run's Python kernel, made on its first cell (`tools/ipython.py` is the tool that uses it)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from eukhe.tools.base import Result

__all__ = ["LazyKernel"]


class LazyKernel:
    """A run's kernel, made on its first cell: a run that runs none never imports
    jupyter_client and zmq (80 ms of its start)."""

    def __init__(self, cwd: Path, budget_ms: int, env: Mapping[str, str], sandbox: Any = None) -> None:
        self.cwd, self.budget_ms = cwd, budget_ms
        self.env = dict(env)  # the run's tool environment (`Context.env`): its secrets out
        self.sandbox = sandbox  # the run's (`Context.sandbox`): the kernel runs inside it
        self.kernel: Any = None

    def _made(self) -> Any:
        if self.kernel is None:
            from eukhe.kernel import Kernel  # here, not above: see the class

            self.kernel = Kernel(self.cwd, budget_ms=self.budget_ms, env=self.env, sandbox=self.sandbox)
        return self.kernel

    async def execute(self, code: str, cancel: asyncio.Event) -> Result:
        return await self._made().execute(code, cancel)  # type: ignore[no-any-return]

    async def job(self, n: int, action: str, cancel: asyncio.Event) -> Result:
        return await self._made().job(n, action, cancel)  # type: ignore[no-any-return]

    def output_bytes(self) -> int:
        return 0 if self.kernel is None else int(self.kernel.output_bytes())

    async def close(self) -> str | None:
        """The kernel ended; what its sandbox's guard removed since its last result, said."""
        if self.kernel is not None:
            return await self.kernel.close()  # type: ignore[no-any-return]
        return None
