"""Repeat rows, counted from the request context (spec H4.8 rule 4)."""

from __future__ import annotations

from eukhe.ai.reply import ToolCall
from eukhe.ai.request import Message
from eukhe.run.repeat import canonical_arguments, rounds_in_a_row, same_calls


def call(name: str, args: dict[str, object], cid: str) -> ToolCall:
    return ToolCall(cid, name, "", args)


def round_(n: int, args: dict[str, object], result: str, error: bool = False) -> list[Message]:
    c = call("read", args, f"c{n}")
    return [Message("assistant", "", (c,)), Message("tool", result, call_id=f"c{n}", is_error=error)]


def test_canonical_arguments_ignore_the_intent_and_the_key_order() -> None:
    a = canonical_arguments({"b": {"y": 1, "x": [2, {"q": 1, "p": 2}]}, "a": 1, "i": "look at the file"})
    b = canonical_arguments({"a": 1, "b": {"x": [2, {"p": 2, "q": 1}], "y": 1}, "i": "something else"})
    assert a == b == '{"a":1,"b":{"x":[2,{"p":2,"q":1}],"y":1}}'
    assert canonical_arguments({"b": {"i": 1}}) != canonical_arguments({"b": {}})  # only the top level


def test_counts_the_rounds_with_the_same_calls_and_the_same_results() -> None:
    ctx = [Message("user", "go")]
    for n in range(4):
        ctx += round_(n, {"path": "a"}, "same text")
    assert rounds_in_a_row(ctx) == 4
    assert same_calls([call("read", {"path": "a"}, "new")], ctx)
    ctx += round_(9, {"path": "a"}, "changed text")
    assert rounds_in_a_row(ctx) == 1
    ctx += round_(10, {"path": "a"}, "changed text", error=True)
    assert rounds_in_a_row(ctx) == 1  # the error flag counts
    ctx.append(Message("system", "a system message does not end the row"))
    ctx += round_(11, {"path": "a"}, "changed text", error=True)
    assert rounds_in_a_row(ctx) == 2
    ctx.append(Message("user", "steer"))
    assert rounds_in_a_row(ctx) == 0
    assert not same_calls([call("read", {"path": "a"}, "x")], ctx)  # a user message ends the row
    ctx += round_(12, {"path": "a"}, "changed text", error=True)
    assert rounds_in_a_row(ctx) == 1


def test_calls_in_any_order_are_the_same_calls() -> None:
    a, b = call("read", {"path": "a"}, "1"), call("grep", {"q": "x"}, "2")
    ctx = [
        Message("assistant", "", (a, b)),
        Message("tool", "A", call_id="1"),
        Message("tool", "B", call_id="2"),
    ]
    assert same_calls([call("grep", {"q": "x"}, "9"), call("read", {"path": "a"}, "8")], ctx)
    assert not same_calls([call("grep", {"q": "x"}, "9")], ctx)
