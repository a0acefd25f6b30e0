"""The task list's rule (`rules.todo`), what a view pins of it (`rules.pinned`), and the
`todo` tool: a list is checked and bounded, each bound said with the way out, a refused
call changes nothing; the pins follow the chat, the request cut to its bound; the
permission rule lets `todo` run without asking (it writes nothing of the user's), unless a
rule of the user's names it (`TodoWrite`)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from eukhe.rules import pinned, todo
from eukhe.rules import view as v
from eukhe.rules.permission import Call, Cfg, Kind, Mode, Policy, Rule, Source, Verdict, Why, decide
from eukhe.rules.pinned import REQUEST, Pins
from eukhe.rules.todo import ITEM_BYTES, MAX_ITEMS, State, Task
from eukhe.tools import Context, call
from eukhe.tools.todo import TODO


def item(text: str, state: str = "pending") -> dict[str, str]:
    return {"text": text, "state": state}


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (None, 'the arguments must be an object {"items": [...]}'),
        ({"todos": []}, 'items must be an array of {"text", "state"} objects (an empty one clears the list)'),
        (
            {"items": [item(str(k)) for k in range(MAX_ITEMS + 1)]},
            f"items has {MAX_ITEMS + 1} entries; a list holds at most {MAX_ITEMS}: merge small steps, "
            "or drop the done ones",
        ),
        ({"items": ["read"]}, 'item 1 must be an object {"text", "state"}'),
        ({"items": [item("a"), item("  ")]}, "item 2 has no text: give each item a short text"),
        (
            {"items": [item("é" * ITEM_BYTES)]},
            f"item 1's text is {2 * ITEM_BYTES} bytes; an item has at most {ITEM_BYTES}: say it shorter",
        ),
        (
            {"items": [item("a", "completed")]},
            "item 1's state is 'completed'; it is one of pending, in_progress, done",
        ),
    ],
)
def test_a_list_past_a_bound_is_refused_saying_which_and_the_way_out(args: object, error: str) -> None:
    got = todo.parse(args)
    assert got == todo.Parsed(None, error)
    assert todo.current((Task("kept"),), [args]) == (Task("kept"),)  # and changes nothing


def test_a_list_within_its_bounds_is_taken_whole() -> None:
    most = {"items": [item("x" * ITEM_BYTES, "done")] * MAX_ITEMS}
    assert todo.parse(most).tasks == (Task("x" * ITEM_BYTES, State.DONE),) * MAX_ITEMS
    got = todo.parse({"items": [item("  read it ", "in_progress"), {"text": "then this"}]}).tasks
    assert got == (Task("read it", State.IN_PROGRESS), Task("then this"))
    assert todo.current((Task("old"),), [{"items": []}]) == ()  # an empty list clears it
    assert todo.of_json(todo.json_of(got or ())) == got and todo.of_json("garbage") == ()
    assert todo.summary(got or ()) == "0 of 2 done; in progress: read it"


def test_the_pins_follow_the_chat_and_count_in_its_fit() -> None:
    p = Pins((Task("read", State.DONE), Task("write", State.IN_PROGRESS)), "fix a.py")
    text = pinned.attach("<chat>\n</chat>", p)
    assert text == (
        "<chat>\n</chat>\n\n<tasks>\n"
        + pinned.TASKS_HEAD
        + "\n- [done] read\n- [in progress] write\n</tasks>\n"
        "<request>\n" + pinned.REQUEST_HEAD + "\nfix a.py\n</request>"
    )
    assert pinned.size(p) == len(text.encode()) - len("<chat>\n</chat>") and pinned.size(Pins()) == 0
    assert pinned.attach("<chat>\n</chat>", Pins()) == "<chat>\n</chat>"  # nothing to pin: nothing added
    assert (
        pinned.unpinned(text, p) == "<chat>\n</chat>" == pinned.unpinned("<chat>\n</chat>", p)
    )  # a subagent's
    long = "é" * REQUEST
    assert f"(its first {REQUEST} of {2 * REQUEST} bytes)" in pinned.block(Pins((), long))
    assert pinned.asked("before", None) == "before" and pinned.asked("before", "now") == "now"
    sizes = {v.Node(0, m): 100 for m in range(4)} | {v.Node(1, 0): 10, v.Node(1, 1): 10, v.Node(2, 0): 10}
    w = v.fold(4, sizes, set(sizes), 10**6)
    budget = w.size + 1  # the chat alone fits; with the pins it must merge
    assert v.fit(w, sizes, set(sizes), budget) == w
    fitted = pinned.fit(w, sizes, set(sizes), budget, p)
    assert fitted.size + pinned.size(p) <= v.mark(budget) < budget


def cfg(policy: Policy, person: bool, rules: tuple[Rule, ...] = ()) -> Cfg:
    return Cfg(Mode.WORKSPACE_WRITE, policy, person, sandbox=False, rules=rules)


def test_todo_runs_without_asking_and_a_rule_naming_it_still_wins() -> None:
    """It writes nothing of the user's: no policy asks for it, headless or not, sandbox or none."""
    for policy in Policy:
        for person in (True, False):
            d = decide(cfg(policy, person), Call("todo"))
            assert (d.verdict, d.why) == (Verdict.ALLOW, Why.SESSION_STATE), (policy, person)
    assert Why.SESSION_STATE.value == "it changes only the session's task list, nothing on disk"
    deny = (Rule(Kind.DENY, "TodoWrite", None, Source.HOME),)
    assert decide(cfg(Policy.ON_REQUEST, True, deny), Call("todo")).verdict is Verdict.DENY
    ask = (Rule(Kind.ASK, "TodoWrite", None, Source.HOME),)
    assert decide(cfg(Policy.ON_REQUEST, True, ask), Call("todo")).verdict is Verdict.ASK


def test_the_tool_says_the_list_and_shows_it_or_says_why_not(tmp_path: Path) -> None:
    shown: list[tuple[Task, ...]] = []
    ctx = Context(cwd=tmp_path, todo=shown.append)
    ok = asyncio.run(call({"todo": TODO}, "todo", {"items": [item("read", "in_progress")]}, ctx))
    assert (
        not ok.is_error
        and ok.content == "The task list now (0 of 1 done; in progress: read):\n- [in progress] read"
    )
    assert shown == [(Task("read", State.IN_PROGRESS),)]
    bad = asyncio.run(call({"todo": TODO}, "todo", {"items": [item("read", "later")]}, ctx))
    assert bad.is_error and bad.content == (  # the schema's own words
        'argument \'items[0].state\': expected one of "pending", "in_progress", "done", got "later"'
    )
    long = asyncio.run(call({"todo": TODO}, "todo", {"items": [item("x" * (ITEM_BYTES + 1))]}, ctx))
    assert long.is_error and long.content == (
        f"todo: item 1's text is {ITEM_BYTES + 1} bytes; an item has at most {ITEM_BYTES}: say it shorter; "
        "the list is unchanged"
    )
    assert len(shown) == 1
