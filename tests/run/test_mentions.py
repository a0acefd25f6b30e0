"""`@path` in a prompt: the file attached after it, numbered and cut as `read` shows it; what
names no file left alone; what cannot be attached said; the agent's `@` completion."""

from __future__ import annotations

from pathlib import Path

import pytest

from eukhe.ai.faux import FauxServer, parse
from eukhe.run.mentions import MAX_MENTIONS, attach, mentioned
from eukhe.tools.base import Limits
from eukhe.ui.paths import Files
from tests.proc import eukhe


def test_a_mentioned_file_is_attached_numbered_after_the_prompt(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("x = 1\ny = 2\n")
    got = attach("why does @src/a.py fail?", tmp_path)
    assert got.prompt == 'why does @src/a.py fail?\n\n<file path="src/a.py">\n1\tx = 1\n2\ty = 2\n</file>'
    assert got.said == ("@src/a.py attached (15 characters)",)


def test_what_names_no_file_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("n\n")
    text = "mail me@example.com, use @dataclass, ask @alice; see @notes.txt."
    assert mentioned(text, tmp_path) == ["notes.txt"]  # the full stop after it is not the path's
    assert attach("no mention here", tmp_path).prompt == "no mention here"


def test_a_file_that_cannot_be_attached_says_why_and_big_ones_are_cut_as_read_cuts(tmp_path: Path) -> None:
    (tmp_path / "img.bin").write_bytes(b"\x89PNG\0\0")
    (tmp_path / "big.txt").write_text("".join(f"line {i}\n" for i in range(5000)))
    (tmp_path / "dir").mkdir()
    got = attach("@img.bin @big.txt @dir", tmp_path, Limits(read_max_output=2000))
    assert '<file path="img.bin" attached="no">\'img.bin\' is a binary file (6 bytes)' in got.prompt
    assert "[output capped at 2,000 characters: showed lines 1-" in got.prompt
    assert '<file path="dir" attached="no">\'dir\' is a directory' in got.prompt
    assert [line.split(" ")[1] for line in got.said] == ["not", "attached", "not"]


def test_at_most_ten_files_are_attached_and_the_rest_said(tmp_path: Path) -> None:
    names = [f"f{i}.txt" for i in range(MAX_MENTIONS + 2)]
    for n in names:
        (tmp_path / n).write_text(n)
    got = attach(" ".join("@" + n for n in names), tmp_path)
    assert got.prompt.count("<file path=") == MAX_MENTIONS
    assert got.said[-1] == f"only 10 files are attached to one prompt; not attached: {names[-2]}, {names[-1]}"


def test_eukhe_run_sends_the_mentioned_file(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    with FauxServer(parse(["It says alpha."])) as server:
        done = eukhe(
            "run", "--model", "vllm/m", "--base-url", server.url, "what does @a.txt say?", cwd=tmp_path
        )
        sent = server.seen[0].body["messages"][-1]["content"]
    assert done.returncode == 0, done.stderr
    assert sent == 'what does @a.txt say?\n\n<file path="a.txt">\n1\talpha\n</file>'
    assert "@a.txt attached (7 characters)" in done.stderr


def test_completion_offers_the_files_a_search_sees(tmp_path: Path) -> None:
    for name in ("src/main.py", "src/util.py", "docs/main.md", ".env", "build/out.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    (tmp_path / ".gitignore").write_text("build/\n")
    now = [0.0]
    files = Files(tmp_path, clock=lambda: now[0])
    assert files.complete("src/") == ["src/main.py", "src/util.py"]
    assert files.complete("main") == ["docs/main.md", "src/main.py"]  # held, not only started with
    assert files.complete("") == ["docs/main.md", "src/main.py", "src/util.py"]  # no .env, no build/
    (tmp_path / "src" / "new.py").write_text("")
    assert "src/new.py" not in files.complete("src/")  # the walk is reused a few seconds
    now[0] = 10.0
    assert "src/new.py" in files.complete("src/")


def test_a_templates_own_mention_attaches_nothing(tmp_path: Path) -> None:
    """The attack: a stranger's repository ships a prompt template that names the user's key;
    only what the person typed attaches."""
    (tmp_path / "secret.key").write_text("KEY\n")
    (tmp_path / "a.txt").write_text("alpha\n")
    prompts = tmp_path / ".eukhe" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "review.md").write_text("Review $1 and @secret.key\n")
    with FauxServer(parse(["ok"])) as server:
        done = eukhe("run", "--model", "vllm/m", "--base-url", server.url, "/review @a.txt", cwd=tmp_path)
        sent = server.seen[0].body["messages"][-1]["content"]
    assert done.returncode == 0, done.stderr
    assert '<file path="a.txt">' in sent and "KEY" not in sent


def test_a_strangers_link_out_of_the_project_is_never_attached(tmp_path: Path) -> None:
    """The attack: a cloned repository holds `notes.txt -> ~/.ssh/id_rsa` and `shot.png` linked
    to a private picture; the person types `@notes.txt`. Neither leaves the machine; a path the
    person writes outside the project (absolute, `~`, `..`) is still theirs to attach."""
    from eukhe.ai.image import ImageError
    from eukhe.run.mentions import with_images
    from tests.run.test_images import encoded

    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "id_rsa").write_text("PRIVATE KEY\n")
    (secret / "me.png").write_bytes(encoded("PNG", 2, 3))
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "notes.txt").symlink_to(secret / "id_rsa")
    (repo / "shot.png").symlink_to(secret / "me.png")
    got = attach("read @notes.txt and @shot.png", repo)
    assert "PRIVATE KEY" not in got.prompt and not got.images and not got.image_data
    assert (
        '<file path="notes.txt" attached="no">it is a link that leads outside the project</file>'
        in got.prompt
    )
    assert got.said == (
        f"@notes.txt not attached: it is a link that leads outside the project (to {secret / 'id_rsa'})",
        f"not attached: shot.png: it is a link that leads outside the project (to {secret / 'me.png'})",
    )
    with pytest.raises(ImageError, match=r"shot\.png: it is a link that leads outside the project"):
        with_images(attach("look", repo), ["shot.png"], repo)
    named = attach(f"read @{secret / 'id_rsa'} and @../secret/me.png", repo)  # written out by the person
    assert "PRIVATE KEY" in named.prompt and len(named.images) == 1


