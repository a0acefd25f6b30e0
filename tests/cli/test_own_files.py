"""What eukhe reads for itself goes through the one boundary (issue 40, item 4 and finding 2),
as attacks: a real `eukhe run` against the faux model, secrets in its environment, a user's
home holding `.aws/credentials`, and a cloned repository whose instruction files, skills,
prompt templates, mentioned files and images are links out of it (into `/proc/self/environ`,
the user's secret places, their private notes), or a FIFO and `/dev/zero`. No secret, no
line of the credentials and nothing of the process's environment reaches any request to the
model, the store or the run's output; the run says why each file was not read, with where
its link led. A link a race flips while a mention or an image is read never lands outside.
And the user's own home-level `AGENTS.md` may still be a link into their dotfiles."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from eukhe.ai.faux import FauxServer, parse
from eukhe.ai.image import ImageError
from eukhe.run.images import read_image
from eukhe.run.mentions import attach
from tests.proc import eukhe, start, until
from tests.run.test_images import encoded
from tests.user_secrets import MARK, SECRETS

KEY_ID = "AKIAOWNFILESTEST0001"
CREDENTIAL = "creds-file-secret-0123456789"
CREDENTIALS = f"[default]\naws_access_key_id = {KEY_ID}\naws_secret_access_key = {CREDENTIAL}\n"
PLAN = "PLAN-SECRET-0123456789"
"""In the user's private notes, outside any project."""
NEVER = [*SECRETS, *SECRETS.values(), KEY_ID, CREDENTIAL, *MARK.values(), PLAN]
"""What must reach no request, no row of the store and no line the run shows."""


def user_home(tmp_path: Path) -> Path:
    """The user's home: `.aws/credentials`, private notes, a repository they cloned (`repo`,
    a git one with a `docs` folder), and eukhe's home beside them."""
    user = tmp_path / "user"
    (user / ".aws").mkdir(parents=True)
    (user / ".aws" / "credentials").write_text(CREDENTIALS)
    (user / "private" / "skills" / "deploy").mkdir(parents=True)
    (user / "private" / "plan.md").write_text(f"---\ndescription: my plan\n---\nThe launch code is {PLAN}.\n")
    (user / "private" / "skills" / "deploy" / "SKILL.md").write_text(
        f"---\ndescription: deploy it\n---\nDeploy with {PLAN}.\n"
    )
    (user / "repo" / ".git").mkdir(parents=True)
    (user / "repo" / "docs").mkdir()
    (user / "repo" / "README.md").write_text("# A project\n")
    (tmp_path / "eukhe").mkdir()
    return user


def run(cwd: Path, tmp_path: Path, *args: str, script: list[Any] | None = None) -> tuple[Any, list[str]]:
    """`eukhe run ARGS` in `cwd` as the user of `user_home`; the run and each request body sent.
    Its own `/proc/self/environ` holds the secrets and the mark (`tests/user_secrets.py`; the
    attacks on the environment need it: `test_a_runs_own_environ_holds_the_secrets`)."""
    with FauxServer(parse(script or ["ok"])) as server:
        done = eukhe(
            "run", "--model", "vllm/m", "--base-url", server.url, *args,
            cwd=cwd, home=tmp_path / "eukhe", extra={**SECRETS, **MARK, "HOME": str(tmp_path / "user")},
        )  # fmt: skip
        bodies = [json.dumps(r.body) for r in server.seen]
    return done, bodies


def stored(home: Path) -> str:
    """Every byte of every file eukhe's home holds (the store among them), as text; not what
    its links lead to (the test's own `AGENTS.md` link)."""
    files = [p for p in sorted(home.rglob("*")) if p.is_file() and not p.is_symlink()]
    return "\n".join(p.read_bytes().decode("utf-8", "replace") for p in files)


def assert_nothing_secret(done: Any, bodies: list[str], tmp_path: Path) -> None:
    for where, text in (
        *((f"request {i}", b) for i, b in enumerate(bodies)),
        ("the store", stored(tmp_path / "eukhe")),
        ("the output", done.stdout + done.stderr),
    ):
        for value in NEVER:
            assert value not in text, f"{value!r} reached {where}: {text[:3000]}"


def said(done: Any) -> str:
    return str(done.stdout + done.stderr)


