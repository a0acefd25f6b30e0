"""Frontmatter read as Claude Code reads it (issue 55, finding 6): agents, commands (prompt
templates) and skills whose frontmatter Claude Code accepts load here with the same values.

Claude Code's rules, as its parser (`parseFrontmatter`) applies them: a YAML 1.2 parse; a
plain value holding a comment's `#` is quoted first (so the `#` stays in it); when the parse
fails, every top-level `key: value` line whose value holds YAML's syntax characters (`: `,
`[`, `]`, `{`, `}`, `#`, `*`, `&`, `!`, `|`, `>`, `%`, `@`, a backtick) is double-quoted and
parsed once more; what still fails gives no frontmatter. Its agent loader reads `\\n` in a
description as a line break and takes `tools` as a comma-separated string or a list.

The fixtures are this project's own, written to use every construct the agent files of Claude
Code's own plugins and of public collections use. Each expected value is what those rules give.
"""

from __future__ import annotations

from pathlib import Path

from eukhe.skills import Agent, load_agents, load_prompts, load_skills
from eukhe.skills._frontmatter import parse
from tests.skills.helpers import write

# one physical line, as an agent wizard writes it: colons, quotes, tags and `\n` escapes
ONE_LINE = (
    "---\n"
    "name: release-checker\n"
    "description: Use this agent when a release is near. Examples:\\n\\n<example>\\nContext: the user "
    'tagged a build.\\nuser: "Is v2 ready to ship?"\\nassistant: "I\'ll run the release-checker '
    'agent."\\n<commentary>\\nA release question: check it.\\n</commentary>\\n</example>\n'
    "model: inherit\n"
    "color: yellow\n"
    'tools: ["Read", "Grep"]\n'
    "---\n"
    "You check releases.\n"
)

# a block scalar holding the examples, unknown keys of every shape, a YAML list of tools
BLOCK = (
    "---\n"
    "name: migration-guide\n"
    "description: |\n"
    "  Use when a schema changes.\n"
    "  <example>\n"
    '  user: "rename the column"\n'
    "  assistant: I'll plan it: first the copy, then the swap.\n"
    "  </example>\n"
    "tools:\n"
    "  - Read\n"
    "  - Edit\n"
    "color: purple\n"
    "x-owner: {team: data, oncall: yes}\n"
    "version: 1.0\n"
    "---\n"
    "You plan migrations.\n"
)

# colons in plain values, a `#` that is text, tabs where YAML 1.2 takes them as blanks and
# inside a value, YAML 1.2's scalars
PLAIN = (
    "---\n"
    "name:\tnight-shift\n"
    "description: Watches builds: reruns flaky ones #2 priority\n"
    "tools: Read,\tGrep, Bash\t\n"
    "model: sonnet\t\n"
    "when: 12:30\n"
    "enabled: yes\n"
    "note: first\tsecond\n"
    "---\n"
    "You watch builds.\n"
)

# neither parser reads it: the example's lines are not indented, so they are keys of their own
NEITHER = (
    "---\n"
    "name: broken\n"
    "description: Use it for releases. Examples:\n"
    "<example>\n"
    'user: "ship it"\n'
    "</example>\n"
    "---\n"
    "Body.\n"
)


def agents_of(home: Path, files: dict[str, str]) -> tuple[dict[str, Agent], dict[str, str]]:
    """The home's agents loaded from `files`, by name, and what was said, by file."""
    for name, text in files.items():
        write(home / "agents" / name, text)
    got = load_agents(home)
    return {a.name: a for a in got.agents}, {Path(d.path).name: d.error for d in got.diagnostics}


def test_an_agent_on_one_line_with_examples_loads_as_claude_code_reads_it(tmp_path: Path) -> None:
    agents, said = agents_of(tmp_path, {"release.md": ONE_LINE})
    assert said == {}
    a = agents["release-checker"]
    assert a.description == (
        "Use this agent when a release is near. Examples:\n\n<example>\nContext: the user tagged a build.\n"
        'user: "Is v2 ready to ship?"\nassistant: "I\'ll run the release-checker agent."\n<commentary>\n'
        "A release question: check it.\n</commentary>\n</example>"
    )
    assert a.tools == ("read", "grep")  # the list the quoted line spells
    assert a.model is None  # inherit
    assert a.prompt == "You check releases."


