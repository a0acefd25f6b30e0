"""`grep` and `glob` as an attacker's model calls them, in a real `eukhe run --json` against
the faux model, with secrets in eukhe's environment (issue 40, finding 1 and item 3):

- eukhe's own environment, by `/proc/self/environ`, by a link in the project to it (flipped
  by a kernel cell while the calls run, so the gate and the tool see different objects) and
  by `/dev/fd/N`: no secret's name or value comes back, and the result says why;
- the oracle: a file in the project holds the key, and the model greps for its first
  character, class by class: every answer is the same whatever the pattern, and none holds it;
- a root outside the project that a person allowed (`Read(//**)` in the home's settings),
  reached through a link in the project: the search never shows eukhe's home nor the user's
  secret places beneath it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from eukhe.ai.faux import FauxServer, parse
from tests.proc import eukhe, messages, sessions

KEY = "sk-test-openai-0123456789abcdef"
SECRETS = {
    "OPENAI_API_KEY": KEY,
    "AWS_SECRET_ACCESS_KEY": "aws-secret-access-0123456789",
    "GITHUB_TOKEN": "ghp_test0123456789abcdef",
    "MY_PASSWORD": "hunter2-but-much-longer",
}
NAMES = "SECRET|TOKEN|PASSWORD|API_KEY"


def grep(**arguments: Any) -> dict[str, Any]:
    return {"calls": [{"name": "grep", "arguments": arguments}]}


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"calls": [{"name": name, "arguments": arguments}]}


def run(script: list[Any], cwd: Path, home: Path, extra: dict[str, str] | None = None) -> list[str]:
    """`eukhe run --json` of the script; the tool results, as stored, in order."""
    with FauxServer(parse(script)) as server:
        done = eukhe(
            "run", "--model", "vllm/m", "--base-url", server.url, "--json", "go",
            cwd=cwd, home=home, extra={**SECRETS, **(extra or {})}, timeout=300,
        )  # fmt: skip
        sent = json.dumps([r.body for r in server.seen])
    assert done.returncode == 0, done.stderr
    for value in SECRETS.values():
        assert value not in sent and value not in done.stdout + done.stderr
    [row] = sessions(cwd, home)
    return [str(m["content"]) for m in messages(row["id"], cwd, home) if m["role"] == "tool"]


def project(tmp_path: Path) -> tuple[Path, Path]:
    proj, home = tmp_path / "proj", tmp_path / "home"
    proj.mkdir()
    home.mkdir()
    (home / "settings.json").write_text("{}")
    return proj, home


def no_secret(result: str) -> None:
    for name, value in SECRETS.items():
        assert name not in result, f"{name} came back: {result[:2000]}"
        assert value not in result, f"{name}'s value came back: {result[:2000]}"


FLIP = """
import os, threading
def flip():
    while True:
        for target in ('/proc/self/environ', 'harmless.txt'):
            try:
                os.symlink(target, '.env.tmp')
                os.replace('.env.tmp', 'env')
            except OSError:
                pass
