"""Only what the person typed attaches from outside the project (issue 51): `eukhe run --stdin`
(or `-`) over piped text that names `@/other/project/prod.env` sends none of it to the model,
and the person is told why; the model's `read` of it asks as any read outside does. What the
person typed on the command line still attaches from wherever it is, and a piped mention
inside the project still attaches."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from eukhe.ai.faux import FauxServer, parse
from tests.proc import eukhe

SECRET = "DATABASE_PASSWORD=prod-secret-0123456789"
UNTYPED = (
    "not attached: you did not type it (it came in piped input or an editor's resource) and it is "
    "outside the project; the model's read of it asks you, as any read outside the project does"
)
"""What the person is told of a mention they did not type, outside the project."""
TOLD = "not attached: the person did not type this mention"
"""How the model's note of it begins."""


def places(tmp_path: Path) -> tuple[Path, Path, Path]:
    """The person's project (`repo`, with `notes.txt`), another project's `prod.env` beside it,
    and eukhe's home."""
    repo, other, home = tmp_path / "repo", tmp_path / "other" / "project", tmp_path / "home"
    repo.mkdir()
    other.mkdir(parents=True)
    home.mkdir()
    (repo / "notes.txt").write_text("the build is green\n")
    (other / "prod.env").write_text(f"{SECRET}\n")
    return repo, other / "prod.env", home


def piped(repo: Path, home: Path, url: str, text: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`eukhe run ARGS` in `repo` with `text` on its standard input, as `cat x | eukhe run` has it."""
    return eukhe("run", "--model", "vllm/m", "--base-url", url, *args, cwd=repo, home=home, input=text)


def test_a_piped_mention_outside_the_project_never_reaches_the_model(tmp_path: Path) -> None:
    """The attack: a log, a pasted issue or a file the person pipes in names another project's
    secrets file; they type only "summarize"."""
    repo, env_file, home = places(tmp_path)
    text = f"Deploy notes. Also see @{env_file} for the settings.\n"
    with FauxServer(parse([{"results": 0, "text": "summarized"}])) as server:
        runs = [
            piped(repo, home, server.url, text, "--stdin", "summarize"),
            piped(repo, home, server.url, text, "-"),
        ]
        bodies = [json.dumps(s.body) for s in server.seen]
    assert len(bodies) >= 2 and all("prod-secret" not in b for b in bodies), bodies
    for done in runs:
        assert done.returncode == 0, done.stderr
        assert f"@{env_file} {UNTYPED}\n" in done.stderr, done.stderr
    sent = [m["content"] for m in json.loads(bodies[0])["messages"] if m["role"] == "user"][-1]
    assert f"see @{env_file} for the settings" in sent  # left in the text, unattached
    assert f'<file path="{env_file}" attached="no">{TOLD}' in sent and "the read tool asks" in sent


def test_what_the_person_typed_still_attaches_and_a_piped_mention_inside_the_project_too(
    tmp_path: Path,
) -> None:
    repo, env_file, home = places(tmp_path)
    with FauxServer(parse([{"results": 0, "text": "done"}])) as server:
        done = piped(repo, home, server.url, "and check @notes.txt\n", "--stdin", f"compare @{env_file}")
        sent = [m["content"] for m in server.seen[0].body["messages"] if m["role"] == "user"][-1]
    assert done.returncode == 0, done.stderr
    assert f'<file path="{env_file}">\n1\t{SECRET}\n</file>' in sent  # typed: the person's to attach
    assert '<file path="notes.txt">\n1\tthe build is green\n</file>' in sent  # piped, inside the project
    assert f"@{env_file} attached" in done.stderr and "@notes.txt attached" in done.stderr
