"""Flood a kernel cell's stdout with 200 MB and print what it cost the host: its resident memory
before, at its peak and the growth, the bytes it kept of the cell's output, and the time.

    .venv/bin/python bench/kernel_flood.py [--mb 200] [--chunk 65536]

Target: the host keeps at most HEAD + TAIL bytes of the output (1 MiB) and its peak RSS grows by
less than 64 MiB, however large the flood.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from eukhe.kernel import HEAD, TAIL, Kernel


def status(key: str) -> int:
    """A /proc/self/status figure (VmRSS, VmHWM), in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    raise LookupError(key)


def reset_peak() -> bool:
    """Reset VmHWM to the current RSS (Linux 4.0+); whether it could."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


async def sample(peak: list[int], stop: asyncio.Event) -> None:
    """Keep the highest VmRSS seen, in case VmHWM could not be reset."""
    while not stop.is_set():
        peak[0] = max(peak[0], status("VmRSS"))
        await asyncio.sleep(0.01)


async def flood(mb: int, chunk: int) -> None:
    with tempfile.TemporaryDirectory() as d:
        k = Kernel(d, budget_ms=600_000)
        cancel = asyncio.Event()
        try:
            await k.execute("1", cancel)  # the kernel starts outside the measure
            base = status("VmRSS")
            exact = reset_peak()
            peak = [base]
            stop = asyncio.Event()
            sampler = asyncio.ensure_future(sample(peak, stop))
            n = mb * 1024 * 1024 // chunk
            code = (
                f"import sys\nc = 'x' * {chunk - 1} + '\\n'\nfor _ in range({n}):\n    sys.stdout.write(c)\n"
            )
            start = time.monotonic()
            r = await k.execute(code, cancel)
            took = time.monotonic() - start
            stop.set()
            await sampler
            top = max(peak[0], status("VmHWM")) if exact else peak[0]
            cut = "bytes cut" in r.content
            print(f"flood: {n * chunk / 1e6:.1f} MB in {took:.1f} s ({n * chunk / 1e6 / took:.0f} MB/s)")
            print(f"host output bytes counted: {k.output_bytes()}")
            print(
                f"rendered result: {len(r.content.encode())} bytes (HEAD + TAIL = {HEAD + TAIL}), "
                f"cut shown: {cut}"
            )
            print(f"RSS baseline: {base / 2**20:.1f} MiB")
            print(f"RSS peak:     {top / 2**20:.1f} MiB ({'VmHWM' if exact else 'sampled VmRSS'})")
            print(f"RSS growth:   {(top - base) / 2**20:.1f} MiB")
        finally:
            await k.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=int, default=200, help="megabytes (MiB) to print")
    ap.add_argument("--chunk", type=int, default=65536, help="bytes one write prints")
    ap.add_argument("--smoke", action="store_true", help="every path once, small: the bench still runs")
    args = ap.parse_args()
    asyncio.run(flood(2 if args.smoke else args.mb, args.chunk))


if __name__ == "__main__":
    main()
