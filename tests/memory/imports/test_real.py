"""Real session files (tests/fixtures/sessions/INDEX.md): the user's words and the
agent's final replies, in order, with their keys and dates."""

from __future__ import annotations

import itertools

import pytest

from eukhe.memory.imports import FileReport, read_session
from tests.memory.imports.helpers import SESSIONS, fixture

ALL = sorted(str(p.relative_to(SESSIONS)) for p in SESSIONS.glob("*/*") if p.suffix in (".jsonl", ".json"))


def said(report: FileReport) -> list[tuple[str, str]]:
    return [(i.kind, i.text) for i in report.items]


def test_every_fixture_is_listed_in_the_index() -> None:
    index = (SESSIONS / "INDEX.md").read_text()
    assert len(ALL) == 13
    for name in ALL:
        assert f"`{name.split('/')[1]}`" in index, name


@pytest.mark.parametrize("name", ALL)
def test_every_fixture_reads_in_its_own_format_without_a_diagnostic(name: str) -> None:
    report = read_session(fixture(name))
    assert not report.refused, report.summary
    assert report.format is not None
    assert (
        report.format.name
        == {"claude": "claude-code", "codex": "codex", "pi": "pi", "eukhe": "eukhe"}[name.split("/")[0]]
    )
    assert report.diagnostics == ()
    keys = [i.key for i in report.items]
    assert len(set(keys)) == len(keys)
    assert all(k.startswith(report.format.name + ":") for k in keys)
    assert all(i.text == i.text.strip() and i.text for i in report.items)


@pytest.mark.parametrize("name", ALL)
def test_user_words_and_replies_alternate_a_reply_never_twice(name: str) -> None:
    kinds = [i.kind for i in read_session(fixture(name)).items]
    assert all(not (a == "talk" and b == "talk") for a, b in itertools.pairwise(kinds))


def test_claude_code_three_turns_exactly() -> None:
    report = read_session(fixture("claude/codemie-4c2ddfdc.jsonl"))
    assert report.session == "4c2ddfdc-b619-4525-8d03-1950fb1b0257"
    assert said(report) == [
        ("user", "create hello.py, md and js"),
        (
            "talk",
            "Done! I've created three files:\n\n"
            '1. **hello.py** - Python script with a simple "Hello, World!" function\n'
            "2. **hello.md** - Markdown file with basic formatting and structure\n"
            '3. **hello.js** - Node.js script with a simple "Hello, World!" function\n\n'
            "All files are ready to use in your working directory.",
        ),
        ("user", "update py with one liner comment"),
        ("talk", "Done! I've added a one-liner comment to hello.py: `# Simple hello world program`"),
        ("user", "delete js"),
        ("talk", "Done! I've deleted hello.js."),
    ]
    first = report.items[0]
    assert first.key == "claude-code:40523152-693d-4e07-8434-7f0c8f28cc05"
    assert first.date == "2025-12-10T19:37:45.343+00:00"
    assert first.line == 2
    assert (report.users, report.replies) == (3, 3)
    assert report.summary == (
        f"{fixture('claude/codemie-4c2ddfdc.jsonl')}: Claude Code session "
        "4c2ddfdc-b619-4525-8d03-1950fb1b0257: 3 user messages, 3 replies"
    )


def test_claude_code_the_reply_is_the_last_text_not_the_first() -> None:
    # "I'll create three simple files…" (line 3) precedes the tool calls; the reply is line 13's text
    report = read_session(fixture("claude/codemie-4c2ddfdc.jsonl"))
    assert report.items[1].line == 13
    assert not any(i.text.startswith("I'll create three simple files") for i in report.items)


def test_claude_code_slash_command_taken_its_meta_expansion_skipped() -> None:
    report = read_session(fixture("claude/viewer-1af7fc5e.jsonl"))
    assert [i.kind for i in report.items] == ["user", "talk"]
    assert report.items[0].text == "/init"
    assert report.items[1].text.startswith("I've created a basic CLAUDE.md file for this empty repository.")
    assert not any("Please analyze this codebase" in i.text for i in report.items)  # the isMeta prompt


def test_claude_code_inline_subagent_records_skipped() -> None:
    report = read_session(fixture("claude/viewer-fe5e1c67-prefix.jsonl"))
    assert said(report) == [
        ("user", "/orchestrator create TODO app by Next.js"),
        ("talk", "Now I'll execute the subtasks in parallel to create the TODO app efficiently:"),
    ]
    assert report.notes == ("24 subagent records skipped",)


def test_claude_code_a_subagents_own_file_gives_nothing() -> None:
    report = read_session(fixture("claude/codemie-agent-a485154-prefix.jsonl"))
    assert not report.refused
    assert report.items == ()
    assert "the file is a subagent's sidechain" in report.notes[-1]


def test_claude_code_interruption_note_is_not_the_users_words() -> None:
    report = read_session(fixture("claude/codemie-9eda1058-prefix.jsonl"))
    assert said(report) == [
        ("user", "show tools and store response in file"),
        ("talk", "I'll show you all the available tools and store the response in a file."),
        ("user", "explore more of current repo"),
    ]


def test_claude_code_newest_records_redacted_session() -> None:
    report = read_session(fixture("claude/agent-history-session-01.jsonl"))
    assert said(report) == [("user", "[REDACTED_PROMPT]"), ("talk", "[REDACTED_ASSISTANT_TEXT]")]
    assert report.items[1].key == "claude-code:4a6cda39-a1c1-404b-91c3-8ed94d28e177"


