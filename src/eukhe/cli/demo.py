"""`eukhe demo`: a misbehaving model on loopback HTTP, and a real task run as `eukhe run`
runs one: a durable workflow in the home's store, slots from the home's owner, every tool
call through the permission gate, bash in the sandbox, the model through the real SDK.
Every recovery shows as it happens; it ends answered. The home is a temporary one, kept
afterwards, so that `eukhe sessions` lists the demo's session there.

This half stages the demo (`staged`: the home, the project, the faux model serving its
script, the run's spec); the command line runs it through the store's half as `eukhe run`
does (`cli/stored.py`). With `eukhe faux serve`, the command line's half that loads the
faux model (`cli/lazy.py`)."""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import typer

from eukhe.ai.faux import FauxServer, ScriptError, load, parse
from eukhe.cli.output import echo
from eukhe.cli.printer import Printer, RunView
from eukhe.home import private_dir, private_write
from eukhe.ids import new_session, run_id, run_line
from eukhe.json_types import JsonObject
from eukhe.run.spec import RunSpec, setup
from eukhe.sandbox.bwrap import READ_ONLY, why_not

TASK = "Read notes.txt and tell me what the project is called."

NOTES = "The project is called eukhe: a harness whose every run ends.\n"

_READ = {"calls": [{"name": "read", "arguments": {"path": "notes.txt"}}], "chunks": 4}

SCRIPT: JsonObject = {
    "replies": [
        # 1. a reply of only thinking: no text, no tool call
        {"thinking": "The user wants the project name. I should plan everything first...", "chunks": 4},
        # 2. after the note: the call leaked as Hermes markup in the text
        {
            "when": "Harness note",
            "text": "I will read the file.\n<tool_call>\n"
            + json.dumps({"name": "read", "arguments": {"path": "notes.txt"}})
            + "\n</tool_call>",
            "chunks": 6,
        },
        # 3-6. the same call with the same result, round after round
        _READ,
        _READ,
        _READ,
        _READ,
        # 7. after the redirect note: the stream goes silent
        {
            "when": "Harness note",
            "text": "Thinking about the answer " * 4,
            "chunks": 8,
            "stallAfter": 2,
            "stall": 30,
        },
        # 8. after the stall note: the answer
        {"when": "Harness note", "text": "The project is called eukhe.", "chunks": 3},
    ]
}


MODEL = "vllm/faux-model"
"""The faux model as `eukhe run --model` names a local server's (its URL the faux server's)."""

SETTINGS: JsonObject = {"retry": {"provider": {"streamIdleTimeoutMs": 1500}}}
"""The demo home's settings.json: a stream silent 1.5 s is a stall (the default: 2 minutes)."""

REAL_MODEL = (
    "To run a real model: {eukhe} run --model openai/gpt-4.1 'your task' (with OPENAI_API_KEY set),\n"
    "or a local server: {eukhe} run --model vllm/NAME --base-url http://127.0.0.1:8000/v1 'your task'.\n"
    "Each eukhe run is durable: kill it at any moment and eukhe resume finishes it; "
    "eukhe sessions lists them.\n"
    "{eukhe} with no arguments (and the same --model, --base-url) opens the interactive agent."
)


@dataclass(frozen=True)
class Staged:
    """The demo, ready to run: its home, its session, the run's spec and settings, and the
    view that shows it."""

    home: Path
    session: str
    settings: JsonObject
    spec: RunSpec
    view: RunView


def sandbox_mode(unavailable: str | None) -> tuple[str | None, str]:
    """The demo's sandbox mode (None: the settings', workspace-write) and the line that says
    it, given why bubblewrap cannot run here (None: it can). Without bubblewrap, bash is
    refused in every mode but full access; the task only reads, so read-only serves it."""
    if unavailable is None:
        return None, "sandbox: workspace-write, bash inside bubblewrap"
    return READ_ONLY, f"sandbox: read-only, as the task only reads ({unavailable}: bash would be refused)"


@contextmanager
def staged(as_json: bool) -> Iterator[Staged]:
    """The demo staged for the store's half to run (`cli/stored.ran_here`), the faux model
    serving its script on loopback until the context ends: a temporary home, kept (this
    process's `EUKHE_HOME` from now on, as `EUKHE_HOME=... eukhe run` would have it), and a
    project beside it that holds notes.txt."""
    root = Path(tempfile.mkdtemp(prefix="eukhe.demo."))  # not `eukhe-*`: the sandbox hides those in /tmp
    where, project = private_dir(root / "home"), root / "project"
    project.mkdir()
    (project / "notes.txt").write_text(NOTES)
    private_write(where / "settings.json", json.dumps(SETTINGS, indent=2) + "\n")
    # every part of this process reads its home here (the settings, the store, the owner it starts)
    os.environ["EUKHE_HOME"] = str(where)
    mode, said = sandbox_mode(why_not())
    for line in (
        f"task: {TASK}",
        "model: the faux model on loopback, scripted to misbehave (docs/faux.md)",
        f"home: {where} (a temporary one, kept)",
        f"project: {project}",
        said,
        "run: as `eukhe run` runs one: a durable workflow in the home's store, slots from its owner, "
        "each tool call through the permission gate",
    ):
        echo(line, err=as_json)
    with FauxServer(parse(SCRIPT)) as server:
        made = setup(project, MODEL, server.url, sandbox=mode)
        session = new_session()
        announced = run_line(session, run_id(session, 1))
        printer = Printer(as_json)
        printer.say(announced)
        spec = dataclasses.replace(made.spec(TASK), session_start="startup")
        yield Staged(where, session, made.settings, spec, RunView(printer, session, as_json, announced))


def said_after(staged: Staged, as_json: bool) -> None:
    """What the demo says once its run has ended: how to see its session, and how to run a
    real model."""
    eukhe = _eukhe()
    at = f"EUKHE_HOME={shlex.quote(str(staged.home))}"
    for line in (
        "",
        "The session stays in the demo's home: this lists it, and this shows its transcript:",
        f"{at} {eukhe} sessions",
        f"{at} {eukhe} session show {staged.session}",
    ):
        echo(line, err=as_json)
    if not as_json:
        echo("\n" + REAL_MODEL.format(eukhe=eukhe))


def _eukhe() -> str:
    """The command that runs this eukhe again as the person ran it: `.venv/bin/eukhe` after
    `make demo` (not on the PATH), else `eukhe`."""
    given = sys.argv[0]
    if Path(given).name != "eukhe" or os.sep not in given:
        return "eukhe"
    found = shutil.which("eukhe")
    return "eukhe" if found and Path(found).resolve() == Path(given).resolve() else shlex.quote(given)


def serve(script: str, port: int) -> None:
    """`eukhe faux serve`: the faux model on loopback until interrupted."""
    try:
        loaded = load(script)
    except ScriptError as e:
        echo(f"eukhe faux serve: {e}", err=True)
        raise typer.Exit(2) from None
    try:
        server = FauxServer(loaded, port=port).start()
    except OSError as e:
        echo(f"eukhe faux serve: cannot listen on 127.0.0.1:{port}: {e.strerror}", err=True)
        raise typer.Exit(2) from None
    echo(f"faux model serving {len(loaded.turns)} replies on {server.url}", err=True)
    echo(server.url)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
