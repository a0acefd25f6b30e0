"""Hostile files: every bad line is a diagnostic with the path and its number, the
rest of the file is read as usual; a file that cannot be read is refused with its
cause; never an exception."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from eukhe.memory import imports
from eukhe.memory.imports import MAX_LINE_BYTES, FileReport, read_session
from eukhe.memory.imports._common import MAX_DIAGNOSTICS
from tests.memory.imports.helpers import fixture, jsonl

NOT_ONE = "not a session file of eukhe, Claude Code, Codex or pi"

CLAUDE_USER = {
    "type": "user",
    "sessionId": "s1",
    "uuid": "u1",
    "timestamp": "2026-01-01T00:00:00Z",
    "message": {"role": "user", "content": "first words"},
}
CLAUDE_REPLY = {
    "type": "assistant",
    "sessionId": "s1",
    "uuid": "a1",
    "timestamp": "2026-01-01T00:00:01Z",
    "message": {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "first reply"}]},
}


def user(uuid: str, text: str) -> dict[str, object]:
    return {**CLAUDE_USER, "uuid": uuid, "message": {"role": "user", "content": text}}


def reply(uuid: str, text: str, mid: str | None = None) -> dict[str, object]:
    content = [{"type": "text", "text": text}]
    return {
        **CLAUDE_REPLY,
        "uuid": uuid,
        "message": {"id": mid or uuid, "role": "assistant", "content": content},
    }


def lines(report: FileReport) -> list[tuple[int | None, str]]:
    return [(d.line, d.message) for d in report.diagnostics]


def said(report: FileReport) -> list[tuple[str, str]]:
    return [(i.kind, i.text) for i in report.items]


def test_invalid_json_lines_are_diagnosed_and_the_rest_read(tmp_path: Path) -> None:
    path = jsonl(
        tmp_path / "s.jsonl", CLAUDE_USER, b'{"type": "user", "uuid": ', b"not json at all", CLAUDE_REPLY
    )
    report = read_session(path)
    assert said(report) == [("user", "first words"), ("talk", "first reply")]
    assert lines(report) == [
        (2, "not JSON (Expecting value at column 26); skipped"),
        (3, "not JSON (Expecting value at column 1); skipped"),
    ]
    assert report.diagnostics[0].text == f"{path}: line 2: not JSON (Expecting value at column 26); skipped"
    assert report.summary.endswith(": 1 user message, 1 reply; 2 diagnostics")


def test_a_truncated_last_line(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "s.jsonl", CLAUDE_USER, CLAUDE_REPLY, raw=b'{"type": "user", "uuid": "u2", "mess')
    report = read_session(path)
    assert said(report) == [("user", "first words"), ("talk", "first reply")]
    assert lines(report) == [
        (
            3,
            "cut short (the last line, with no newline at its end): "
            "not JSON (Unterminated string starting at column 32); skipped",
        )
    ]


def test_a_last_line_without_newline_that_is_whole_is_read(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "s.jsonl", CLAUDE_USER)
    path.write_bytes(path.read_bytes() + b'{"type": "summary", "summary": "x", "leafUuid": "u1"}')
    report = read_session(path)
    assert report.diagnostics == ()
    assert report.users == 1


def test_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "s.jsonl", CLAUDE_USER, b'{"type": "user", "text": "caf\xe9"}', CLAUDE_REPLY)
    report = read_session(path)
    assert said(report) == [("user", "first words"), ("talk", "first reply")]
    assert lines(report) == [(2, "bytes that are not UTF-8 (0xe9 at byte 30); skipped")]


def test_unknown_record_types_in_each_format(tmp_path: Path) -> None:
    claude = read_session(
        jsonl(tmp_path / "c.jsonl", CLAUDE_USER, {"type": "hologram", "uuid": "h"}, CLAUDE_REPLY)
    )
    assert lines(claude) == [(2, "unknown record type 'hologram'; skipped, as is every later line of it")]
    assert claude.replies == 1
    meta = {"type": "session_meta", "payload": {"id": "c1"}}
    words = {"type": "event_msg", "payload": {"type": "user_message", "message": "hi"}}
    codex = read_session(jsonl(tmp_path / "x.jsonl", meta, {"type": "hologram", "payload": {}}, words))
    assert lines(codex) == [(2, "unknown record type 'hologram'; skipped, as is every later line of it")]
    assert said(codex) == [("user", "hi")]
    header = {"type": "session", "version": 3, "id": "p1", "cwd": "/"}
    entry = {"type": "message", "id": "e1", "parentId": None, "message": {"role": "user", "content": "yo"}}
    odd = {"type": "message", "id": "e2", "parentId": "e1", "message": {"role": "oracle", "content": "?"}}
    pi = read_session(jsonl(tmp_path / "p.jsonl", header, {"type": "hologram", "id": "h"}, entry, odd))
    assert lines(pi) == [
        (2, "unknown entry type 'hologram'; skipped, as is every later line of it"),
        (4, "unknown message role 'oracle'; skipped, as is every later line of it"),
    ]
    assert said(pi) == [("user", "yo")]


def test_records_of_a_known_type_with_a_broken_shape(tmp_path: Path) -> None:
    broken = {"type": "assistant", "uuid": "a9", "sessionId": "s1", "message": "not an object"}
    no_type = {"uuid": "x", "sessionId": "s1"}
    report = read_session(jsonl(tmp_path / "s.jsonl", CLAUDE_USER, broken, no_type, [1, 2], CLAUDE_REPLY))
    assert lines(report) == [
        (2, "a assistant record without a message object; skipped"),
        (3, "a record with no type; skipped"),
        (4, "an array, not a JSON object; skipped"),
    ]
    assert report.replies == 1


def test_an_empty_file_and_one_of_blank_lines(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    report = read_session(empty)
    assert report.refused and report.items == ()
    assert report.summary == f"{empty}: {NOT_ONE} (the file is empty)"
    blank = tmp_path / "blank.jsonl"
    blank.write_bytes(b"\n  \n\r\n")
    assert read_session(blank).summary.endswith("(it has only blank lines)")


def test_a_huge_line_is_skipped_unread_and_the_rest_taken(tmp_path: Path) -> None:
    huge = b'{"type": "user", "pad": "' + b"x" * (MAX_LINE_BYTES + 10) + b'"}'
    path = jsonl(tmp_path / "s.jsonl", CLAUDE_USER, huge, CLAUDE_REPLY)
    report = read_session(path)
    assert said(report) == [("user", "first words"), ("talk", "first reply")]
    assert lines(report) == [(2, f"longer than 1 MiB ({len(huge) + 1} bytes); skipped")]


def test_a_line_of_exactly_the_cap_is_read(tmp_path: Path) -> None:
    record = b'{"type": "summary", "leafUuid": "u1", "summary": "'
    record += b"y" * (MAX_LINE_BYTES - len(record) - 2) + b'"}'
    assert len(record) == MAX_LINE_BYTES
    report = read_session(jsonl(tmp_path / "s.jsonl", CLAUDE_USER, record, CLAUDE_REPLY))
    assert report.diagnostics == ()


def test_a_huge_first_line_then_session_records(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "s.jsonl", b"z" * (MAX_LINE_BYTES + 1), CLAUDE_USER, CLAUDE_REPLY)
    report = read_session(path)
    assert report.format is not None and report.format.name == "claude-code"
    assert lines(report) == [(1, f"longer than 1 MiB ({MAX_LINE_BYTES + 2} bytes); skipped")]
    assert report.users == report.replies == 1


def test_a_binary_file(tmp_path: Path) -> None:
    path = tmp_path / "a.out"
    path.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8)
    report = read_session(path)
    assert report.refused
    assert report.summary == f"{path}: {NOT_ONE} (line 1 is binary data, not JSON)"


def test_a_binary_line_inside_a_session(tmp_path: Path) -> None:
    report = read_session(jsonl(tmp_path / "s.jsonl", CLAUDE_USER, b"\x00\x01\x02garbage", CLAUDE_REPLY))
    assert lines(report) == [(2, "binary data (a NUL byte at byte 1), not JSON; skipped")]
    assert report.replies == 1


def test_a_directory_a_missing_file_a_fifo_a_device(tmp_path: Path) -> None:
    assert read_session(tmp_path).summary == f"{tmp_path}: cannot read it: it is a directory"
    missing = tmp_path / "gone.jsonl"
    assert read_session(missing).summary == f"{missing}: cannot read it: no such file"
    below = tmp_path / "file" / "x.jsonl"
    (tmp_path / "file").write_text("")
    assert read_session(below).summary == f"{below}: cannot read it: a part of its path is not a directory"
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)  # opening it would wait for a writer: it is refused before
    said = read_session(fifo).summary
    assert said == f"{fifo}: cannot read it: it is a FIFO (named pipe), not a regular file"
    assert (
        read_session("/dev/null").summary
        == "/dev/null: cannot read it: it is a character device, not a regular file"
    )


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode")
def test_a_file_without_read_permission(tmp_path: Path) -> None:
    path = shutil.copy(fixture("pi/agent-sessions-small.jsonl"), tmp_path / "s.jsonl")
    os.chmod(path, 0)
    assert read_session(path).summary == f"{path}: cannot read it: permission denied"


def test_permission_denied_when_opening(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = shutil.copy(fixture("pi/agent-sessions-small.jsonl"), tmp_path / "s.jsonl")

    def denied(*args: object, **kwargs: object) -> object:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr("os.open", denied)
    report = read_session(path)
    assert report.refused
    assert report.summary == f"{path}: cannot read it: permission denied"


def test_json_nested_too_deeply(tmp_path: Path) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    report = read_session(jsonl(tmp_path / "s.jsonl", CLAUDE_USER, deep, CLAUDE_REPLY))
    assert lines(report) == [(2, "JSON nested too deeply to read; skipped")]
    assert report.replies == 1


def test_a_number_too_long_to_convert(tmp_path: Path) -> None:
    report = read_session(
        jsonl(tmp_path / "s.jsonl", CLAUDE_USER, b'{"n": ' + b"9" * 5000 + b"}", CLAUDE_REPLY)
    )
    assert len(report.diagnostics) == 1
    assert report.diagnostics[0].line == 2
    assert report.diagnostics[0].message.startswith("not JSON that can be read (")


def test_a_byte_order_mark_and_crlf_lines(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "s.jsonl", CLAUDE_USER, CLAUDE_REPLY)
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes().replace(b"\n", b"\r\n"))
    report = read_session(path)
    assert report.diagnostics == ()
    assert said(report) == [("user", "first words"), ("talk", "first reply")]


def test_diagnostics_are_capped_and_the_rest_counted(tmp_path: Path) -> None:
    bad = [b"{" for _ in range(MAX_DIAGNOSTICS + 7)]
    report = read_session(jsonl(tmp_path / "s.jsonl", CLAUDE_USER, *bad, CLAUDE_REPLY))
    assert len(report.diagnostics) == MAX_DIAGNOSTICS + 1
    assert report.diagnostics[-1].message == "7 more diagnostics not shown"
    assert report.summary.endswith(f"; {MAX_DIAGNOSTICS + 7} diagnostics")
    assert report.replies == 1


def test_a_record_written_twice_is_taken_once(tmp_path: Path) -> None:
    report = read_session(jsonl(tmp_path / "s.jsonl", CLAUDE_USER, CLAUDE_USER, CLAUDE_REPLY, CLAUDE_REPLY))
    assert said(report) == [("user", "first words"), ("talk", "first reply")]
    assert report.notes == ("2 records written twice skipped",)


def test_a_fault_of_the_reader_is_a_refusal_not_an_exception(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object) -> object:
        raise KeyError("boom")

    monkeypatch.setattr(imports._claude, "read", broken)
    report = read_session(jsonl(tmp_path / "s.jsonl", CLAUDE_USER))
    assert report.refused
    assert report.summary == f"{tmp_path / 's.jsonl'}: could not be read: KeyError: 'boom'"


def test_a_broken_eukhe_export(tmp_path: Path) -> None:
    path = tmp_path / "e.json"
    path.write_text('{\n  "session": "s",\n  "runs": [\n    {"run": "s/0001", "messages": [\n')
    report = read_session(path, format="eukhe")
    assert report.summary == (
        f"{path}: not an eukhe session export (not JSON: Expecting value at line 5 column 1)"
    )
    path.write_text(
        '{"session": "s", "runs": [7, {"run": "s/0002", "messages": [{"content": "x"}, '
        '{"role": "wizard", "content": "y"}, {"role": "user", "content": "hello"}]}]}'
    )
    report = read_session(path)
    assert said(report) == [("user", "hello")]
    assert lines(report) == [
        (None, "runs[0] is not a run with a list of messages; skipped"),
        (None, "runs[1].messages[0] is not a message with a role; skipped"),
        (None, "runs[1].messages[1] has an unknown role 'wizard'; skipped"),
    ]


def test_a_bad_timestamp_leaves_the_item_without_a_date(tmp_path: Path) -> None:
    report = read_session(jsonl(tmp_path / "s.jsonl", {**CLAUDE_USER, "timestamp": "yesterday"}))
    assert report.items[0].date is None
    assert report.diagnostics == ()


def test_the_same_lines_through_each_reader_never_raise(tmp_path: Path) -> None:
    odd = [
        {"type": "user", "uuid": "u", "sessionId": "s", "message": {"role": "user", "content": 5}},
        {
            "type": "user",
            "uuid": "v",
            "sessionId": "s",
            "message": {"role": "user", "content": [None, 3, {"type": 1}]},
        },
        {"type": "assistant", "uuid": "w", "sessionId": "s", "message": {"content": {"text": "x"}, "id": []}},
        {
            "type": "message",
            "id": 9,
            "message": {"role": "user", "content": [{"type": "text", "text": None}]},
        },
        {"type": "session_meta", "payload": {"id": 7, "source": []}},
        {"type": "event_msg", "payload": {"type": "user_message", "message": ["x"]}},
        {"type": "response_item", "payload": {"type": "message", "role": "user", "content": 3}},
        {"type": "session", "id": None},
    ]
    path = jsonl(tmp_path / "s.jsonl", *odd)
    for name in ("claude-code", "codex", "pi"):
        report = read_session(path, format=name)
        assert not report.refused, report.summary
        assert report.items == ()


def test_a_new_record_type_on_every_line_is_one_diagnostic(tmp_path: Path) -> None:
    new = [{"type": "future-thing", "uuid": f"f{n}", "sessionId": "s1"} for n in range(500)]
    report = read_session(jsonl(tmp_path / "s.jsonl", CLAUDE_USER, *new, CLAUDE_REPLY))
    assert [(d.line, d.message) for d in report.diagnostics] == [
        (2, "unknown record type 'future-thing'; skipped, as is every later line of it")
    ]
    assert report.notes == ("499 more lines of unknown types skipped",)
    assert report.replies == 1
