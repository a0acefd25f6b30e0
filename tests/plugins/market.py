"""Marketplaces and plugins of this project's own, written as Claude Code's are laid out."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any


def write(path: Path, text: str, mode: int = 0o644) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)
    return path


AGENT = (
    "---\n"
    "name: tidy-up\n"
    'description: Use this agent after a change lands. Examples:\\n<example>\\nuser: "tidy it"\\n</example>\n'
    "tools: Read, Grep\n"
    "color: green\n"
    "---\n"
    "You tidy code.\n"
)

LOG_HOOK = """import json, os, sys
data = json.load(sys.stdin)
root = os.environ.get("CLAUDE_PLUGIN_ROOT", "")
with open(os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "plugin-hook.log"), "a") as f:
    f.write(json.dumps({"event": data["hook_event_name"], "root": root, "arg": sys.argv[1]}) + "\\n")
"""


def plugin(folder: Path, name: str, hooks: dict[str, Any] | None = None, **files: str) -> Path:
    """A plugin `name` in `folder`: its manifest, an agent, a command, a skill, an MCP server,
    and `hooks` (hooks/hooks.json's `hooks`), with `files` besides (relative path: text)."""
    write(
        folder / ".claude-plugin" / "plugin.json",
        json.dumps({"name": name, "version": "1.0.0", "description": f"{name} does things"}),
    )
    write(folder / "agents" / "tidy-up.md", AGENT)
    write(
        folder / "commands" / "tidy.md",
        "---\ndescription: Tidy: one file\nargument-hint: [file]\n---\n"
        "Run ${CLAUDE_PLUGIN_ROOT}/bin/tidy on $1.\n",
    )
    write(
        folder / "skills" / "tidying" / "SKILL.md",
        "---\nname: tidying\ndescription: How to tidy: gently\n---\nSteps.\n",
    )
    server = {
        "mcpServers": {
            "notes": {
                "command": "${CLAUDE_PLUGIN_ROOT}/bin/notes",
                "args": ["--root", "${CLAUDE_PLUGIN_ROOT}"],
            }
        }
    }
    write(folder / ".mcp.json", json.dumps(server))
    if hooks is not None:
        write(folder / "hooks" / "hooks.json", json.dumps({"description": "its hooks", "hooks": hooks}))
    for rel, text in files.items():
        write(folder / rel, text, 0o755)
    return folder


def marketplace(folder: Path, name: str, plugins: dict[str, dict[str, Any] | None], **files: str) -> Path:
    """A marketplace `name` in `folder` listing a plugin of each name under `plugins/<name>`."""
    entries = []
    for p, hooks in plugins.items():
        plugin(folder / "plugins" / p, p, hooks, **files)
        entries.append({"name": p, "source": f"./plugins/{p}", "description": f"{p} does things"})
    write(
        folder / ".claude-plugin" / "marketplace.json",
        json.dumps({"name": name, "owner": {"name": "us"}, "plugins": entries}),
    )
    return folder


def git_repo(folder: Path) -> Path:
    """`folder` made a git repository with one commit of what it holds."""
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
        "PATH": "/usr/bin:/bin",
        "HOME": str(folder),
    }
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "marketplace"]):
        subprocess.run(["git", *args], cwd=folder, env=env, check=True, timeout=30, capture_output=True)
    return folder
