"""The real `eukhe` in a terminal, driven as a person would: tmux types into it
(`send-keys`) and reads its screen (`capture-pane`). Each terminal has a tmux server
of its own (its own socket), so tests never see each other's panes."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from tests import forks

HANDED = Path(__file__).parents[1] / "handed.py"
TMUX = shutil.which("tmux")
needs_tmux = pytest.mark.skipif(
    TMUX is None, reason="tmux is not installed: apt-get install tmux (make test does, as root)"
)

WAIT = 60.0
"""Seconds any one look for something on the screen may take."""

COLUMNS, ROWS = 110, 36


def faux_home(home: Path, url: str, settings: dict[str, object] | None = None) -> None:
    """A home whose model is the faux server at `url`."""
    home.mkdir(parents=True, exist_ok=True)
    base = {"model": "vllm/m", "providers": {"vllm": {"baseUrl": url}}}
    (home / "settings.json").write_text(json.dumps({**base, **(settings or {})}))


class Term:
    """One terminal running `eukhe` (or `args`) in `cwd` with the home `home`."""

    def __init__(
        self, cwd: Path, home: Path, *args: str, env: dict[str, str] | None = None, typed: str = ""
    ) -> None:
        """`typed`: keys typed as the terminal starts (`\r` is Enter), by the same tmux
        command: they wait in the terminal before `eukhe` has even started."""
        assert TMUX is not None
        self.socket = f"eukhe-{uuid.uuid4().hex[:10]}"
        self.cwd, self.home = cwd, home
        full = {"EUKHE_HOME": str(home), "TERM": "xterm-256color", **(env or {})}
        exports = " ".join(f"{k}={_quoted(v)}" for k, v in full.items())
        # the agent forked by the worker's template (its imports done), this terminal its own
        handed = [sys.executable, str(HANDED), forks.template().path]
        command = " ".join(_quoted(a) for a in [*handed, *args])
        typing = (";", "send-keys", "-t", "0", "-l", typed) if typed else ()
        # the pane stays after eukhe exits, so its last screen can still be read
        self._tmux("new-session", "-d", "-x", str(COLUMNS), "-y", str(ROWS), "-c", str(cwd),
                   f"env {exports} {command}; echo '[eukhe exited]' $?; sleep 600", *typing)  # fmt: skip
        self._tmux("set-option", "-g", "history-limit", "20000")

    def _tmux(self, *args: str) -> str:
        assert TMUX is not None
        done = subprocess.run([TMUX, "-L", self.socket, *args], capture_output=True, text=True, timeout=30)
        if done.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args[:2])}: {done.stderr.strip()}")
        return done.stdout

    def type(self, text: str) -> None:
        """Type `text` (literally), without Enter."""
        self._tmux("send-keys", "-t", "0", "-l", text)

    def keys(self, *keys: str) -> None:
        """Press keys by tmux's names: Enter, C-c, Escape, M-Enter..."""
        self._tmux("send-keys", "-t", "0", *keys)

    def paste(self, text: str) -> None:
        """Paste `text` as a terminal does (bracketed: the program knows it is pasted)."""
        self._tmux("set-buffer", "-b", "paste", text)
        self._tmux("paste-buffer", "-p", "-d", "-b", "paste", "-t", "0")

    def send(self, text: str) -> None:
        self.type(text)
        time.sleep(0.05)
        self.keys("Enter")

    def modes(self) -> list[str]:
        """The terminal's modes as `stty -a` names them (`echo`, `-icanon`...)."""
        tty = self._tmux("display-message", "-p", "-t", "0", "#{pane_tty}").strip()
        done = subprocess.run(["stty", "-a", "-F", tty], capture_output=True, text=True, timeout=30)
        if done.returncode != 0:
            raise AssertionError(f"stty -a -F {tty}: {done.stderr.strip()}")
        return done.stdout.replace(";", " ").split()

    def screen(self) -> str:
        """The visible screen, wrapped lines joined, each line's trailing blanks dropped (a
        styled row is padded to the width with them, or not, as a frame was drawn)."""
        return _trimmed(self._tmux("capture-pane", "-p", "-J", "-t", "0"))

    def history(self) -> str:
        """Everything the terminal shows and showed (its scrollback too), wrapped lines joined,
        trailing blanks dropped."""
        return _trimmed(self._tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "0"))

    def until(self, what: str, ok: Callable[[str], bool] | None = None, wait: float = WAIT) -> str:
        """Wait until the screen and its scrollback hold `what` (or `ok` of them holds);
        their text. Past `wait`, fail with the screen as it is."""
        end = time.monotonic() + wait
        while True:
            text = self.history()
            if ok(text) if ok is not None else what in text:
                return text
            if time.monotonic() > end:
                raise AssertionError(f"waited {wait:.0f} s for {what!r}; the terminal shows:\n{text[-3000:]}")
            time.sleep(0.1)

    def ready(self) -> str:
        """Once the store is open behind the prompt (its line printed), and the prompt is idle."""
        booted = re.compile(r"^· session \d{8}-\d{6}-\w+ · model ", re.MULTILINE)
        return self.until(
            "a ready prompt", lambda t: bool(booted.search(t)) and bool(re.search(r"ready · session \d", t))
        )

    def svg(self, path: Path, title: str) -> None:
        """The screen as a picture: the pane's colours read by rich, exported as SVG."""
        from rich.console import Console
        from rich.text import Text

        ansi = self._tmux("capture-pane", "-p", "-e", "-t", "0")
        console = Console(record=True, width=COLUMNS, file=open(os.devnull, "w"), force_terminal=True)  # noqa: SIM115
        console.print(Text.from_ansi(ansi.rstrip("\n")))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(console.export_svg(title=title), encoding="utf-8")

    def close(self) -> None:
        subprocess.run([TMUX or "tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=30)

    def __enter__(self) -> Term:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _quoted(s: str) -> str:
    return "'" + s.replace("'", "'\\''") + "'"


def _trimmed(text: str) -> str:
    return "\n".join(line.rstrip(" ") for line in text.split("\n"))


def screenshots() -> Path | None:
    """Where a test leaves its pictures for docs/ (`EUKHE_SCREENSHOTS`), if anywhere."""
    where = os.environ.get("EUKHE_SCREENSHOTS")
    return Path(where) if where else None
