"""The interactive agent as a person uses it: the real `eukhe` in tmux against the faux
model on loopback, typed into and read from the screen."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

from eukhe.ai.faux import FauxServer, parse
from eukhe.run.loop import ABORT_GRACE
from tests.proc import eukhe
from tests.ui.term import Term, faux_home, needs_tmux, screenshots

pytestmark = needs_tmux


def session_of(text: str) -> str:
    found = re.search(r"session (\d{8}-\d{6}-[0-9a-f]+)", text)
    assert found, text
    return found.group(1)


def show(session: str, cwd: Path, home: Path) -> dict[str, Any]:
    done = eukhe("session", "show", "--json", session, cwd=cwd, home=home, timeout=60)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def test_a_prompt_is_answered(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    script = [
        {"calls": [{"name": "read", "arguments": {"path": "a.txt"}}]},
        {"text": "The file says alpha.\nNothing more.", "chunks": 5, "delay": 0.05},
    ]
    with FauxServer(parse(script)) as server, Term(tmp_path, tmp_path / "home") as t:
        faux_home(tmp_path / "home", server.url)
        t.ready()
        t.paste("what does a.txt say?\nanswer in two lines")  # a paste keeps its newline, sends nothing
        t.until("the pasted lines in the prompt", lambda s: "  answer in two lines" in t.screen())
        assert not server.seen
        t.keys("Enter")
        text = t.until("✓ answered")
        t.until("the prompt idle again", lambda s: bool(re.search(r"ready · session \d", t.screen())))
        shots = screenshots()
        if shots is not None:
            t.svg(shots / "agent-answer.svg", "eukhe: a prompt answered")
    assert "› what does a.txt say?\nanswer in two lines" in text
    assert server.seen[0].body["messages"][-1]["content"] == "what does a.txt say?\nanswer in two lines"
    assert '  tool: [1] read {"path": "a.txt"}' in text and "  ← [1] ok, 7 chars: 1" in text
    assert "The file says alpha.\nNothing more.\n✓ answered in 2 model calls: 1 tool round" in text


def test_a_model_its_local_server_does_not_list_is_said_once_the_session_opens(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with FauxServer(parse(["unused"]), models=("qwen3:8b",)) as server, Term(tmp_path, home) as t:
        faux_home(home, server.url)
        t.ready()
        text = t.until("does not list")
    said = f"· the server at {server.url} does not list the model 'm'; it lists: qwen3:8b. llama.cpp answers"
    assert text.count(said) == 1, text
    assert text.index("· session ") < text.index(said)


def test_a_steer_while_a_tool_runs_enters_at_the_round_end(tmp_path: Path) -> None:
    script = [
        {"calls": [{"name": "bash", "arguments": {"command": "sleep 3; echo slept"}}]},
        {"when": "keep it short", "text": "Slept. Short."},
        "The steer never came.",
    ]
    with FauxServer(parse(script)) as server, Term(tmp_path, tmp_path / "home") as t:
        faux_home(tmp_path / "home", server.url)
        t.ready()
        t.send("sleep a little")
        t.until("tool: [1] bash")
        t.send("keep it short")
        queued = t.until("queued steer: keep it short")
        assert "✓ answered" not in queued  # typed while the tool ran
        text = t.until("✓ answered")
        sent = server.seen[1].body["messages"]
    result, steer, answer = (text.index(s) for s in ("← [1] ok", "↳ steer: keep it short", "Slept. Short."))
    assert result < steer < answer
    assert [m["role"] for m in sent[-2:]] == ["tool", "user"] and sent[-1]["content"] == "keep it short"


def test_ctrl_c_in_the_middle_of_a_stream_aborts_and_a_new_prompt_is_answered(tmp_path: Path) -> None:
    words = " ".join(f"w{i}" for i in range(200))
    script = [{"text": words, "chunks": 200, "delay": 0.1}, "The second answer."]
    home = tmp_path / "home"
    with FauxServer(parse(script)) as server, Term(tmp_path, home) as t:
        faux_home(home, server.url)
        t.ready()
        t.send("count for me")
        t.until("w12 ")
        pressed = time.monotonic()
        t.keys("C-c")
        text = t.until("■ aborted", wait=ABORT_GRACE + 5)
        took = time.monotonic() - pressed
        assert took <= ABORT_GRACE + 1, f"shown aborted {took:.1f} s after Ctrl-C"
        assert "w5 w6 w7" in text  # what streamed stays on the screen
        t.until("ready · session")
        t.send("and now?")
        text = t.until("The second answer.")
        t.until("idle", lambda s: bool(re.search(r"ready · session \d", t.screen())))
        t.keys("C-c")  # at an idle prompt: the first says how to leave, the second leaves
        t.until("Ctrl-C again to exit")
        t.keys("C-c")
        left = t.until("[eukhe exited] 0")
    session = session_of(text)
    assert f"· eukhe --session {session} opens this session again\n[eukhe exited] 0" in left
    first = show(session, tmp_path, home)["runs"][0]
    assert first["outcome"] == "aborted"
    assert first["messages"][0] == {**first["messages"][0], "role": "user", "content": "count for me"}
    cut = first["messages"][1]  # what streamed before the abort, kept and marked (H4.6)
    assert cut["role"] == "assistant" and cut["isError"], first["messages"]
    assert cut["content"].startswith("w0 w1 w2") and cut["content"].endswith("\n[cut here by the abort]")


def test_a_message_typed_at_once_after_ctrl_c_is_sent_by_its_first_enter(tmp_path: Path) -> None:
    """The race a person met: Ctrl-C, then a question typed and sent before the aborted run
    had ended. It was queued as a steer of the dying run and came back to the prompt, so it
    took a second Enter. Typed after a Ctrl-C, it is the next run's prompt."""
    words = " ".join(f"w{i}" for i in range(200))
    script = [
        {"text": words, "chunks": 200, "delay": 0.1},
        {"when": "and now?", "text": "The second answer."},
    ]
    with FauxServer(parse(script)) as server, Term(tmp_path, tmp_path / "home") as t:
        faux_home(tmp_path / "home", server.url)
        t.ready()
        t.send("count for me")
        t.until("w12 ")
        t.keys("C-c")
        t.type("and now?")
        t.keys("Enter")  # at once: the run is still ending
        text = t.until("The second answer.")
        t.until("idle", lambda s: bool(re.search(r"ready · session \d", t.screen())))
        prompt_line = t.screen().splitlines()
    assert "■ aborted" in text and text.index("■ aborted") < text.index("› and now?")
    assert server.seen[-1].body["messages"][-1]["content"] == "and now?"
    assert not any(line.startswith("› and now?") for line in prompt_line[-3:])  # not back in the prompt


