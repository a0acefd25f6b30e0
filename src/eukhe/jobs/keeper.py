"""A background job's keeper: the process that runs its command and ends it as the rule says.

Its holder (the eukhe process whose run started the job, `jobs.holder`) starts it in a session
of its own, so a signal to the holder's group never reaches it, with a pipe for stdin that
only the holder writes. The keeper:

- makes itself a subreaper and, where it may, a cgroup for the job (`jobs.tree`), then forks
  the command (already wrapped in the run's sandbox) into it, stdout and stderr into one pipe;
- keeps the latest HOLD_BYTES of what it prints (`rules.job.appended`) in the job's `output`
  file, rewritten at most every FLUSH_S, and the rule's record in `state.json` at each change;
- reads `end <WHY>` lines from its holder (`rules.job.on_end`); the pipe's end means its
  holder died (`Why.HOLDER_DIED`), and so does a SIGTERM, SIGINT or SIGHUP to itself; a
  SIGUSR1 is a person's stop from another process (`eukhe jobs --kill`: `Why.KILLED`);
- looks at the job when the rule says (`next_look`: at least every TICK_S), and sends the
  signal each step says to the whole tree;
- reaps every process re-parented to it, and exits once the job has ENDED and its output is
  closed (at most DRAIN_S after), its cgroup removed.

Standard library, the rule and the job's files only: it starts in a few milliseconds, and
its loop is one thread, so forking the command from it is safe."""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import sys
import time
from pathlib import Path

from eukhe.home import HomeError
from eukhe.jobs import record, tree
from eukhe.rules import job as rule

__all__ = ["main"]

FLUSH_S = 0.2
"""Seconds at most between what a job printed and its `output` file showing it."""
DRAIN_S = 1.0
"""Seconds a job's output may stay open once its processes have all ended (none can hold it)."""
LOOK_S = 0.05
"""Seconds between two looks at a job's tree once its command has exited or its end began."""
CHUNK = 1 << 16

_SIGS = {rule.Sig.TERM: signal.SIGTERM, rule.Sig.KILL: signal.SIGKILL}


def _exec(argv: list[str], cwd: str, out: int, cgroup: Path | None) -> None:
    """In the forked child: into the job's cgroup, the signals Python ignores restored, stdin
    empty, stdout and stderr the job's output, then the command. Never returns."""
    try:
        if cgroup is not None:
            with contextlib.suppress(OSError):
                (cgroup / "cgroup.procs").write_text("0")
        for sig in (
            signal.SIGPIPE,
            signal.SIGXFSZ,
            signal.SIGCHLD,
            signal.SIGTERM,
            signal.SIGINT,
            signal.SIGHUP,
        ):
            signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, set())
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.chdir(cwd)
        os.execvp(argv[0], argv)
    except BaseException as e:  # the child says why, in the job's output, and exits
        with contextlib.suppress(OSError):
            os.write(out, f"could not start the command: {e}\n".encode())
    finally:
        os._exit(127)


def _drained(fd: int) -> tuple[bytes, bool]:
    """What the pipe holds now, at most HOLD_BYTES; whether it is still open."""
    parts: list[bytes] = []
    size = 0
    while size < rule.HOLD_BYTES:
        try:
            data = os.read(fd, CHUNK)
        except BlockingIOError:
            break
        except OSError:
            return b"".join(parts), False
        if not data:
            return b"".join(parts), False
        parts.append(data)
        size += len(data)
    return b"".join(parts), True


class Keeper:
    def __init__(self, folder: Path, mark: str, lifetime: float, cgroup: Path | None) -> None:
        self.folder, self.cgroup = folder, cgroup
        self.tree = tree.Tree(mark, cgroup, os.getpid())
        self.job = rule.started(time.monotonic(), lifetime)
        self.out = rule.Output()
        self.me = record.identity(os.getpid())
        self.child = -1
        self.exited = False
        self.flushed = 0.0
        self.dirty = False
        self.ended_at: float | None = None
        self.looked = 0.0
        self.asked: rule.Why | None = None  # a signal to the keeper itself, as the rule reads it
        self._save()

    def _save(self) -> None:
        cg = str(self.cgroup) if self.cgroup is not None else None
        try:
            record.write_state(self.folder, record.State(self.job, self.me, cg))
        except HomeError as e:  # the job still ends as the rule says; its record says it late
            print(f"eukhe job keeper: {e}", file=sys.stderr)

    def apply(self, step: rule.Step) -> None:
        job, sig = step
        if sig is not None:
            self.tree.signal(_SIGS[sig.sig])
        if job != self.job:
            self.job = job
            if rule.ended(job) and self.ended_at is None:
                self.ended_at = time.monotonic()
                # what it printed is on disk before its end is: a look that sees the end sees
                # every byte read so far (a throttled flush left the last ones for later)
                self.flush(self.ended_at, force=True)
            self._save()

    def alive(self) -> bool:
        """Whether a process of the tree lives: surely while its command runs (no look needed)."""
        return not self.exited or self.tree.alive()

    def reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.child:
                self.exited = True
                code = os.waitstatus_to_exitcode(status)
                self.apply(rule.on_exit(self.job, code, time.monotonic(), self.tree.alive()))

    def flush(self, now: float, force: bool = False) -> None:
        if self.dirty and (force or now - self.flushed >= FLUSH_S):
            try:
                record.write_output(self.folder, self.out)
            except HomeError as e:
                print(f"eukhe job keeper: {e}", file=sys.stderr)
            self.dirty, self.flushed = False, now