def test_a_runs_own_environ_holds_the_secrets(tmp_path: Path) -> None:
    """The attacks' premise: what a link to `/proc/self/environ` leads to, in the run that
    opens it, holds every secret and the mark; were it empty, they would prove nothing."""
    user = user_home(tmp_path)
    gate = tmp_path / "gate"
    script = [{"text": "ok", "stall": 60, "stallUntil": str(gate)}]
    with FauxServer(parse(script)) as server:
        p = start(
            "run", "--model", "vllm/m", "--base-url", server.url, "hi",
            cwd=user / "repo", home=tmp_path / "eukhe", extra={**SECRETS, **MARK, "HOME": str(user)},
        )  # fmt: skip
        try:
            until("the run's request", lambda: bool(server.seen))
            environ = Path(f"/proc/{p.pid}/environ").read_bytes().decode()
        finally:
            gate.touch()
            _, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    for value in (*SECRETS.values(), *MARK.values()):
        assert value in environ, f"{value!r} is not in the run's own /proc/self/environ"


@pytest.mark.parametrize("name", ["AGENTS.md", "CLAUDE.md"])
def test_a_repositorys_instruction_files_linked_out_never_reach_the_model(tmp_path: Path, name: str) -> None:
    """Finding 2: the repository ships `AGENTS.md -> /proc/self/environ` and `docs/AGENTS.md
    -> ../../.aws/credentials` (likewise `CLAUDE.md`); the user runs eukhe in it, and in docs/."""
    user = user_home(tmp_path)
    repo = user / "repo"
    (repo / name).symlink_to("/proc/self/environ")
    (repo / "docs" / name).symlink_to("../../.aws/credentials")
    for cwd in (repo, repo / "docs"):
        done, bodies = run(cwd, tmp_path, "summarize this repo")
        assert done.returncode == 0, done.stderr
        assert bodies and "summarize this repo" in bodies[0]
        assert_nothing_secret(done, bodies, tmp_path)
        assert (
            f"instruction file {repo / name}: not loaded: it is a link to a process's memory or "
            "environment (/proc/<pid>/), which eukhe never reads for a prompt (to /proc/"
        ) in said(done)
    assert (
        f"instruction file {repo / 'docs' / name}: not loaded: it is a link to one of the user's "
        f"secret places, which eukhe never reads for a prompt (to {user / '.aws' / 'credentials'})"
    ) in said(done)


def test_a_link_out_of_the_repository_is_refused_with_where_it_leads(tmp_path: Path) -> None:
    user = user_home(tmp_path)
    repo = user / "repo"
    (repo / "docs" / "AGENTS.md").symlink_to("../../private/plan.md")  # no secret place, still outside
    done, bodies = run(repo / "docs", tmp_path, "hi")
    assert done.returncode == 0, done.stderr
    assert_nothing_secret(done, bodies, tmp_path)
    assert (
        f"instruction file {repo / 'docs' / 'AGENTS.md'}: not loaded: it is a link that leads outside "
        f"the repository (to {user / 'private' / 'plan.md'})"
    ) in said(done)


def test_a_fifo_or_dev_zero_as_agents_md_is_refused_without_waiting(tmp_path: Path) -> None:
    """What held must keep holding: a FIFO with no writer and `/dev/zero` as instruction files
    end in no hang (the run's deadline is the test's), and the run says why they were not read."""
    user = user_home(tmp_path)
    repo = user / "repo"
    os.mkfifo(repo / "AGENTS.md")
    (repo / "docs" / "AGENTS.md").symlink_to("/dev/zero")
    done, bodies = run(repo / "docs", tmp_path, "hi")
    assert done.returncode == 0, done.stderr
    assert len(bodies) == 1
    assert (
        f"instruction file {repo / 'AGENTS.md'}: not loaded: it is a FIFO (named pipe), not a regular file"
    ) in said(done)
    assert (
        f"instruction file {repo / 'docs' / 'AGENTS.md'}: not loaded: it is a link to a kernel pseudo-file "
        "(/proc, /sys, /dev), which eukhe never reads for a prompt (to /dev/zero)"
    ) in said(done)


def test_the_users_own_agents_md_may_link_into_their_dotfiles_but_not_to_a_secret(tmp_path: Path) -> None:
    """The home's `AGENTS.md` is the user's own: a link into their dotfiles loads; one into a
    secret place or `/proc` does not, home or not."""
    user = user_home(tmp_path)
    (user / "dotfiles").mkdir()
    (user / "dotfiles" / "AGENTS.md").write_text("Answer tersely.\n")
    home_file = tmp_path / "eukhe" / "AGENTS.md"
    home_file.symlink_to(user / "dotfiles" / "AGENTS.md")
    done, bodies = run(user / "repo", tmp_path, "hi")
    assert done.returncode == 0, done.stderr
    assert "Answer tersely." in bodies[0]
    home_file.unlink()
    home_file.symlink_to(user / ".aws" / "credentials")
    done, bodies = run(user / "repo", tmp_path, "hi")
    assert done.returncode == 0, done.stderr
    assert_nothing_secret(done, bodies, tmp_path)
    assert (
        f"instruction file {home_file}: not loaded: it is a link to one of the user's secret places"
        in said(done)
    )


