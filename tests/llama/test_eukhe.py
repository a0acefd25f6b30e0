"""eukhe against a real llama.cpp server with a real small model (SmolLM2-135M-Instruct):
the real `eukhe run` process, and the Chat Completions adapter, over loopback HTTP.

The model is weak: it answers in text, wanders, and rarely makes a tool call. What it
does is not scripted, so these tests assert what must hold whatever it does: every run
ends, answered or failed with its cause, inside a bound; an output limit cuts the text
that then answers; the server's tool-parse failure is read as rejected output.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from eukhe.ai import Done, FailureKind, Message, OpenAIChat, Reply, Request, Stop, Tool
from tests import forks
from tests.llama.server import LlamaServer

# every test of the real model on one worker of make test's two: one server of each kind a run
pytestmark = pytest.mark.xdist_group("llama")

RUN_BOUND = 180.0
"""Seconds a whole `eukhe run` against the real model may take: three rounds at most, each
reply at most REPLY_TOKENS, at about 35 tokens/s on one core, with room for a loaded machine."""
REPLY_TOKENS = 64
"""A reply's output limit in the runs that end answered or failed: room for a tool call (about
30 tokens) after some text; 256 cost each run about 7 CPU-seconds more of the model's
generation, and proved nothing more (a reply cut at its limit still answers)."""

WEATHER = Tool(
    "get_weather",
    "Get the current weather for a city",
    {
        "type": "object",
        "properties": {"city": {"type": "string", "description": "City name"}},
        "required": ["city"],
    },
)


def eukhe_run(
    server: LlamaServer, cwd: Path, prompt: str, settings: dict[str, Any], model: str = "llamacpp/smollm2"
) -> tuple[Any, float]:
    """`eukhe run --json` against the server, offering `read` alone (every tool's schema would be
    some 2,700 tokens of prompt: 25 s of a core to read, each run); (its process result, seconds it took)."""
    (cwd / ".eukhe").mkdir(exist_ok=True)
    (cwd / ".eukhe" / "settings.json").write_text(json.dumps(settings))
    began = time.monotonic()
    argv = ["run", "--model", model, "--base-url", server.base_url, "--max-tool-rounds", "3"]
    argv += ["--tools", "read", "--json", prompt]
    done = forks.run(argv, cwd, {**os.environ, "EUKHE_HOME": str(cwd / "home")}, RUN_BOUND + 60)
    return done, time.monotonic() - began


def limited(tokens: int, model: str = "llamacpp/smollm2") -> dict[str, Any]:
    return {"models": {model: {"maxOutputTokens": tokens}}}


def ask(server: LlamaServer, request: Request) -> Reply:
    async def go() -> Reply:
        p = OpenAIChat("llamacpp", base_url=server.base_url, timeout=60)
        try:
            events = [e async for e in p.stream(request)]
        finally:
            await p.close()
        assert sum(isinstance(e, Done) for e in events) == 1 and isinstance(events[-1], Done)
        return events[-1].reply

    return asyncio.run(go())


@pytest.mark.parametrize("template", ["gguf", "tools"])
def test_a_run_against_the_real_model_ends_answered_or_failed_with_its_cause(
    template: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    server: LlamaServer = request.getfixturevalue("llama" if template == "gguf" else "llama_tools")
    (tmp_path / "notes.txt").write_text("The project is called eukhe.\n")
    done, took = eukhe_run(
        server, tmp_path, "Read notes.txt and tell me what the project is called.", limited(REPLY_TOKENS)
    )
    assert took < RUN_BOUND, (took, done.stderr[-2000:])
    assert "Traceback" not in done.stderr, done.stderr[-4000:]
    last = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"{template}: {took:.1f} s: {last}")  # what the model did, for the record (-s)
    assert last["outcome"] in ("answered", "failed"), last
    if last["outcome"] == "answered":
        assert done.returncode == 0 and last["answer"].strip()
        assert last["error"] is None
    else:
        assert done.returncode == 1 and last["error"]["kind"] in ("model_error", "run_limit")
        assert last["error"]["message"].strip()  # the cause, shown
        assert f"failed ({last['error']['kind']}): {last['error']['message']}" in done.stderr


def test_a_small_output_limit_gives_a_length_stop_whose_cut_text_answers(
    llama: LlamaServer, tmp_path: Path
) -> None:
    done, took = eukhe_run(llama, tmp_path, "Tell me a long story about a lighthouse keeper.", limited(6))
    assert took < RUN_BOUND and done.returncode == 0, done.stderr[-2000:]
    last = json.loads(done.stdout.strip().splitlines()[-1])
    assert last["outcome"] == "answered" and last["cut"] is True and last["notes"] == 0
    assert last["answer"].strip() and len(last["answer"]) < 80  # six tokens of text
    assert "✂ cut: the answer hit the 6-token output limit and is cut short" in done.stderr
    assert "does not list the model" not in done.stderr  # the server lists smollm2 (its alias)


def test_a_name_the_server_does_not_list_is_said_once_and_the_run_goes_on(
    llama: LlamaServer, tmp_path: Path
) -> None:
    """llama.cpp answers with the model it loaded whatever the name: without a word, a wrong
    name would pass unnoticed."""
    model = "llamacpp/nosuchmodel"
    done, took = eukhe_run(llama, tmp_path, "Say hi.", limited(6, model), model=model)
    assert took < RUN_BOUND and done.returncode == 0, done.stderr[-2000:]
    line = (
        f"eukhe: the server at {llama.base_url} does not list the model 'nosuchmodel'; it lists: "
        "smollm2. llama.cpp answers with the model it loaded whatever the name; other servers refuse it\n"
    )
    assert done.stderr.count(line) == 1, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1])["outcome"] == "answered"


def test_the_adapter_reads_a_length_stop_and_the_usage_from_the_stream(llama: LlamaServer) -> None:
    ask_story = (Message("user", "Tell me a long story about a lighthouse keeper."),)
    reply = ask(llama, Request("smollm2", ask_story, max_tokens=6, temperature=0.0))
    assert reply.failure is None and reply.stop is Stop.LENGTH and reply.has_text
    assert reply.usage.output == 6 and reply.usage.input > 0  # from the stream's usage chunk
    whole = ask(
        llama,
        Request(
            "smollm2",
            (Message("user", "What is the capital of France? Answer in one word."),),
            max_tokens=64,
            temperature=0.0,
        ),
    )
    assert whole.failure is None and whole.stop is Stop.STOP and whole.has_text
    assert 0 < whole.usage.output < 64 and whole.usage.input > 0


PREFILL = (Message("user", "What is the weather in Paris?"), Message("assistant", "<tool_call>\n"))
"""A request the tools-aware server answers with its tool-parse failure, every time at
temperature 0: the prefilled `<tool_call>` is its grammar's trigger, already spent."""