def test_an_attached_files_own_mentions_are_never_followed(tmp_path: Path) -> None:
    """A file the person attaches names more files (`@secret.txt`, another project's
    `prod.env`): its text is attached as it is, and nothing it names."""
    repo, other = tmp_path / "repo", tmp_path / "other"
    repo.mkdir()
    other.mkdir()
    (other / "prod.env").write_text("PROD SECRET\n")
    (repo / "secret.txt").write_text("PROJECT SECRET\n")
    (repo / "notes.md").write_text(f"see @secret.txt and @{other / 'prod.env'}\n")
    got = attach("read @notes.md", repo)
    assert f"see @secret.txt and @{other / 'prod.env'}" in got.prompt
    assert "SECRET" not in got.prompt
    assert len(got.said) == 1 and got.said[0].startswith("@notes.md attached (")


def test_text_the_person_did_not_type_attaches_only_inside_the_project(tmp_path: Path) -> None:
    """`given` (piped input, an editor's resource): a mention inside the project attaches, never
    through a link out of it; one outside is said and left unread; a pasted image path outside
    is no paste of the person's; what they typed attaches from wherever it is."""
    from tests.run.test_images import encoded

    repo, other = tmp_path / "repo", tmp_path / "other"
    repo.mkdir()
    other.mkdir()
    (other / "prod.env").write_text("PROD SECRET\n")
    (other / "shot.png").write_bytes(encoded("PNG", 2, 3))
    (repo / "a.txt").write_text("alpha\n")
    (repo / "link.txt").symlink_to(other / "prod.env")
    given = f"@a.txt @link.txt @{other / 'prod.env'} {other / 'shot.png'}"
    got = attach(f"why?\n\n{given}", repo, typed="why?", given=given)
    assert "PROD SECRET" not in got.prompt and not got.images
    assert '<file path="a.txt">\n1\talpha\n</file>' in got.prompt
    assert (
        '<file path="link.txt" attached="no">it is a link that leads outside the project</file>' in got.prompt
    )
    assert (
        f'<file path="{other / "prod.env"}" attached="no">not attached: the person did not type' in got.prompt
    )
    assert [line.split(" not attached: ")[0] for line in got.said[1:]] == [
        "@link.txt",
        f"@{other / 'prod.env'}",
    ]
    typed = attach(
        f"why @{other / 'prod.env'}?\n\n{given}", repo, typed=f"why @{other / 'prod.env'}?", given=given
    )
    assert "PROD SECRET" in typed.prompt  # the person's own mention: theirs to attach, as before
