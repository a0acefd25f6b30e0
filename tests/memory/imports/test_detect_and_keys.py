"""Detection by content, not by name; refusals in one line; keys that make a
second import of the same file log nothing twice."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from eukhe.memory.imports import MAX_LINE_BYTES, formats, read_session
from eukhe.memory.imports._detect import classify
from tests.memory.imports.helpers import SESSIONS, fixture, jsonl

NOT_ONE = "not a session file of eukhe, Claude Code, Codex or pi"
ALL = sorted(str(p.relative_to(SESSIONS)) for p in SESSIONS.glob("*/*") if p.suffix in (".jsonl", ".json"))
FORMAT_OF = {"claude": "claude-code", "codex": "codex", "pi": "pi", "eukhe": "eukhe"}


def test_formats() -> None:
    assert [(f.name, f.label) for f in formats] == [
        ("eukhe", "eukhe"),
        ("claude-code", "Claude Code"),
        ("codex", "Codex"),
        ("pi", "pi"),
    ]


@pytest.mark.parametrize("name", ALL)
def test_detection_reads_the_content_not_the_name(name: str, tmp_path: Path) -> None:
    disguised = shutil.copy(fixture(name), tmp_path / "notes.txt")
    report = read_session(disguised)
    assert report.format is not None and report.format.name == FORMAT_OF[name.split("/")[0]]


@pytest.mark.parametrize("name", ALL)
def test_every_record_of_a_fixture_is_claimed_by_its_own_format_or_none(name: str) -> None:
    own = FORMAT_OF[name.split("/")[0]]
    if own == "eukhe":
        doc = json.loads(fixture(name).read_text())
        assert classify(doc) is not None and classify(doc).name == "eukhe"  # type: ignore[union-attr]
        return
    for raw in fixture(name).read_text().splitlines():
        found = classify(json.loads(raw))
        assert found is None or found.name == own, (raw[:120], found)


def test_a_text_file_is_refused_in_one_line(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("Buy milk.\nCall Ada.\n")
    report = read_session(notes)
    assert report.refused and report.items == () and len(report.diagnostics) == 1
    assert report.summary == f"{notes}: {NOT_ONE} (line 1 is not JSON)"


def test_json_lines_of_another_kind_are_refused(tmp_path: Path) -> None:
    other = jsonl(
        tmp_path / "events.jsonl", {"event": "click", "x": 1}, {"event": "scroll"}, {"event": "exit"}
    )
    assert (
        read_session(other).summary == f"{other}: {NOT_ONE} (none of its first 3 lines is a session record)"
    )
    single = jsonl(tmp_path / "one.jsonl", {"role": "user", "content": "hi"})
    assert read_session(single).summary == f"{single}: {NOT_ONE} (line 1 is JSON but not a session record)"
    arrays = jsonl(tmp_path / "arrays.jsonl", [1, 2], [3])
    assert read_session(arrays).summary == f"{arrays}: {NOT_ONE} (line 1 is an array, not a JSON object)"


def test_another_agents_json_document_is_refused(tmp_path: Path) -> None:
    doc = tmp_path / "settings.json"
    doc.write_text(json.dumps({"model": "x", "hooks": {}}, indent=2))
    assert read_session(doc).summary == (
        f"{doc}: {NOT_ONE} (it is one JSON document, but not an eukhe session export)"
    )


def test_an_eukhe_export_pretty_printed_is_read(tmp_path: Path) -> None:
    pretty = tmp_path / "session.json"
    pretty.write_text(json.dumps(json.loads(fixture("eukhe/faux-two-runs.json").read_text()), indent=4))
    report = read_session(pretty)
    assert report.format is not None and report.format.name == "eukhe"
    assert [i.key for i in report.items] == [
        i.key for i in read_session(fixture("eukhe/faux-two-runs.json")).items
    ]


def test_a_broken_first_line_does_not_hide_a_session(tmp_path: Path) -> None:
    lines = fixture("pi/agent-sessions-small.jsonl").read_bytes().splitlines(keepends=True)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\x89PNG garbage\n" + b"".join(lines[1:]))
    report = read_session(path)
    assert report.format is not None and report.format.name == "pi"
    assert [(d.line, d.message) for d in report.diagnostics] == [
        (1, "bytes that are not UTF-8 (0x89 at byte 1); skipped")
    ]
    assert report.users == 2  # the header is gone, so keys fall back to the file's path
    assert report.items[0].key == f"pi:{path.resolve()}:30c6a75f"


def test_a_forced_format_and_an_unknown_one(tmp_path: Path) -> None:
    report = read_session(fixture("claude/codemie-4c2ddfdc.jsonl"), format="pi")
    assert not report.refused and report.items == ()  # none of it is pi's
    assert report.diagnostics[0].message == (
        "unknown entry type 'file-history-snapshot'; skipped, as is every later line of it"
    )
    bad = read_session(fixture("claude/codemie-4c2ddfdc.jsonl"), format="cursor")
    assert bad.refused
    assert (
        bad.diagnostics[0].message
        == "no session format 'cursor' (the formats: eukhe, claude-code, codex, pi)"
    )


@pytest.mark.parametrize("name", ALL)
def test_the_same_file_twice_gives_the_same_keys(name: str, tmp_path: Path) -> None:
    first = read_session(fixture(name))
    again = read_session(fixture(name))
    assert first.items == again.items
    moved = read_session(shutil.copy(fixture(name), tmp_path / "elsewhere.jsonl"))
    assert [i.key for i in moved.items] == [i.key for i in first.items]  # keys name the session, not the path


@pytest.mark.parametrize(
    "name",
    ["claude/codemie-4c2ddfdc.jsonl", "codex/codemie-019e1625-prefix.jsonl", "pi/agent-sessions-small.jsonl"],
)
def test_a_session_read_again_after_it_grew_keeps_its_earlier_keys(name: str, tmp_path: Path) -> None:
    lines = fixture(name).read_bytes().splitlines(keepends=True)
    part = tmp_path / "part.jsonl"
    part.write_bytes(b"".join(lines[: len(lines) // 2]))
    whole = {i.key: i for i in read_session(fixture(name)).items}
    earlier = read_session(part).items
    assert earlier
    # every user item of the earlier read is in the later one, the same; replies that were
    # final then may be superseded by later text (a live session), but never change under their key
    for item in earlier:
        if item.kind == "user":
            assert whole[item.key] == item
        elif item.key in whole:
            assert whole[item.key].text == item.text


def test_keys_of_different_sessions_differ() -> None:
    keys = [i.key for name in ALL for i in read_session(fixture(name)).items]
    assert len(keys) == len(set(keys))


def test_an_eukhe_export_after_blank_lines_or_on_one_huge_line(tmp_path: Path) -> None:
    doc = json.loads(fixture("eukhe/faux-two-runs.json").read_text())
    padded = tmp_path / "padded.json"
    padded.write_text("\n\n" + json.dumps(doc, indent=2))
    assert read_session(padded).replies == 2
    doc["runs"][0]["messages"][2]["content"] = "x" * (MAX_LINE_BYTES + 5)  # a tool result too long for a line
    huge = tmp_path / "huge.json"
    huge.write_text(json.dumps(doc))
    report = read_session(huge)
    assert report.format is not None and report.format.name == "eukhe"
    assert report.replies == 2 and report.diagnostics == ()
