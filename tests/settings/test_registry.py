"""Every loader reads through the registry (issue 51): a session's setup and a run's assembly,
with every loader eukhe has (settings, Claude Code's settings and hooks, MCP servers, the
permissions, skills, prompt templates, agents, instructions, what git names), are done in a
process whose audit hook records every file and folder opened; each one in the project must be
a path `rules.registry` names. A loader added for a new configuration file without the registry
fails here: the check is shown to catch one (`test_the_check_catches_a_loader_the_registry_does_not_know`).

Both tests read one probe's run (a real Python with its audit hook, some 3 CPU-seconds): the run of
`everything`, in which the probe itself also opens a file no loader reads (`UNKNOWN`), as a loader
the registry does not know would; that file is the only one the check may find unnamed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from eukhe.rules import registry
from tests import forks

PROBE = textwrap.dedent(
    """
    import asyncio, json, os, sys
    from pathlib import Path

    opened = []
    project = os.path.realpath(sys.argv[1])

    def audit(event, args):
        if event in ("open", "os.listdir", "os.scandir") and args and isinstance(args[0], (str, bytes)):
            path = os.fsdecode(args[0])
            full = os.path.realpath(path if os.path.isabs(path) else os.path.join(os.getcwd(), path))
            if full == project or full.startswith(project + "/"):
                opened.append(os.path.relpath(full, project))

    from eukhe.run import spec as session
    from eukhe.run.assemble import assemble, session_hooks
    from eukhe.run.context import ProcessContext
    from tests.steps import Kept

    async def go():
        os.chdir(project)
        sys.addaudithook(audit)
        made = session.setup(Path(project), model="vllm/m", base_url="http://127.0.0.1:9/v1")
        extra = sys.argv[2] if len(sys.argv) > 2 else ""
        if extra:  # a loader the registry does not know (the check's own test)
            open(os.path.join(project, extra)).close()
        spec = made.spec("hello")
        here = ProcessContext()
        handle = here.runs.begin("s1/0001", asyncio.Event())
        async with assemble(spec, handle, here, Kept(starts=False)) as parts:
            await parts.provider.close()
        hooks = session_hooks(Path(project), "s1", "s1/0001", here, asyncio.Event())
        print(json.dumps(sorted(set(opened))))

    asyncio.run(go())
    """
)


def everything(tmp_path: Path) -> tuple[Path, Path]:
    """A trusted project holding a file of every kind eukhe loads, and its home."""
    project, home = tmp_path / "project", tmp_path / "home"
    hook = {"hooks": {"SessionEnd": [{"hooks": [{"type": "command", "command": "true"}]}]}}
    files = {
        ".eukhe/settings.json": json.dumps({"skills": ["docs/skills"], "prompts": ["docs/prompts"], **hook}),
        ".eukhe/skills/s/SKILL.md": "---\nname: s\ndescription: a skill\n---\nbody",
        ".eukhe/prompts/p.md": "a template",
        ".eukhe/agents/a.md": "---\nname: a\ndescription: an agent\n---\nbody",
        ".claude/settings.json": json.dumps(hook),
        ".claude/settings.local.json": json.dumps(hook),
        ".claude/agents/b.md": "---\nname: b\ndescription: an agent\n---\nbody",
        ".mcp.json": json.dumps({"mcpServers": {}}),
        "AGENTS.md": "be kind",
        "sub/CLAUDE.md": "be brief",
        "docs/skills/t/SKILL.md": "---\nname: t\ndescription: a skill\n---\nbody",
        "docs/prompts/q.md": "a template",
        "src/main.py": "print('hello')",
    }
    for rel, text in files.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(text)
    subprocess.run(["git", "init", "-q", "."], cwd=project, check=True, timeout=30)
    home.mkdir(mode=0o700)
    (home / "settings.json").write_text("{}")
    trusted = forks.run(
        ["trust", str(project)], project, {"EUKHE_HOME": str(home), "PATH": "/usr/bin:/bin"}, timeout=60
    )
    assert trusted.returncode == 0, trusted.stderr
    return project, home


def opened(project: Path, home: Path, extra: str = "") -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(project), *([extra] if extra else [])],
        env={"EUKHE_HOME": str(home), "PATH": "/usr/bin:/bin", "HOME": str(home.parent)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return list(json.loads(done.stdout.splitlines()[-1]))


def unnamed(paths: list[str], project: Path) -> list[str]:
    """The opened paths the registry names nothing of: neither an entry nor a folder the settings
    name (`docs/skills`, `docs/prompts`), nor one of its folders on the way to one."""
    named = ("docs/skills", "docs/prompts")
    out = []
    for p in paths:
        if p == "." or registry.entry(p) is not None:
            continue
        if any(p == n or p.startswith(n + "/") or n.startswith(p + "/") for n in named):
            continue
        if any(e.path.startswith(p + "/") for e in registry.ENTRIES):  # a registered path's folder
            continue
        out.append(p)
    return out


UNKNOWN = ".cursor/rules.json"
"""A configuration file no loader of eukhe's reads: the probe opens it as an unknown loader would."""


@pytest.fixture(scope="module")
def probed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """`everything`'s project and what its run opened there, `UNKNOWN` opened by the probe too."""
    project, home = everything(tmp_path_factory.mktemp("registry"))
    (project / UNKNOWN).parent.mkdir()
    (project / UNKNOWN).write_text("{}")
    return project, opened(project, home, UNKNOWN)


def test_every_file_a_run_loads_is_named_by_the_registry(probed: tuple[Path, list[str]]) -> None:
    project, got = probed
    for loaded in (".eukhe/settings.json", ".claude/settings.json", ".mcp.json", ".claude/agents/b.md"):
        assert loaded in got, got  # the probe sees what each loader reads
    assert "AGENTS.md" in got and "docs/skills/t/SKILL.md" in got, got
    assert [p for p in unnamed(got, project) if p != UNKNOWN] == [], got
    assert "src/main.py" not in got


def test_the_check_catches_a_loader_the_registry_does_not_know(probed: tuple[Path, list[str]]) -> None:
    project, got = probed
    assert unnamed(got, project) == [UNKNOWN]