def test_codex_user_message_events_and_last_assistant_message() -> None:
    report = read_session(fixture("codex/codemie-019e1625-prefix.jsonl"))
    assert report.session == "019e1625-789d-76c0-80ab-3724b5ddb799"
    assert said(report) == [
        ("user", "show tools"),
        (
            "talk",
            "Available tool groups in this session:\n\n"
            "- `web`: internet/search, open pages, finance, weather, sports, time, calculator.\n"
            "- `functions`: terminal commands, patching files, planning, image viewing, subagents, "
            "waiting/closing agents.\n"
            "- `multi_tool_use`: run multiple developer tools in parallel when safe.\n\n"
            "Also available through local skills/plugins:\n\n"
            "- Superpowers development workflows\n"
            "- Browser Use in-app browser automation\n"
            "- Documents, Presentations, Spreadsheets artifact workflows\n"
            "- Image generation/editing skill\n"
            "- OpenAI docs research skill\n"
            "- CodeMie release skill\n"
            "- Naya memory/knowledge skills\n\n"
            "In this repo, `AGENTS.md` also says to prefer codebase-memory MCP graph tools for code "
            "discovery, but no callable MCP graph tool namespace is currently exposed in this tool list.",
        ),
        ("user", "let's update the defailt context compart to 90 in env var"),
        (
            "talk",
            "Using `superpowers:brainstorming` briefly because this changes runtime "
            "behavior/configuration. I’ll first locate the existing env var/default, then make the "
            "smallest scoped update and verify it.",
        ),
    ]
    assert [i.key for i in report.items] == [
        f"codex:019e1625-789d-76c0-80ab-3724b5ddb799:line{n}" for n in (7, 17, 23, 26)
    ]
    assert report.items[0].date == "2026-05-11T08:27:17.495+00:00"
    # the injected AGENTS.md, environment and developer messages are not the user's words
    assert not any(
        i.kind == "user" and ("AGENTS.md" in i.text or "<environment" in i.text) for i in report.items
    )


def test_codex_exec_rollout() -> None:
    report = read_session(fixture("codex/agent-history-session-01.jsonl"))
    assert said(report) == [("user", "[REDACTED_PROMPT]"), ("talk", "[REDACTED_ASSISTANT_TEXT]")]
    assert [i.line for i in report.items] == [7, 9]


def test_pi_version_1_keys_by_line() -> None:
    report = read_session(fixture("pi/pi-mono-large-session-prefix.jsonl"))
    assert report.session == "d703a1a9-1b7b-4fb1-b512-c9738b1fe617"
    assert [i.kind for i in report.items] == ["user", "user", "talk"]
    assert report.items[0].text == "/mode"
    assert report.items[1].text.startswith("read packages/coding-agent/docs/theme.md in full, then theme.ts")
    assert report.items[2].text.startswith("Perfect! I've ported the `user-message-selector.ts`")
    assert [i.key for i in report.items] == [
        f"pi:d703a1a9-1b7b-4fb1-b512-c9738b1fe617:line{n}" for n in (2, 5, 17)
    ]


def test_pi_version_3_keys_by_entry_id_compactions_skipped() -> None:
    report = read_session(fixture("pi/agent-sessions-small.jsonl"))
    assert said(report) == [
        ("user", "Read hello.py and summarize what it prints without editing files."),
        ("talk", "hello.py prints a fixture greeting."),
        ("user", "Add one concise follow-up sentence."),
        ("talk", "hello.py prints a fixture greeting."),
    ]
    session = "019e19b4-eb48-746a-aa6b-8dfcfa37954b"
    assert [i.key for i in report.items] == [
        f"pi:{session}:{e}" for e in ("30c6a75f", "22a2720e", "ddd2179a", "4a666296")
    ]
    assert report.items[0].date == "2026-05-12T01:02:27.673+00:00"


def test_pi_redacted_session() -> None:
    report = read_session(fixture("pi/agent-history-session-01.jsonl"))
    assert said(report) == [("user", "[REDACTED_PROMPT]"), ("talk", "[REDACTED_ASSISTANT_TEXT]")]


def test_eukhe_export_runs_prompts_and_answers() -> None:
    report = read_session(fixture("eukhe/faux-two-runs.json"))
    assert report.session == "20261201-081150-27648b"
    assert said(report) == [
        ("user", "hi, read the README"),
        ("talk", "Hello! I read the README: it is short."),
        ("user", "and what is 2+2?"),
        ("talk", "Second answer: 2 + 2 = 4."),
    ]
    assert [i.key for i in report.items] == [
        "eukhe:20261201-081150-27648b/0001:0",
        "eukhe:20261201-081150-27648b/0001:3",
        "eukhe:20261201-081150-27648b/0002:0",
        "eukhe:20261201-081150-27648b/0002:1",
    ]
    assert all(i.date is None and i.line is None for i in report.items)


def test_eukhe_failed_replies_are_not_the_agents_words() -> None:
    report = read_session(fixture("eukhe/faux-failed-runs.json"))
    assert said(report) == [
        ("user", "run echo hello and tell me what it printed"),
        ("talk", "The command printed hello."),
        ("user", "now fail please"),
        ("user", "think but do not answer"),
    ]
