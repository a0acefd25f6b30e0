"""Random and hostile trees: every candidate is loaded or diagnosed, never both; no
load raises or hangs (each one runs under a deadline).

Each seed writes a tree of skills and prompt templates mixing good files with
random bytes as `SKILL.md`, broken YAML (unclosed, alias bombs, deep nesting,
unknown tags), frontmatter that never closes, huge files, unreadable files and
folders, FIFOs and folders named `SKILL.md`, broken links, link loops, names
that are not UTF-8, deep folders, and ignore files full of junk.
"""

from __future__ import annotations

import concurrent.futures
import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from eukhe.skills import Prompts, Skills, load_prompts, load_skills
from tests.skills.helpers import write

DEADLINE = 60.0
"""Seconds one load may take before the test calls it a hang."""

IGNORE_DIAGNOSTICS = ("unreadable ignore file", "non-glob ignore rule")

BROKEN_YAML = [
    "name: [unclosed\ndescription: x\n",
    "description: {a: 1\n",
    "\tdescription: tab indented\n",
    "description: x\n  - bad indent\n",
    "a: &a [1, 2]\nb: &b [*a, *a, *a, *a]\nc: &c [*b, *b, *b, *b]\nd: [*c, *c, *c, *c]\ndescription: bomb\n",
    "? [unhashable]\n: key\n",
    "description: !!python/object/apply:os.system ['true']\n",
    "description: *undefined\n",
    "date: 2001-13-45\n",
    "[" * 3000 + "\n",
    "- just\n- a list\n",
    "plain scalar\n",
    "description: x\ndescription: twice\n",
    "\x00\x01: \x02\n",
    "name: 12\ndescription: 3.5\ndisable-model-invocation: maybe\n",
]

JUNK_RULES = [
    "*",
    "**",
    "**/",
    "\\",
    "!",
    "[z-a]",
    "[",
    "!*",
    "/",
    "//",
    "a/**/b",
    "#x",
    "",
    " ",
    "\\\\",
    "?*[!",
]


def junk_text(rng: random.Random) -> str:
    lines = []
    for _ in range(rng.randint(1, 12)):
        if rng.random() < 0.5:
            lines.append(rng.choice(JUNK_RULES))
        else:
            lines.append("".join(chr(rng.randint(1, 0x2FF)) for _ in range(rng.randint(0, 12))))
    return "\n".join(lines)


def skill_body(rng: random.Random, folder: Path) -> str:
    own = folder.name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    name = own if rng.random() < 0.7 else rng.choice(["x", "Bad Name", "a" * 70, "ok-name"])
    return f"---\nname: {name}\ndescription: {rng.choice(['fine', '', 'd' * 1100])}\n---\nbody\n"


class Tree:
    """One seed's hostile tree under `root`, with every SKILL.md entry it made."""

    def __init__(self, roots: list[Path], rng: random.Random, deny: Callable[[Path], None]) -> None:
        self.roots, self.root, self.rng, self.deny = roots, roots[0], rng, deny
        self.skill_files: list[Path] = []
        self.templates: list[Path] = []
        self.made = 0

    def folder(self, parent: Path) -> Path:
        rng = self.rng
        if rng.random() < 0.08:
            self.made += 1
            raw = os.fsencode(parent) + b"/n\xff\xfe" + str(self.made).encode()
            os.makedirs(raw)
            return Path(os.fsdecode(raw))
        self.made += 1
        name = rng.choice(["s", "tools", "pdf", "a-b", "x1", "deep", "Mixed_Case"]) + str(self.made)
        path = parent / name
        path.mkdir(parents=True)
        return path

    def skill(self, folder: Path) -> None:
        rng = self.rng
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "SKILL.md"
        if os.path.lexists(path):
            return
        kind = rng.randrange(13)
        if kind == 0:
            write(path, skill_body(rng, folder))
        elif kind == 1:
            write(path, rng.randbytes(rng.randint(0, 4096)))
        elif kind == 2:
            write(path, "---\n" + rng.choice(BROKEN_YAML) + "---\nbody\n")
        elif kind == 3:
            write(path, "---\ndescription: never closed\n" + "x: y\n" * rng.randint(0, 20000))
        elif kind == 4:
            big = rng.randint(1 << 20, 3 << 20)
            head = skill_body(rng, folder) if rng.random() < 0.5 else "---\n"
            write(path, head + "z" * big)
        elif kind == 5:
            write(path, skill_body(rng, folder))
            self.deny(path)
        elif kind == 6:
            path.mkdir()
        elif kind == 7:
            os.mkfifo(path)
        elif kind == 8:
            os.symlink("nowhere/SKILL.md", path)
        elif kind == 9:
            os.symlink("SKILL.md", path)
        elif kind == 10:
            write(path, b"\xef\xbb\xbf" + skill_body(rng, folder).encode())
        elif kind == 11:
            write(path, "no frontmatter at all\n")
        else:
            write(path, "---\n---\n")
        self.skill_files.append(path)

    def grow(self, parent: Path, depth: int) -> None:
        rng = self.rng
        for _ in range(rng.randint(1, 4)):
            folder = self.folder(parent)
            roll = rng.random()
            if roll < 0.45:
                self.skill(folder)
            elif roll < 0.6 and depth < 4:
                self.grow(folder, depth + 1)
            elif roll < 0.65:
                chain = folder
                for i in range(rng.randint(5, 40)):
                    chain = chain / f"d{i}"
                chain.mkdir(parents=True)
                self.skill(chain)
            elif roll < 0.7:
                self.skill(folder / "child")
                self.deny(folder)
            elif roll < 0.8:
                os.symlink(os.path.relpath(self.root, folder), folder / "up")
                if rng.random() < 0.5:
                    os.symlink("self", folder / "self")
            elif roll < 0.9:
                write(folder / rng.choice([".gitignore", ".ignore", ".fdignore"]), junk_text(rng))
                self.skill(folder / "under")
            else:
                ignore = write(folder / ".gitignore", junk_text(rng))
                if rng.random() < 0.5:
                    self.deny(ignore)
                self.skill(folder / "beside")
        if rng.random() < 0.2:
            write(parent / ".ignore", rng.randbytes(rng.randint(0, 300)))

    def prompts(self, folder: Path) -> None:
        rng = self.rng
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(rng.randint(0, 8)):
            path = folder / f"{rng.choice(['review', 'fix', 'p'])}{rng.randint(0, 3)}-{i}.md"
            kind = rng.randrange(7)
            if kind == 0:
                write(path, rng.randbytes(rng.randint(0, 500)))
            elif kind == 1:
                write(path, "---\n" + rng.choice(BROKEN_YAML) + "---\nbody $1\n")
            elif kind == 2:
                write(path, "body")
                self.deny(path)
            elif kind == 3:
                os.mkfifo(path)
            elif kind == 4:
                os.symlink(path.name, path)
            else:
                write(path, f"---\ndescription: t{i}\n---\nDo $@\n")
            self.templates.append(path)