def main(args: list[str]) -> int:
    """`keeper FOLDER CWD -- ARGV...`: the job whose files are in FOLDER (its `job.json` written)."""
    folder, cwd, argv = Path(args[0]), args[1], args[args.index("--") + 1 :]
    meta = record.read_meta(folder)
    if meta is None or not argv:
        print(f"eukhe job keeper: no job in {folder}", file=sys.stderr)
        return 2
    tree.subreaper()
    cgroup = tree.cgroup_for(meta.mark)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    os.set_blocking(wake_r, False)
    signal.set_wakeup_fd(wake_w)
    keeper = Keeper(folder, meta.mark, meta.lifetime, cgroup)

    def asked(signum: int, frame: object) -> None:
        keeper.asked = rule.Why.KILLED if signum == signal.SIGUSR1 else rule.Why.HOLDER_DIED

    signal.signal(signal.SIGCHLD, lambda signum, frame: None)  # a handler, so the wakeup fd hears it
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1):
        signal.signal(sig, asked)
    out_r, out_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        _exec(argv, cwd, out_w, cgroup)
    os.close(out_w)
    keeper.child = pid
    os.set_blocking(out_r, False)
    sel = selectors.DefaultSelector()
    sel.register(out_r, selectors.EVENT_READ, "out")
    sel.register(0, selectors.EVENT_READ, "holder")
    sel.register(wake_r, selectors.EVENT_READ, "signal")
    output_open = True
    pending = b""
    while True:
        now = time.monotonic()
        at = rule.next_look((keeper.job,), now)
        if keeper.dirty:
            at = min(at, keeper.flushed + FLUSH_S)
        if keeper.ended_at is not None:
            at = min(at, keeper.ended_at + DRAIN_S)
        elif keeper.exited or keeper.job.phase is rule.Phase.ENDING:
            at = min(at, keeper.looked + LOOK_S)
        for key, _ in sel.select(max(at - now, 0.0)):
            if key.data == "out":
                pass  # taken below, with what came before its command's exit
            elif key.data == "holder":
                try:
                    said = os.read(0, 4096)
                except OSError:
                    said = b""
                if not said:  # its holder is gone: the pipe's only writer
                    sel.unregister(0)
                    keeper.apply(rule.on_end(keeper.job, rule.Why.HOLDER_DIED, time.monotonic()))
                    continue
                pending += said
                while b"\n" in pending:
                    line, _, pending = pending.partition(b"\n")
                    word = line.decode("ascii", "replace").split()
                    if len(word) == 2 and word[0] == "end" and word[1] in rule.Why.__members__:
                        keeper.apply(rule.on_end(keeper.job, rule.Why[word[1]], time.monotonic()))
            else:
                with contextlib.suppress(OSError):
                    while os.read(wake_r, 512):
                        pass
        if output_open:  # what it printed, before its command's exit is reaped: a look that
            # sees the exit sees all the command printed before it
            data, output_open = _drained(out_r)
            if data:  # what a flooding job printed taken at once: one copy of what is held
                keeper.out = rule.appended(keeper.out, data)
                keeper.dirty = True
            if not output_open:
                sel.unregister(out_r)
        keeper.reap()
        if keeper.asked is not None:
            why, keeper.asked = keeper.asked, None
            keeper.apply(rule.on_end(keeper.job, why, time.monotonic()))
        now = time.monotonic()
        due = rule.due(keeper.job)
        # due, or (its command gone, or its end begun) a look at most every LOOK_S: its last
        # process seen gone soon, without a look at /proc for each chunk a dying job prints
        watching = keeper.exited or keeper.job.phase is rule.Phase.ENDING
        if due is not None and (now >= due or (watching and now >= keeper.looked + LOOK_S)):
            keeper.looked = now
            keeper.apply(rule.on_tick(keeper.job, now, keeper.alive()))
        keeper.flush(now)
        if keeper.ended_at is not None and (not output_open or now >= keeper.ended_at + DRAIN_S):
            break
    keeper.flush(time.monotonic(), force=True)
    keeper.tree.remove()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
