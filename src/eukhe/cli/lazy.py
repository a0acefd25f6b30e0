"""The command line's heavy modules, each loaded by the first command that needs it. These
are the command line's only imports made inside functions: without them `eukhe --help` and
the commands that run no work would wait a second or more for libraries they never use.

- `stored`: the home's store (DBOS, SQLAlchemy), for runs (`eukhe run --control`'s
  too), sessions, the chat and the store itself;
- `lawbook`: the laws and their engine (Hypothesis, CrossHair), for `eukhe laws`;
- `demo`: the faux model, for `eukhe demo` (which runs through `stored`) and `eukhe faux serve`;
- `editor`: the Agent Client Protocol's SDK and the store, for `eukhe acp`.

Each hands out its module typed by the protocol below (a module implements a protocol with
its functions), so a caller's use of a half is checked as an import's would be."""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, Protocol

from eukhe.json_types import JsonObject

if TYPE_CHECKING:  # their own types: loaded by them, never by this module
    from eukhe.cli.demo import Staged
    from eukhe.cli.printer import RunView
    from eukhe.run.chat_access import Entry
    from eukhe.run.home_store import Chat, ChatStore, FleetView, Migrated, SessionRow
    from eukhe.run.session_service import Transcript
    from eukhe.run.spec import RunSpec, SessionSetup


class Stored(Protocol):
    """`cli/stored.py`: the runs, the session service's reads, the chat, the store itself."""

    def run_here(
        self, settings: JsonObject, view: RunView, spec: RunSpec | None, session: str | None
    ) -> NoReturn: ...
    def ran_here(
        self, settings: JsonObject, view: RunView, spec: RunSpec | None, session: str | None
    ) -> int: ...
    def control_here(self, made: SessionSetup, view: RunView, session: str, given: bool) -> NoReturn: ...
    def rows(self) -> list[SessionRow]: ...
    def subagents(self) -> list[JsonObject]: ...
    def fleet(self) -> FleetView: ...
    def transcript(self, session: str) -> Transcript: ...
    def route(self, session: str) -> JsonObject: ...
    def own_runs(self, session: str) -> list[tuple[int, bool, str]]: ...
    def fork(self, parent: str, at: int | None) -> tuple[str, int]: ...
    def rewind_conversation(self, session: str, first: int, last: int) -> str: ...
    def chat_store(self) -> ChatStore: ...
    def chat(self, store: ChatStore) -> Chat: ...
    async def import_entries(self, where: Path, entries: list[Entry]) -> tuple[int, int, int]: ...
    def migrate_home(self) -> tuple[str, Migrated | None, str]: ...


class Lawbook(Protocol):
    """`cli/lawbook.py`: `eukhe laws`."""

    def check(
        self, area: list[str] | None, json_out: bool, no_proofs: bool, examples: int | None, jobs: int = 1
    ) -> int: ...


class Demo(Protocol):
    """`cli/demo.py`: the scripted task staged in a temporary home, and the faux model on
    loopback."""

    def staged(self, as_json: bool) -> AbstractContextManager[Staged]: ...
    def said_after(self, staged: Staged, as_json: bool) -> None: ...
    def serve(self, script: str, port: int) -> None: ...


class EditorFace(Protocol):
    """`acp/serve.py`: `eukhe acp`, the editor face on stdio."""

    def main(self) -> None: ...


def stored() -> Stored:
    from eukhe.cli import stored as half

    return half


def lawbook() -> Lawbook:
    from eukhe.cli import lawbook as half

    return half


def demo() -> Demo:
    from eukhe.cli import demo as half

    return half


def editor() -> EditorFace:
    from eukhe.acp import serve as half

    return half
