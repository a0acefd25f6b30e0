"""`eukhe demo`: a misbehaving model on loopback HTTP, and a real task through the
whole harness with the real SDK. Every recovery shows as it happens; it ends answered.
With `eukhe faux serve`, the command line's half that loads a provider's SDK
(`cli/halves.py`)."""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

import typer

from eukhe.ai.faux import FauxServer, ScriptError, load, parse
from eukhe.ai.openai_chat import OpenAIChat
from eukhe.cli.output import echo
from eukhe.cli.printer import Printer
from eukhe.json_types import JsonObject
from eukhe.run.outcome import RunOutcome
from eukhe.run.session import run_to_end, turn
from eukhe.settings.run import Settings

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


REAL_MODEL = (
    "To run a real model: eukhe run --model openai/gpt-4.1 'your task' (with OPENAI_API_KEY set),\n"
    "or a local server: eukhe run --model vllm/NAME --base-url http://127.0.0.1:8000/v1 'your task'.\n"
    "Each eukhe run is durable: kill it at any moment and eukhe resume finishes it; "
    "eukhe sessions lists them.\n"
    "eukhe with no arguments (and the same --model, --base-url) opens the interactive agent."
)


def demo(printer: Printer, as_json: bool) -> RunOutcome:
    """The scripted task against the faux model, through the real SDK: its outcome."""
    echo(f"task: {TASK}", err=as_json)
    echo("model: the faux model on loopback, scripted to misbehave (docs/faux.md)", err=as_json)
    with tempfile.TemporaryDirectory(prefix="eukhe-demo-") as tmp, FauxServer(parse(SCRIPT)) as server:
        (Path(tmp) / "notes.txt").write_text(NOTES)
        provider = OpenAIChat("faux", base_url=server.url, timeout=30)
        settings = Settings(stream_idle_timeout_ms=1500)
        return run_to_end(turn(provider, "faux-model", TASK, settings, Path(tmp), printer))


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
