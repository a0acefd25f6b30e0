"""The H7.3 check of one skill file or prompt template, and its texts."""

from __future__ import annotations

import pytest

from eukhe.rules import skill_load
from eukhe.rules.skill_load import File, Front, Kind, Read


def skill(meta: dict[object, object] | None, folder: str = "pdf-tools", **kw: object) -> File:
    front = Front.NONE if meta is None else Front.MAPPING
    return File(Kind.SKILL, folder, kw.pop("read", Read.OK), kw.pop("front", front), meta=meta, **kw)  # type: ignore[arg-type]


def test_a_skill_with_a_description_loads_under_its_folder_s_name() -> None:
    c = skill_load.check_file(skill({"description": "  Fill PDF forms. "}), {})
    assert (c.name, c.loads, c.messages, c.description) == ("pdf-tools", True, (), "Fill PDF forms.")
    c = skill_load.check_file(
        skill({"name": "pdf", "description": "x", "disable-model-invocation": True}), {}
    )
    assert (c.name, c.loads, c.disable_model_invocation) == ("pdf", True, True)


@pytest.mark.parametrize(
    ("file", "messages"),
    [
        (skill(None), ["skill without description"]),
        (skill({"description": "   "}), ["skill without description"]),
        (
            skill({"name": "PDF--x", "description": ["a"]}),
            [
                "invalid name 'PDF--x': use lowercase letters, digits and single hyphens",
                "invalid description: expected text, got list",
            ],
        ),
        (
            skill({"name": "a" * 65, "description": "d" * 1025, "disable-model-invocation": "yes"}),
            [
                f"invalid name {'a' * 65!r}: longer than 64 characters (65)",
                "invalid description: longer than 1024 characters (1025)",
                "invalid disable-model-invocation: expected true or false, got str",
            ],
        ),
        (skill({"name": 7, "description": "d"}), ["invalid name: expected text, got int"]),
        (skill(None, read=Read.FILE, detail="Permission denied"), ["unreadable file: Permission denied"]),
        (skill(None, read=Read.ENTRY, detail="Too many levels"), ["unreadable entry: Too many levels"]),
        (skill(None, read=Read.MISSING), ["path missing"]),
        (skill(None, read=Read.NOT_MARKDOWN), ["path not markdown: expected a .md file"]),
        (
            skill(None, front=Front.INVALID, detail="line 2 column 3: mapping values"),
            ["invalid YAML frontmatter: line 2 column 3: mapping values"],
        ),
    ],
)
def test_every_failure_is_a_message_and_no_load(file: File, messages: list[str]) -> None:
    c = skill_load.check_file(file, {})
    assert (c.loads, list(c.messages)) == (False, messages)


def test_the_first_name_wins_and_the_next_loses_a_collision() -> None:
    c = skill_load.check_file(skill({"description": "d"}), {"pdf-tools": "/u/skills/pdf-tools/SKILL.md"})
    assert not c.loads
    assert c.messages == (
        "skill losing a name collision: 'pdf-tools' was loaded first from /u/skills/pdf-tools/SKILL.md",
    )
    t = File(Kind.TEMPLATE, "review", Read.OK, Front.NONE, body="Review it")
    assert skill_load.check_file(t, {"review": "/a/review.md"}).messages == (
        "template losing a name collision: 'review' was loaded first from /a/review.md",
    )


def test_a_template_needs_no_description_and_takes_its_first_body_line_cut_at_60() -> None:
    body = "\n\n   " + "w" * 70 + "\nmore"
    t = skill_load.check_file(File(Kind.TEMPLATE, "review", Read.OK, Front.NONE, body=body), {})
    assert (t.name, t.loads, t.description) == ("review", True, "w" * 60)
    meta = {"description": "Review staged changes", "argument-hint": "<focus>", "name": "ignored"}
    t = skill_load.check_file(File(Kind.TEMPLATE, "review", Read.OK, Front.MAPPING, meta=meta, body="x"), {})
    assert (t.name, t.description, t.argument_hint) == ("review", "Review staged changes", "<focus>")
    assert skill_load.summary(None, "") == ""


def test_the_ignore_file_texts() -> None:
    assert (
        skill_load.unreadable_ignore_file("Permission denied") == "unreadable ignore file: Permission denied"
    )
    assert (
        skill_load.non_glob_rule(3, "\\", "Invalid git pattern")
        == "non-glob ignore rule on line 3: '\\\\': Invalid git pattern"
    )


def test_names() -> None:
    assert all(skill_load.name_ok(n) for n in ("a", "pdf-tools", "x1-2y"))
    assert not any(skill_load.name_ok(n) for n in ("", "-a", "a-", "a--b", "A", "a_b", "a b", "é"))
