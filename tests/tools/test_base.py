"""`validate` and `call`: every failure but cancellation is a Result the model can read."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any, ClassVar

import pytest

from eukhe.tools import BUILTIN, Context, Result, Tool, call, validate

from .helpers import ctx, matches, run

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "n": {"type": "integer", "minimum": 1, "maximum": 9},
        "x": {"type": "number"},
        "flag": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "opt": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
    },
    "required": ["path"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"path": "a"}, None),
        ({"path": "a", "n": 3, "x": 1.5, "flag": True, "tags": ["a"], "opt": {"a": 1}}, None),
        ({"path": 3}, r"argument 'path': expected a string, got 3"),
        ({"path": None}, r"argument 'path': expected a string, got null"),
        ({}, r"missing required argument 'path'"),
        ({"pth": "a"}, r"missing required argument 'path'"),
        (
            {"path": "a", "pth": "a"},
            r"unknown argument 'pth' \(the arguments are: path, n, x, flag, tags, opt\)",
        ),
        ({"path": "a", "n": True}, r"argument 'n': expected an integer, got true"),
        ({"path": "a", "n": 1.5}, r"argument 'n': expected an integer, got 1\.5"),
        ({"path": "a", "n": 0}, r"argument 'n': must be at least 1, got 0"),
        ({"path": "a", "n": 10}, r"argument 'n': must be at most 9, got 10"),
        ({"path": "a", "x": "1"}, r"argument 'x': expected a number, got \"1\""),
        ({"path": "a", "flag": 1}, r"argument 'flag': expected a boolean, got 1"),
        ({"path": "a", "tags": "a"}, r"argument 'tags': expected an array, got \"a\""),
        ({"path": "a", "tags": ["a", 2]}, r"argument 'tags\[1\]': expected a string, got 2"),
        ({"path": "a", "opt": {}}, r"missing required argument 'opt\.a'"),
        ({"path": "a", "opt": {"a": "b"}}, r"argument 'opt\.a': expected an integer, got \"b\""),
        (["a"], r"arguments must be a JSON object, got \[\"a\"\]"),
        ({"path": "x" * 200}, None),
        ({"path": ["x" * 200]}, r"argument 'path': expected a string, got \[\"x{50,}…"),
    ],
)
def test_validate_names_the_argument_and_why(args: Any, message: str | None) -> None:
    got = validate(SCHEMA, args)
    if message is None:
        assert got is None
    else:
        assert got is not None and re.fullmatch(message, got), got


def test_every_builtin_is_a_tool_with_a_json_schema() -> None:
    assert list(BUILTIN) == ["read", "grep", "glob", "ls", "bash", "edit", "write"]
    for name, tool in BUILTIN.items():
        assert isinstance(tool, Tool) and tool.name == name and tool.description
        assert json.loads(json.dumps(tool.schema))["type"] == "object"
        assert tool.replay_safe is (name in ("read", "grep", "glob", "ls"))


class Boom:
    name = "boom"
    description = "raises"
    schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}, "additionalProperties": False}
    replay_safe = True

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc
        self.runs = 0

    async def run(self, args: dict[str, Any], ctx: Context) -> Result:
        self.runs += 1
        raise self.exc


def test_call_an_unoffered_tool(tmp_path: Path) -> None:
    r = run(call(BUILTIN, "find", {}, ctx(tmp_path)))
    matches(
        r"tool_unavailable: tool 'find' is not offered; "
        r"the tools are: read, grep, glob, ls, bash, edit, write",
        r,
        error=True,
    )
    r = run(call({}, "find", {}, ctx(tmp_path)))
    matches(r"tool_unavailable: tool 'find' is not offered; the tools are: \(none\)", r, error=True)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ('{"path": "a"}', r"arguments to 'read' must be a JSON object, got \"\{\\\"path\\\": \\\"a\\\"\}\""),
        (None, r"arguments to 'read' must be a JSON object, got null"),
        ({"path": 3}, r"argument 'path': expected a string, got 3"),
        ({}, r"missing required argument 'path'"),
        (
            {"pth": "a.txt", "path": "a.txt"},
            r"unknown argument 'pth' \(the arguments are: path, offset, limit\)",
        ),
        ({"path": "a", "offset": 0}, r"argument 'offset': must be at least 1, got 0"),
    ],
)
def test_call_with_bad_arguments_says_why(tmp_path: Path, args: Any, message: str) -> None:
    matches(message, run(call(BUILTIN, "read", args, ctx(tmp_path))), error=True)


def test_call_turns_a_tools_exception_into_a_result(tmp_path: Path) -> None:
    boom = Boom(KeyError("k"))
    r = run(call({"boom": boom}, "boom", {}, ctx(tmp_path)))
    matches(r"'boom' failed: KeyError: 'k'", r, error=True)


def test_call_lets_cancellation_through(tmp_path: Path) -> None:
    boom = Boom(asyncio.CancelledError())
    with pytest.raises(asyncio.CancelledError):
        run(call({"boom": boom}, "boom", {}, ctx(tmp_path)))


def test_call_does_not_start_a_tool_once_aborted(tmp_path: Path) -> None:
    boom = Boom(KeyError("k"))
    c = ctx(tmp_path)
    c.cancel.set()
    matches(r"aborted: 'boom' was not run", run(call({"boom": boom}, "boom", {}, c)), error=True)
    assert boom.runs == 0