def test_an_agent_with_a_block_scalar_a_yaml_list_and_unknown_keys_loads(tmp_path: Path) -> None:
    agents, said = agents_of(tmp_path, {"migrate.md": BLOCK})
    assert said == {}
    a = agents["migration-guide"]
    assert a.description == (
        'Use when a schema changes.\n<example>\nuser: "rename the column"\n'
        "assistant: I'll plan it: first the copy, then the swap.\n</example>"
    )
    assert a.tools == ("read", "edit")


def test_colons_hashes_and_tabs_in_plain_values_read_as_yaml_1_2_reads_them(tmp_path: Path) -> None:
    agents, said = agents_of(tmp_path, {"night.md": PLAIN})
    assert said == {}
    a = agents["night-shift"]
    assert a.description == "Watches builds: reruns flaky ones #2 priority"
    assert a.tools == ("read", "grep", "bash")
    assert a.model == "sonnet"
    meta = parse(PLAIN).meta
    assert meta is not None
    # YAML 1.2's core schema: text, not a number in base 60, not a boolean
    assert (meta["when"], meta["enabled"], meta["note"]) == ("12:30", "yes", "first\tsecond")


def test_the_values_of_every_construct_are_claude_codes() -> None:
    cases = {
        "a: Reviews code # carefully\n": "Reviews code # carefully",  # Claude Code keeps the `#`
        "a: 'it''s: fine'\n": "it's: fine",
        'a: "tab\\there"\n': "tab\there",
        "a:\tb\n": "b",
        "a: [x,\ty]\n": ["x", "y"],
        "a: 012\n": 12,  # YAML 1.2: twelve, not octal ten
        "a: 2024-01-01\n": "2024-01-01",
        "a: true\n": True,
        "a: ~\n": None,
        "a: >-\n  one\n  two\n": "one two",
        "a: |\n  x\ty\n": "x\ty\n",
        "a: see: this [and] that\n": "see: this [and] that",  # the second pass
    }
    for front, want in cases.items():
        got = parse(f"---\n{front}---\nbody\n")
        assert got.meta is not None, (front, got.detail)
        assert got.meta["a"] == want, front


def test_a_file_neither_parser_reads_is_refused_with_its_line(tmp_path: Path) -> None:
    agents, said = agents_of(tmp_path, {"broken.md": NEITHER, "release.md": ONE_LINE})
    assert list(agents) == ["release-checker"]
    assert said["broken.md"].startswith("invalid YAML frontmatter: line 3 column "), said


def test_a_command_with_a_bracketed_argument_hint_and_a_colon_loads(tmp_path: Path) -> None:
    write(
        tmp_path / "prompts" / "review.md",
        "---\ndescription: Review: one file, deeply\nargument-hint: [file] [focus]\n"
        "allowed-tools: Bash(git diff:*), Read\n---\nReview $1 for $2.\n",
    )
    got = load_prompts(tmp_path)
    assert got.diagnostics == ()
    [t] = got.prompts
    assert (t.name, t.description) == ("review", "Review: one file, deeply")
    assert t.argument_hint == "[file] [focus]"


def test_a_skill_whose_description_holds_colons_and_quotes_loads(tmp_path: Path) -> None:
    write(
        tmp_path / "skills" / "pdf" / "SKILL.md",
        '---\nname: pdf\ndescription: Use when the user asks to "fill a form": PDFs only\n---\nSteps.\n',
    )
    got = load_skills(tmp_path)
    assert got.diagnostics == ()
    [s] = got.skills
    assert s.description == 'Use when the user asks to "fill a form": PDFs only'


def test_an_agents_description_may_run_past_a_skills_1024_characters(tmp_path: Path) -> None:
    example = '<example>\\nContext: a change landed.\\nuser: "check it"\\n</example>\\n'
    front = f"---\nname: long-one\ndescription: Use it. Examples:\\n{example * 40}\n---\nBody.\n"
    agents, said = agents_of(tmp_path, {"long.md": front})
    assert said == {}
    assert len(agents["long-one"].description) > 2000  # Claude Code bounds none; its plugins' run so
