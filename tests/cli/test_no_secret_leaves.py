"""Nothing secret leaves, whatever the path (issue 40, item 5), as a property of a real
`eukhe run` against the faux model: the secret values this process knows (secret-looking
environment variables, a provider's key variable, a provider's header in the home's
settings and its bearer token, an MCP server's env) are placed at random in the prompt, in
a file the model reads, in a tool's result (bash echoing a literal), in the model's
tool-call arguments and in its answer. None of them, in any spelling JSON gives it, reaches
a request the model got, a row of the home's store, an `--events` line, the transcript
(`eukhe session show --json`) or what the run printed; and the tool still got the
arguments the model sent (the file `write` made holds them)."""

from __future__ import annotations

import json
import sqlite3
import string
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from eukhe.ai.faux import FauxServer, parse
from tests.proc import eukhe, show

ALPHABET = string.ascii_letters + string.digits + '"\\-_.+/=:é'
"""What a secret is made of: JSON escapes `"`, `\\` and (ASCII-only) `é`, so a value must be
taken out in each spelling. No quote or space: a value goes into a shell's single quotes
and a header's token. The provider's key is ASCII: it is sent in a header."""

NAMES = ("GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "LAB_ACCESS", "header", "mcp")
"""Where each secret comes from: three variables (LAB_ACCESS only because it is the provider's
`apiKeyEnv`), a provider's Authorization header (`Bearer <token>`, only the token placed), an
MCP server's env."""

PLACES = ("prompt", "file", "echo", "write", "answer")

ASCII = ALPHABET.replace("é", "")
secret_values = st.tuples(
    *(st.text(ASCII if n == "LAB_ACCESS" else ALPHABET, min_size=8, max_size=20) for n in NAMES)
).map(lambda vs: [f"zq{i}{v}" for i, v in enumerate(vs)])  # distinct, and found in no other text
placements = st.fixed_dictionaries(
    {p: st.lists(st.integers(0, len(NAMES) - 1), unique=True, max_size=3) for p in PLACES}
)


def home_with(home: Path, values: list[str]) -> dict[str, str]:
    """The home's settings holding the header and the MCP server's env; the environment."""
    home.mkdir()
    settings = {
        "providers": {
            "vllm": {"apiKeyEnv": "LAB_ACCESS", "headers": {"Authorization": f"Bearer {values[3]}"}}
        },
        # a server that cannot start: its env is still what this process knows
        "mcpServers": {"vault": {"command": "/nonexistent/vault-mcp", "env": {"VAULT_TOKEN": values[4]}}},
        "mcp": {"startupGateMs": 0},
    }
    (home / "settings.json").write_text(json.dumps(settings))
    return {"GITHUB_TOKEN": values[0], "AWS_SECRET_ACCESS_KEY": values[1], "LAB_ACCESS": values[2]}


def script(values: list[str], placed: dict[str, list[int]]) -> list[Any]:
    """The model: reads the file, echoes its literals, writes its own, then answers."""
    words = {p: " ".join(values[i] for i in placed[p]) for p in PLACES}
    echo = " ".join(f"'{values[i]}'" for i in placed["echo"]) or "'nothing'"
    calls = [
        {"name": "read", "arguments": {"path": "notes.txt"}},
        {"name": "bash", "arguments": {"command": f"printf '%s\\n' {echo}"}},
        {"name": "write", "arguments": {"path": "out.txt", "content": f"wrote {words['write']}"}},
    ]
    return [{"calls": [c]} for c in calls] + [{"text": f"done {words['answer']}", "chunks": 7}]


def spellings(value: str) -> set[str]:
    """The value, and as JSON escapes it inside a string once or twice (a call's raw
    arguments in an event, a row's JSON inside JSON)."""
    once = {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}
    return once | {json.dumps(s, ensure_ascii=a)[1:-1] for s in once for a in (True, False)}


def store_text(home: Path) -> str:
    """Every row of every table of the home's store, as text."""
    db = sqlite3.connect(home / "eukhe.sqlite")
    try:
        tables = [t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        rows = [
            f"{t}: " + "\t".join(_text(c) for c in row)
            for t in tables
            for row in db.execute(f'SELECT * FROM "{t}"')
        ]
    finally:
        db.close()
    return "\n".join(rows)


def _text(cell: Any) -> str:
    return cell.decode("utf-8", "replace") if isinstance(cell, bytes) else str(cell)


# each example is a process and two more: a dozen, and no shrinking (a failing example is
# shown as drawn; shrinking one would start a hundred runs)
@settings(
    max_examples=10,
    deadline=None,
    derandomize=True,
    phases=(Phase.explicit, Phase.generate),
    suppress_health_check=list(HealthCheck),
)
@given(values=secret_values, placed=placements)
def test_no_secret_value_reaches_the_wire_the_store_the_events_or_the_transcript(
    values: list[str], placed: dict[str, list[int]]
) -> None:
    with tempfile.TemporaryDirectory(prefix="eukhe-secrets-") as tmp:
        cwd = Path(tmp)
        home = cwd / "home"
        environ = home_with(home, values)
        (cwd / "notes.txt").write_text("notes: " + " ".join(values[i] for i in placed["file"]) + "\n")
        prompt = "go " + " ".join(values[i] for i in placed["prompt"])
        with FauxServer(parse(script(values, placed))) as server:
            done = eukhe(
                "run", "--model", "vllm/m", "--base-url", server.url, "--events", prompt,
                cwd=cwd, home=home, extra=environ,
            )  # fmt: skip
            wire = [r.body for r in server.seen]
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        session = next(e["run"] for e in events if e.get("type") == "run").rpartition("/")[0]
        places = {
            "the wire": json.dumps(wire) + json.dumps(wire, ensure_ascii=False),
            "the store": store_text(home),
            "the events and what the run printed": done.stdout + done.stderr,
            "the transcript": json.dumps(show(session, cwd, home), ensure_ascii=False),
        }
        assert len(wire) == 4  # every round ran: read, bash, write, the answer
        for n, value in enumerate(values):
            for where, text in places.items():
                leaked = [s for s in spellings(value) if s in text]
                assert not leaked, f"{NAMES[n]}'s value {value!r} reached {where}: {leaked}"
        # the tool itself ran the call as the model sent it
        written = (cwd / "out.txt").read_text()
        assert written == "wrote " + " ".join(values[i] for i in placed["write"]), written