def test_the_servers_tool_parse_failure_is_read_as_rejected_streamed(llama_tools: LlamaServer) -> None:
    reply = ask(llama_tools, Request("smollm2", PREFILL, tools=(WEATHER,), temperature=0.0))
    assert reply.failure is not None and reply.failure.kind is FailureKind.REJECTED, reply.failure
    assert not reply.failure.retryable and reply.failure.status == 500
    assert "does not match the expected peg-native format" in reply.failure.message


def test_the_servers_tool_parse_failure_is_read_as_rejected_unstreamed(llama_tools: LlamaServer) -> None:
    """The recorded request unstreamed is an HTTP 500 (the adapter always streams: here
    the SDK sends it, and the adapter's own rule for a status error classifies it)."""
    import openai

    from eukhe.ai import errors
    from tests.ai.replay import recording

    body = dict(recording("llamacpp_tool_parse_error_500.json")["request"]["body"])

    async def go() -> Any:
        client = openai.AsyncOpenAI(
            base_url=llama_tools.base_url, api_key="no-key", max_retries=0, timeout=60
        )
        try:
            await client.chat.completions.create(model=body.pop("model"), messages=[], extra_body=body)
        except openai.APIStatusError as e:
            return e
        finally:
            await client.close()
        return None

    e = asyncio.run(go())
    assert e is not None and e.status_code == 500
    failure = errors.http_failure("llamacpp", e.status_code, errors.body_of(e))
    assert failure.kind is FailureKind.REJECTED and not failure.retryable
    assert "does not match the expected peg-native format" in failure.message
