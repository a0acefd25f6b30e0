"""The Python kernel's files (its connection file with the key that signs every
message, its sockets, the byte counts of its `bash()` jobs) are the user's alone,
in a folder of 0700."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from eukhe.kernel import Kernel
from tests.home.modes import open_to_others


def test_a_kernels_files_are_private_while_it_runs(tmp_path: Path, runtime: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()

    async def go() -> dict[str, str]:
        k = Kernel(project, runtime_dir=runtime)
        try:
            got = await k.execute("h = bash('echo hi'); h.wait(); print(h.output())", asyncio.Event())
            assert "hi" in got.content, got
            [folder] = runtime.iterdir()
            assert "connection.json" in os.listdir(folder)
            assert any(n.startswith("bash-") for n in os.listdir(folder)), os.listdir(folder)
            return open_to_others(folder)
        finally:
            await k.close()

    old = os.umask(0o022)  # the kernel keeps the user's umask (its cells make the project's files)
    try:
        assert asyncio.run(go()) == {}
    finally:
        os.umask(old)