def test_a_stalled_stream_shows_its_countdown_and_then_its_note(tmp_path: Path) -> None:
    script = [
        {"text": "thinking it over", "chunks": 2, "stallAfter": 1, "stall": 60},
        {"when": "Harness note", "text": "Done after the stall."},
    ]
    settings = {"retry": {"provider": {"streamIdleTimeoutMs": 4000}}}
    with FauxServer(parse(script)) as server, Term(tmp_path, tmp_path / "home") as t:
        faux_home(tmp_path / "home", server.url, settings)
        t.ready()
        t.send("go")
        t.until("a stall at 4 s", lambda s: bool(re.search(r"quiet [1-3] s; a stall at 4 s", s)))
        shots = screenshots()
        if shots is not None:
            t.svg(shots / "agent-stall.svg", "eukhe: a stalled stream, its countdown")
        text = t.until("✓ answered")
    assert "↻ note: Harness note, attempt 2: your previous reply produced no output for 4 s" in text
    assert "Done after the stall." in text and re.search(r"\b1 note\b", text)


def test_memory_zoom_and_the_other_commands(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("Answer in one line.\n")
    with FauxServer(parse(["Kumquats are small."])) as server, Term(tmp_path, tmp_path / "home") as t:
        faux_home(tmp_path / "home", server.url)
        t.ready()
        t.send("/context")
        t.until("/context", lambda s: f"{tmp_path}/AGENTS.md: 20 bytes" in s)
        t.send("tell me about kumquats")
        session = session_of(t.until("✓ answered"))
        t.send("/memory")
        text = t.until("view: ", lambda s: bool(re.search(r"\d+ messages; lines: \d+ built", s)))
        assert "compactor calls running:" in text
        t.send("/zoom 0 1")
        t.until("zoomed", lambda s: s.count("tell me about kumquats") >= 2)
        t.send("/zoom 3 1")
        t.until("/zoom: 3+1 is no line of the chat")  # a command that fails says why, in one line
        t.send("/sessions")
        t.until(f"{session} (this one)")
        t.send("/session nosuch")
        t.until("/session: no session 'nosuch' (/sessions lists them)")
        t.send("/nope")
        t.until("unknown command /nope: /help lists the commands and templates")
        t.send("/help")
        t.until("/zoom ID N: open a line of the chat's view")
        t.send("/model nosuch/m")
        after = t.until("/model: ", lambda s: "/model: " in s.partition("› /model nosuch/m")[2])
        assert "unknown provider 'nosuch'" in after.partition("› /model nosuch/m")[2]  # why, in its line
        t.send("/status")
        t.until(f"session {session}: ready")


def test_rewind_chosen_from_its_list_and_fork_then_go_on(tmp_path: Path) -> None:
    """`/rewind` lists the session's runs; `/rewind 2 conversation` shows the plan, `... yes`
    ends run 2 in the transcript and a file run 2 wrote is put back with `files yes`; `/fork 1`
    opens a new session from run 1, whose next run goes on from there."""
    (tmp_path / "a.txt").write_text("old\n")
    script = [
        "First answer.",
        {"calls": [{"name": "write", "arguments": {"path": "a.txt", "content": "new\n"}}]},
        "Wrote it.",
        "Forked answer.",
    ]
    with FauxServer(parse(script)) as server, Term(tmp_path, tmp_path / "home") as t:
        faux_home(tmp_path / "home", server.url)
        t.ready()
        t.send("first question")
        session = session_of(t.until("✓ answered"))
        t.send("write the file")
        t.until("wrote", lambda s: "Wrote it." in s and s.count("✓ answered") >= 2)
        t.until("idle", lambda s: bool(re.search(r"ready · session \d", t.screen())))
        assert (tmp_path / "a.txt").read_text() == "new\n"
        for tried in range(1, 11):  # the session's task may still be looking for queued messages
            t.send("/rewind")
            listed = t.until(
                "an answer", lambda s, n=tried: "  2  write the file" in s or s.count("at work") >= n
            )
            if "  2  write the file" in listed:
                break
            time.sleep(0.5)
        assert "  1  first question" in listed and "  2  write the file" in listed
        t.send("/rewind 2 conversation")
        t.until("the plan", lambda s: "run 2 would end in this session's transcript" in s)
        t.send("/rewind 2 files yes")
        t.until("files back", lambda s: "the files: restored 1 to before run" in s)
        assert (tmp_path / "a.txt").read_text() == "old\n"
        t.send("/rewind 2 conversation yes")
        t.until("rewound", lambda s: "run 2 ended in the transcript" in s)
        t.send("/fork 1")
        forked = t.until("forked", lambda s: f"forked session {session} after its run 1" in s)
        fork = forked.rpartition("this is session ")[2].split()[0]
        t.send("a question in the fork")
        t.until("answered in the fork", lambda s: "Forked answer." in s)
    prompts = [[m["content"] for r in show(x, tmp_path, tmp_path / "home")["runs"] for m in r["messages"]
                if m["role"] == "user"] for x in (session, fork)]  # fmt: skip
    assert prompts == [["first question"], ["first question", "a question in the fork"]]


def test_a_second_terminal_waits_for_the_root_turn_lease_and_takes_it(tmp_path: Path) -> None:
    # the first stream holds after its first words until the second terminal has said it waits,
    # however slow the machine (a fixed 8 s stream had ended before a slow second terminal asked)
    gate = tmp_path / "go on"
    held = {"text": " ".join(f"s{i}" for i in range(150)), "chunks": 150, "stallAfter": 5, "stall": 120}
    script = [{**held, "stallUntil": str(gate)}, "The second terminal's answer."]
    home = tmp_path / "home"
    with FauxServer(parse(script)) as server, Term(tmp_path, home) as one, Term(tmp_path, home) as two:
        faux_home(home, server.url)
        one.ready()
        two.ready()
        one.send("the long one")
        first = session_of(one.until("s3 "))
        two.send("the short one")
        waiting = two.until("waiting for the root-turn lease")
        assert f"session {first}" in waiting
        assert "The second terminal's answer." not in waiting
        gate.touch()
        one.until("✓ answered")
        text = two.until("✓ answered")
    assert "The second terminal's answer." in text


def test_the_printed_way_back_opens_the_session_on_the_model_and_server_it_ran_with(tmp_path: Path) -> None:
    """A session opened with --model and --base-url (the home names no model), left, and
    opened again as the agent says on leaving, with no flag: its transcript shows at once
    and its next prompt goes to the same server."""
    home = tmp_path / "home"
    home.mkdir()
    with FauxServer(parse(["The first answer.", "The second answer."])) as server:
        with Term(tmp_path, home, "--model", "vllm/m", "--base-url", server.url) as one:
            one.ready()
            one.send("first question")
            text = one.until("✓ answered")
            one.until("idle", lambda s: bool(re.search(r"ready · session \d", one.screen())))
            one.keys("C-c")
            one.until("Ctrl-C again to exit")
            one.keys("C-c")
            left = one.until("[eukhe exited] 0")
        printed = re.search(r"· eukhe (--session \S+) opens this session again", left)
        assert printed, left
        assert printed.group(1) == f"--session {session_of(text)}"
        with Term(tmp_path, home, *printed.group(1).split()) as two:
            two.until("its transcript", lambda s: "› first question" in s and "The first answer." in s)
            two.ready()
            two.send("second question")
            two.until(
                "the second answer", lambda s: "The second answer." in s.partition("› second question")[2]
            )
    asked = [[m["content"] for m in seen.body["messages"] if m["role"] == "user"] for seen in server.seen]
    assert any(user[-1:] == ["second question"] for user in asked)  # sent to the server it ran with


def test_continue_opens_this_folders_latest_session_not_a_newer_one_elsewhere(tmp_path: Path) -> None:
    """`eukhe -c` opens the session that last ran in this folder: its transcript shows and the
    next prompt joins it; a newer session of another folder is not it; with none here, a new one."""
    home, other, empty = tmp_path / "home", tmp_path / "other", tmp_path / "empty"
    other.mkdir()
    empty.mkdir()
    with FauxServer(parse(["The first answer.", "Elsewhere.", "The second answer."])) as server:
        flags = ("--model", "vllm/m", "--base-url", server.url)
        assert eukhe("run", *flags, "first question", cwd=tmp_path, home=home).returncode == 0
        assert eukhe("run", *flags, "a question elsewhere", cwd=other, home=home).returncode == 0
        with Term(tmp_path, home, "-c", *flags) as t:
            t.until("its transcript", lambda s: "› first question" in s and "The first answer." in s)
            t.ready()
            assert "elsewhere" not in t.screen()
            t.send("second question")
            t.until("the answer", lambda s: "The second answer." in s.partition("› second question")[2])
        with Term(empty, home, "--continue", *flags) as t:
            t.until("a new session", lambda s: "no session has run in this folder yet (-c)" in s)
    last = server.seen[-1].body["messages"]
    assert last[-1]["content"] == "second question"
    assert "first question" in last[0]["content"]  # the session's chat, in its view
    assert "a question elsewhere" in server.seen[1].body["messages"][-1]["content"]


def test_at_completes_a_file_that_is_attached_and_usage_shows_the_sessions_tokens(tmp_path: Path) -> None:
    """`@ma` offers src/main.py (not what .gitignore ignores); Tab takes it; the file goes with
    the prompt; `/usage` then shows the run's and the session's tokens and cost, and the idle
    status line the session's."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("print('hi')\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "main.py").write_text("")
    (tmp_path / ".gitignore").write_text("build/\n")
    home = tmp_path / "home"
    price = {"models": {"vllm/m": {"price": {"input": 1.0, "output": 2.0}}}}
    with FauxServer(parse([{"text": "It prints hi.", "usage": [1200, 30]}])) as server:
        faux_home(home, server.url, price)
        with Term(tmp_path, home) as t:
            t.ready()
            t.type("what does @ma")
            t.until("the completion", lambda s: "src/main.py" in s)
            assert "build/main.py" not in t.screen()
            t.keys("Tab")
            t.until("taken", lambda s: "what does @src/main.py" in s)
            t.keys("Enter")
            t.until("answered", lambda s: "✓ answered" in s)
            t.until("idle", lambda s: "1.2k in · 30 out · $0.0013 · /help" in s)
            t.send("/usage")
            t.until("/usage", lambda s: "this session: 1.2k in · 30 out · $0.0013, over 1 run" in s)
        sent = server.seen[0].body["messages"][-1]["content"]
    assert sent.startswith("what does @src/main.py") and "<file path=\"src/main.py\">\n1\tprint('hi')" in sent


def test_a_closed_terminal_loses_nothing_and_reopening_shows_the_session_as_it_is(tmp_path: Path) -> None:
    slow = {"text": " ".join(f"s{i}" for i in range(60)), "chunks": 60, "delay": 0.2}
    script = [slow, "Finished by the owner."]
    home = tmp_path / "home"
    with FauxServer(parse(script)) as server:
        faux_home(home, server.url)
        with Term(tmp_path, home) as one:
            one.ready()
            one.send("a long answer, please")
            session = session_of(one.until("s3 "))
        # the terminal is gone (its tmux server killed: a hang-up), its run in flight
        with Term(tmp_path, home, "--session", session) as two:
            ended = f"── run {session}/0001 (answered)"  # the owner finished it, or finishes it now:
            text = two.until("the run answered", lambda s: ended in s or "✓ answered" in s, wait=90)
            assert "› a long answer, please" in text
            two.until("ready · session")
            two.send("and the next?")
            two.until("the next answered", lambda s: "✓ answered" in s.partition("› and the next?")[2])
    runs = show(session, tmp_path, home)["runs"]
    assert [r["outcome"] for r in runs] == ["answered", "answered"]


def test_a_subagent_shows_as_a_line_with_its_clock_and_its_report_comes_when_it_arrives(
    tmp_path: Path,
) -> None:
    from tests.children.test_spawn import bash, spawn

    script = [
        {"when": "count the files", "results": 0, **bash("sleep 4; ls | wc -l")},
        {"when": "count the files", "results": 1, "text": "there are 2 files"},
        {"when": "[child-exited", "results": 0, "text": "My child counted 2 files."},
        {"when": "spawn one", "results": 0, **spawn("count the files")},
        {"when": "spawn one", "results": 1, "text": "Spawned it."},
    ]
    with FauxServer(parse(script)) as server, Term(tmp_path, tmp_path / "home") as t:
        faux_home(tmp_path / "home", server.url)
        t.ready()
        t.send("spawn one")
        t.until("Spawned it.")
        working = t.until("the child's line", lambda s: bool(re.search(r"⑂ c1\.1 working, quiet \d+ s", s)))
        assert "My child counted 2 files." not in working
        text = t.until("My child counted 2 files.")
    assert "⑂ child: child c1.1 started" in text
    report = "[child-exited: no-reply child:c1.1] Last assistant text: there are 2 files"
    assert f"⑂ child: report: {report}" in text
    assert "\nthere are 2 files\n" not in text  # the child's own stream is not the session's
    assert (
        text.index("Spawned it.") < text.index("child c1.1 ended: answered") < text.index("My child counted")
    )