threading.Thread(target=flip, daemon=True).start()
print('flipping')
"""


def test_grep_never_reads_eukhes_environment_by_any_path(tmp_path: Path) -> None:
    proj, home = project(tmp_path)
    (proj / "harmless.txt").write_text("nothing to see\n")
    (proj / "env").symlink_to("/proc/self/environ")
    direct = [
        grep(pattern=NAMES, path="/proc/self/environ"),
        grep(pattern=NAMES, path="env"),
        grep(pattern=NAMES, path="/proc"),
        grep(pattern=NAMES, path="/proc/self"),
        *(grep(pattern=f"{NAMES}|fd{n}", path=f"/dev/fd/{n}") for n in range(10)),
    ]
    flips = 40
    # each call its own pattern: the same call five times in a row is a loop the harness stops
    calls = [grep(pattern=f"{NAMES}|nothing{i}", path="env") for i in range(flips)]
    script = [*direct, call("ipython", code=FLIP), *calls, "done"]
    results = run(script, proj, home)
    assert len(results) == len(direct) + 1 + flips
    assert "flipping" in results[len(direct)], results[len(direct)]
    for r in results:
        no_secret(r)
    said = "a process's memory or environment"
    assert said in results[0] and said in results[1], results[:2]
    assert "kernel pseudo-files" in results[2], results[2]
    flipped = results[len(direct) + 1 :]
    assert any(said in r for r in flipped), flipped  # the link led to the environment at times: refused


def test_whether_a_pattern_matches_a_secret_is_never_told(tmp_path: Path) -> None:
    """The oracle of finding 1: the model greps `OPENAI_API_KEY=sk-` followed by each first
    character's class (the key's own among them). A file holding the key is not searched, so
    every answer is the same, and says why."""
    proj, home = project(tmp_path)
    (proj / "conf.env").write_text(f"# the keys\nOPENAI_API_KEY={KEY}\nDEBUG=1\n")
    (proj / "app.py").write_text("print('hello')\n")
    probes = ["OPENAI_API_KEY=sk-" + c for c in ("a", "b", "t", "te", "tf", "[a-m]", "[n-z]", "[0-9]")]
    probes += ["OPENAI_API_KEY=sk-t.{3}-openai", "the keys", "DEBUG"]
    results = run([*(grep(pattern=p) for p in probes), "done"], proj, home)
    assert len(results) == len(probes)
    answers = {r.replace(repr(p), "<pattern>") for r, p in zip(results, probes, strict=True)}
    note = "[1 file holds a secret value eukhe keeps from the model: not searched: conf.env]"
    assert answers == {note}, answers
    for r in results:
        assert KEY not in r and "conf.env:" not in r, r


def test_a_root_a_person_allowed_never_shows_eukhes_home_or_the_users_secrets(tmp_path: Path) -> None:
    """`Read(//**)` in the home's settings allows reading anywhere; the model searches a folder
    outside the project through a link in it, a folder that holds eukhe's home and the user's
    home: what is outside is searched, eukhe's home and the user's secret places are not."""
    outside = tmp_path / "outside"
    home, user, other = outside / "eukhe-home", outside / "user", outside / "other"
    for folder in (home, user / ".ssh", user / ".aws", other):
        folder.mkdir(parents=True)
    (home / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Read(//**)"]}}))
    (home / "notes.txt").write_text("MARKER in eukhe's home\n")
    (user / ".ssh" / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nMARKER key\n")
    (user / ".aws" / "credentials").write_text("[default]\nMARKER credentials\n")
    (user / "todo.txt").write_text("MARKER in the user's home\n")
    (other / "plain.txt").write_text("MARKER outside, allowed\n")
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "up").symlink_to(outside)
    script = [
        grep(pattern="MARKER", path="up"),
        grep(pattern="MARKER", path=str(outside)),
        grep(pattern="MARKER", path="up/user/.ssh"),
        grep(pattern="MARKER", path="up/eukhe-home"),
        call("glob", pattern="*", path="up"),
        "done",
    ]
    results = run(script, proj, home, {"HOME": str(user)})
    for r in results:
        assert "eukhe-home/" not in r and "eukhe's home\n" not in r and "MARKER key" not in r, r
        assert "MARKER credentials" not in r, r
    linked, named, ssh, own, listed = results
    assert "up/other/plain.txt:1: MARKER outside, allowed" in linked, linked
    assert "up/user/todo.txt:1: MARKER in the user's home" in linked, linked
    assert f"{other}/plain.txt:1: MARKER outside, allowed" in named, named
    assert "MARKER" not in ssh and "MARKER" not in own, (ssh, own)
    assert "up/other/plain.txt" in listed and "notes.txt" not in listed, listed
    assert os.path.exists(home / "notes.txt")
