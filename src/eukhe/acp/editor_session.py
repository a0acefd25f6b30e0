"""One editor session's live state: its session loop (`run.drive.SessionDriver`, stepped
by `rules.drive` with the editor's face, `drive.EDITOR`: the state IS the model's), and
what the editor protocol adds: whether the editor has its id yet, and its updates until
then.

All of it lives on the face's loop; the runs' threads reach it through `post`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from eukhe.acp.updates import Update
from eukhe.run.drive import SessionDriver
from eukhe.run.spec import SessionSetup


@dataclass
class EditorSession:
    """An editor's session: eukhe's session `id` in `cwd`, its runs' setup, its loop, and
    whether its first run has started (its SessionStart hooks' source)."""

    id: str
    cwd: Path
    made: SessionSetup
    driver: SessionDriver
    resumed: bool = False  # opened with session/load: its first run's source is "resume"
    known: bool = True  # the editor has its id: a new session's, once session/new's answer is out
    held: list[Update] = field(default_factory=list)  # its updates until then
    began: bool = False

    def start_source(self) -> str | None:
        """The SessionStart hooks' source of the run about to start (None: not the first)."""
        if self.began:
            return None
        self.began = True
        return "resume" if self.resumed else "startup"