def test_a_project_skill_linked_out_is_never_loaded_nor_invoked(tmp_path: Path) -> None:
    """The repository's `.eukhe/skills/notes/SKILL.md` links to the user's private notes (which
    have a skill's frontmatter), and `.eukhe/skills/theirs` to a private skills folder; the
    person types `/skill:notes`, `/skill:deploy`, and a plain prompt."""
    user = user_home(tmp_path)
    repo = user / "repo"
    skills = repo / ".eukhe" / "skills"
    (skills / "notes").mkdir(parents=True)
    (skills / "notes" / "SKILL.md").symlink_to(user / "private" / "plan.md")
    (skills / "theirs").symlink_to(user / "private" / "skills")
    (skills / "environ").mkdir()
    (skills / "environ" / "SKILL.md").symlink_to("/proc/self/environ")
    for prompt in ("/skill:notes go", "/skill:deploy go"):
        done, bodies = run(repo, tmp_path, prompt)
        assert done.returncode == 2 and bodies == [], done.stderr
        assert "no skill" in done.stderr
        assert_nothing_secret(done, bodies, tmp_path)
    done, bodies = run(repo, tmp_path, "go")
    assert done.returncode == 0, done.stderr
    assert_nothing_secret(done, bodies, tmp_path)
    assert "my plan" not in bodies[0] and "deploy it" not in bodies[0]
    out = said(done)
    assert (
        f"skill {skills / 'notes' / 'SKILL.md'}: unreadable file: it is a link that leads outside the "
        f"project (to {user / 'private' / 'plan.md'})"
    ) in out
    assert (
        f"skill {skills / 'theirs'}: unreadable entry: it is a link that leads outside the project "
        f"(to {user / 'private' / 'skills'})"
    ) in out
    assert f"skill {skills / 'environ' / 'SKILL.md'}: unreadable file: it is a link to a process's" in out


def test_a_project_prompt_template_linked_out_is_never_expanded(tmp_path: Path) -> None:
    """The repository's `.eukhe/prompts/review.md -> ~/.aws/credentials` (a template needs no
    frontmatter) and `env.md -> /proc/self/environ`; the person types `/review` and `/env`."""
    user = user_home(tmp_path)
    repo = user / "repo"
    prompts = repo / ".eukhe" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "review.md").symlink_to(user / ".aws" / "credentials")
    (prompts / "env.md").symlink_to("/proc/self/environ")
    for prompt in ("/review", "/env"):
        done, bodies = run(repo, tmp_path, prompt)
        assert done.returncode == 0, done.stderr
        assert_nothing_secret(done, bodies, tmp_path)
        assert json.loads(bodies[0])["messages"][-1]["content"] == prompt  # sent as typed: no template
    out = said(done)
    assert (
        f"prompt {prompts / 'review.md'}: unreadable file: it is a link to one of the user's secret places, "
        f"which eukhe never reads for a prompt (to {user / '.aws' / 'credentials'})"
    ) in out
    assert f"prompt {prompts / 'env.md'}: unreadable file: it is a link to a process's memory" in out


def test_mentions_never_attach_a_link_out_a_pseudo_file_or_a_secret_place(tmp_path: Path) -> None:
    """`@notes.txt -> ~/.aws/credentials` and `@env.txt -> /proc/self/environ` in the
    repository, and `@/proc/self/environ`, `@~/.aws/credentials` written out: none is attached;
    the model sees why, the person sees where each led."""
    user = user_home(tmp_path)
    repo = user / "repo"
    (repo / "notes.txt").symlink_to(user / ".aws" / "credentials")
    (repo / "env.txt").symlink_to("/proc/self/environ")
    (repo / "plan.txt").symlink_to("../private/plan.md")
    prompt = "read @notes.txt @env.txt @plan.txt @/proc/self/environ @~/.aws/credentials"
    done, bodies = run(repo, tmp_path, prompt)
    assert done.returncode == 0, done.stderr
    assert_nothing_secret(done, bodies, tmp_path)
    sent = json.loads(bodies[0])["messages"][-1]["content"]
    assert '<file path="plan.txt" attached="no">it is a link that leads outside the project</file>' in sent
    assert str(user) not in sent  # where a link led is the person's to see, not the model's
    out = said(done)
    assert (
        "@notes.txt not attached: it is a link to one of the user's secret places, which eukhe never reads "
        f"for a prompt (to {user / '.aws' / 'credentials'})"
    ) in out
    assert "@env.txt not attached: it is a link to a process's memory or environment" in out
    assert (
        f"@plan.txt not attached: it is a link that leads outside the project (to {user / 'private'}" in out
    )
    assert (
        "@/proc/self/environ not attached: it is a link to a process's memory or environment (/proc/<pid>/)"
    ) in out  # /proc/self is itself a link, to the process's own folder
    assert "@~/.aws/credentials not attached: it is one of the user's secret places" in out