def within_deadline(load: Callable[[], Any]) -> Any:
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    try:
        return pool.submit(load).result(timeout=DEADLINE)
    except concurrent.futures.TimeoutError:
        pytest.fail(f"a load did not end within {DEADLINE:.0f} s")
    finally:
        pool.shutdown(wait=False)


def real(path: str | Path) -> str:
    return os.path.realpath(path)


def candidates(diagnostics: Any) -> set[str]:
    return {real(d.path) for d in diagnostics if not d.error.startswith(IGNORE_DIAGNOSTICS)}


def check_skills(tree: Tree, got: Skills) -> None:
    loaded = {real(s.path) for s in got.skills}
    diagnosed = candidates(got.diagnostics)
    assert not loaded & diagnosed, "a candidate both loaded and diagnosed"
    assert len(loaded) == len(got.skills) == got.tally.loaded
    assert got.tally.loaded + got.tally.diagnosed == got.tally.candidates
    ignored = {real(p) for p in got.ignored}
    for path in tree.skill_files:
        if real(path) in loaded | diagnosed | ignored:
            continue
        above = [path.parent, *path.parent.parents]
        root = next(r for r in tree.roots if r in above)
        above = above[: above.index(root)]
        passed_over = any(
            real(a) in diagnosed | ignored
            or a.name.startswith(".")
            or (a != path.parent and os.path.lexists(a / "SKILL.md"))
            for a in above
        )
        assert passed_over, f"{path}: neither loaded, diagnosed nor passed over"


def check_prompts(tree: Tree, got: Prompts) -> None:
    loaded = {real(t.path) for t in got.prompts}
    diagnosed = candidates(got.diagnostics)
    assert not loaded & diagnosed, "a template both loaded and diagnosed"
    for path in tree.templates:
        assert real(path) in loaded | diagnosed, f"{path}: neither loaded nor diagnosed"


@pytest.mark.parametrize("seed", range(40))
def test_every_candidate_of_a_hostile_tree_is_loaded_or_diagnosed(
    tmp_path: Path, deny: Callable[[Path], None], seed: int
) -> None:
    rng = random.Random(seed)
    home, project = tmp_path / "home", tmp_path / "proj"
    roots = [home / "skills", project / ".eukhe" / "skills"]
    for r in roots:
        r.mkdir(parents=True)
    tree = Tree(roots, rng, deny)
    tree.grow(roots[0], 0)
    tree.grow(roots[1], 1)
    tree.prompts(home / "prompts")
    tree.prompts(project / ".eukhe" / "prompts")
    explicit: list[str | Path] = [rng.choice(tree.skill_files) if tree.skill_files else "none.md"]
    explicit += ["missing/SKILL.md", tmp_path, project / ".eukhe" / "skills"]

    skills = within_deadline(lambda: load_skills(home, project, explicit))
    check_skills(tree, skills)
    prompts = within_deadline(lambda: load_prompts(home, project, [*tree.templates[:2], "gone.md", tmp_path]))
    check_prompts(tree, prompts)
