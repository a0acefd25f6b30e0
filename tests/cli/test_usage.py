"""Tokens and cost: summed over a run's replies (a noted one and a retried one too, once each),
priced from the settings' table, shown in `--json`, `--events` and `eukhe run`'s last line."""

from __future__ import annotations

import json
from pathlib import Path

from eukhe.ai.anthropic import Merge
from eukhe.ai.faux import FauxServer, parse
from eukhe.display.view import View
from eukhe.events import event
from eukhe.run.usage import Tally
from eukhe.settings.run import Price
from tests.proc import eukhe

SCRIPT = [
    {"text": "", "usage": [100, 5]},  # no text and no call: a note, then the request again
    {"error": {"status": 503, "retryAfter": 0}},  # a retry: nothing came back, nothing counted
    {"calls": [{"name": "read", "arguments": {"path": "a.txt"}}], "usage": [200, 20, 150]},
    {"text": "It says alpha.", "usage": [300, 30, 250]},
]
PRICE = {"input": 2.0, "output": 10.0, "cached": 0.5}


def settings(tmp_path: Path, price: dict[str, float] | None) -> None:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    model: dict[str, object] = {"contextWindow": 20_000}
    if price is not None:
        model["price"] = price
    data = {"models": {"vllm/m": model}, "retry": {"baseDelayMs": 1}}
    (home / "settings.json").write_text(json.dumps(data))


def test_a_runs_usage_sums_every_reply_once_and_is_priced_from_the_settings(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    settings(tmp_path, PRICE)
    with FauxServer(parse(SCRIPT)) as server:
        done = eukhe(
            "run", "--model", "vllm/m", "--base-url", server.url, "--json", "read a.txt", cwd=tmp_path
        )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert (out["notes"], out["retries"], out["rounds"]) == (1, 1, 1), out
    # input 600 of which 400 cached: 200 * 2 + 400 * 0.5 + 55 * 10 = 1150 per million
    assert out["usage"] == {"input": 600, "output": 55, "cached": 400, "reasoning": 0, "cost": 0.00115}
    assert out["total_cost_usd"] == 0.00115  # the same, where a script reading Claude Code's looks
    last = "answered in 4 model calls: 1 tool round, 1 note, 1 retry · 600 in (400 cached) · 55 out · $0.0011"
    assert last in done.stderr


def test_without_a_price_the_tokens_show_alone_and_the_events_carry_the_running_sum(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    settings(tmp_path, None)
    with FauxServer(parse(SCRIPT)) as server:
        done = eukhe(
            "run", "--model", "vllm/m", "--base-url", server.url, "--events", "read a.txt", cwd=tmp_path
        )
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    used = [e for e in events if e["type"] == "usage"]
    assert [(e["input"], e["output"]) for e in used] == [(100, 5), (100, 5), (300, 25), (600, 55)]
    assert [e["context"] for e in used] == [100, 100, 200, 300]  # the last reply's input
    assert all(e["window"] == 20_000 and "cost" not in e for e in used)
    assert used[-1]["text"] == "600 in (400 cached) · 55 out · context 1% of 20.0k"
    assert events[-1]["usage"] == {"input": 600, "output": 55, "cached": 400, "reasoning": 0}
    assert events[-1]["total_cost_usd"] == 0.0  # no price: a number all the same


def test_anthropics_input_holds_the_cache_reads_and_writes() -> None:
    a = Merge("anthropic")
    usage = {"input_tokens": 50, "cache_read_input_tokens": 900, "cache_creation_input_tokens": 50}
    list(a.event({"type": "message_start", "message": {"usage": {**usage, "output_tokens": 1}}}))
    end = {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 70}}
    list(a.event(end))
    assert (a.usage.input, a.usage.cache_read, a.usage.output) == (1000, 900, 70)


def test_the_cost_prices_cached_tokens_apart_or_as_input() -> None:
    t = Tally(input=1_000_000, output=100_000, cached=600_000)
    assert t.cost(Price(3.0, 15.0, 0.3)) == 400_000 * 3.0 / 1e6 + 600_000 * 0.3 / 1e6 + 1.5
    assert t.cost(Price(3.0, 15.0)) == 3.0 + 1.5
    assert t.cost(None) is None


def test_the_agents_status_line_and_usage_command_sum_the_sessions_runs() -> None:
    v = View(clock=lambda: 0.0)
    for rid, inp, cost in (("s/1", 1000, 0.01), ("s/2", 3000, 0.02)):
        v.started(rid, None)
        running = {"input": inp, "output": 10, "context": inp, "window": 10_000}
        v.add(event("usage", "", run=rid, data=running))
        assert v.status().endswith(f"ctx {inp * 100 // 10_000}% · Ctrl-C aborts")
        used = {"input": inp, "output": 10, "cached": 0, "reasoning": 0, "cost": cost}
        v.add(event("outcome", "answered", run=rid, data={"outcome": "answered", "calls": 1, "usage": used}))
        v.ended()
    assert v.status() == "ready" and v.spent_line() == "4.0k in · 20 out · $0.0300"
    assert v.usage_lines() == [
        "this run: 3.0k in · 10 out",
        "this session: 4.0k in · 20 out · $0.0300, over 2 runs",
        "context: 3.0k tokens of 10.0k (30%)",
    ]