def test_an_image_linked_out_or_in_a_secret_place_is_never_attached(tmp_path: Path) -> None:
    user = user_home(tmp_path)
    repo = user / "repo"
    (user / "private" / "me.png").write_bytes(encoded("PNG", 7, 5))
    (user / ".ssh").mkdir()
    (user / ".ssh" / "face.png").write_bytes(encoded("PNG", 9, 9))
    (repo / "shot.png").symlink_to(user / "private" / "me.png")
    (tmp_path / "eukhe" / "settings.json").write_text(
        json.dumps({"models": {"vllm/m": {"input": ["text", "image"]}}})
    )
    done, bodies = run(repo, tmp_path, "look at @shot.png")
    assert done.returncode == 0, done.stderr
    assert "image_url" not in bodies[0] and "7x5" not in bodies[0]
    assert (
        "not attached: shot.png: it is a link that leads outside the project "
        f"(to {user / 'private' / 'me.png'})"
    ) in said(done)
    done, bodies = run(repo, tmp_path, "--image", "~/.ssh/face.png", "look")
    assert done.returncode == 2 and bodies == [], done.stderr
    assert "~/.ssh/face.png: it is one of the user's secret places, which eukhe never reads" in done.stderr


@pytest.fixture
def flipping(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """A repository whose `notes.txt` and `shot.png` a thread flips, as fast as it can, between
    a file inside and one outside (a link replaced atomically, as a cell of the kernel could)."""
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    repo.mkdir()
    outside.mkdir()
    (repo / "inside.txt").write_text("inside\n")
    (outside / "secret.txt").write_text(f"{PLAN}\n")
    (repo / "inside.png").write_bytes(encoded("PNG", 2, 2))
    (outside / "secret.png").write_bytes(encoded("PNG", 3, 3))
    stop = threading.Event()

    def flip() -> None:
        pairs = [("notes.txt", repo / "inside.txt", outside / "secret.txt")]
        pairs.append(("shot.png", repo / "inside.png", outside / "secret.png"))
        n = 0
        while not stop.is_set():
            for name, inside, out in pairs:
                tmp = repo / f".{name}.flip"
                os.symlink(inside if n % 2 else out, tmp)
                os.replace(tmp, repo / name)
            n += 1

    for name, inside in (("notes.txt", "inside.txt"), ("shot.png", "inside.png")):
        os.symlink(repo / inside, repo / name)
    t = threading.Thread(target=flip, daemon=True)
    t.start()
    try:
        yield repo, outside
    finally:
        stop.set()
        t.join(10)


def test_a_link_flipped_while_a_mention_or_an_image_is_read_never_attaches_outside(
    flipping: tuple[Path, Path],
) -> None:
    """The decision is on the object opened: a name checked and then opened again is two
    objects when a link flips between them."""
    repo, _ = flipping
    secret_png = encoded("PNG", 3, 3)
    refused = read = 0
    for _ in range(400):
        got = attach("@notes.txt", repo)
        assert PLAN not in got.prompt
        try:
            _, data = read_image("shot.png", repo)
        except ImageError as e:
            assert "leads outside the project" in str(e)
            refused += 1
            continue
        assert data != secret_png
        read += 1
    assert read and refused  # both sides of the flip were met


def test_what_a_projects_own_instruction_file_or_mention_holds_passes_the_redactor(tmp_path: Path) -> None:
    """A file inside the project is read, but a secret value the process knows in it is taken
    out of every request, the store and the output (the run's redaction, `run.secrets`): in
    the system prompt (AGENTS.md) and in the prompt (`@AGENTS.md`)."""
    user = user_home(tmp_path)
    repo = user / "repo"
    held = [SECRETS["OPENAI_API_KEY"], SECRETS["GITHUB_TOKEN"]]
    (repo / "AGENTS.md").write_text(f"Deploy with {held[0]} and {held[1]}.\n")
    done, bodies = run(repo, tmp_path, "what does @AGENTS.md say?")
    assert done.returncode == 0, done.stderr
    system, user_message = (m["content"] for m in json.loads(bodies[0])["messages"][:2])
    assert "Deploy with [redacted] and [redacted]." in system
    assert "Deploy with [redacted] and [redacted]." in user_message
    assert_nothing_secret(done, bodies, tmp_path)
