"""Every text the harness writes to the model or the user about a run, each in
one place, as the spec has it (H4.1, H4.2, H4.4, H4.7, H4.8).

A harness note goes with the retry request only, never into the transcript; it
names its attempt, so each retry request is new (H4.7).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from eukhe.humanize import seconds as in_words
from eukhe.rules.hook import Event
from eukhe.rules.recovery import ARGUMENTS_SHOWN, CAPS, RCfg
from eukhe.run.repeat import canonical_arguments


def _limit(tokens: int | None) -> str:
    return f"the {tokens}-token output limit" if tokens else "the output limit"


def truncated(tool: str, tokens: int | None) -> str:
    """The result of each call of a reply cut at the output limit (H4.1): not run."""
    return (
        f"Tool {tool} was not run: the reply hit {_limit(tokens)}, so its arguments may be cut. Make the call "
        "again with complete arguments. For large content, write a minimal version first, then extend it with "
        "edits."
    )


def answer_cut(tokens: int | None) -> str:
    """Shown when the answer is text that a length stop cut short (it answers as it is)."""
    return (
        f"the answer hit {_limit(tokens)} and is cut short; "
        "models.<provider/model>.maxOutputTokens sets the limit"
    )


def no_answer(stop: str, thinking_chars: int) -> str:
    """The failed message of a reply with no text and no tool call (H4.7)."""
    return (
        f"The model gave no answer: its reply (stop reason {stop}) has no text and no tool call, "
        f"only {thinking_chars} characters of thinking"
    )


def length_gave_up(thinking_chars: int, caps: RCfg = CAPS) -> str:
    """The run's error when length notes reach their cap (H4.8 Length)."""
    return (
        no_answer("length", thinking_chars) + ". The model hit the output limit while it was still reasoning "
        f"after {caps.long} length notes in a row: use a different model or raise the model's max output tokens."
    )


def repeat_gave_up(names: Sequence[str], rounds: int, caps: RCfg = CAPS) -> str:
    """The run's error when redirect notes reach their cap (H4.8 Repeat)."""
    return (
        f"The model made the same tool calls ({', '.join(names)}) with the same results {rounds} times in a "
        f"row, after {caps.redirect} redirect notes; the harness did not run them again."
    )


def not_ready(seconds: float) -> str:
    """The run's error when a deferred answer passes its deadline (H4.4)."""
    return f"The model's deferred response was not ready by its deadline, {seconds:.0f} s after the request"


def wait_too_long(server_ms: int, max_ms: int, cause: str) -> str:
    """The run's error when a server asks for a longer retry wait than the cap (H4.5):
    the run fails at once rather than sleep for what looks like a hang."""
    return (
        f"the provider asked to wait {_seconds(server_ms)} s before a retry, longer than "
        f"retry.provider.maxRetryDelayMs ({_seconds(max_ms)} s): {cause}"
    )


CUT_BY_ABORT = "\n[cut here by the abort]"
"""The end of an answer an abort cut while it streamed, as the transcript keeps it."""


def refused_again(cause: str) -> str:
    """The run's error when a loopback address refused the connection again after its one short
    retry (`rules.retry`): the cause names the URL and the way out."""
    return f"{cause} (refused again after a retry)"


def _seconds(ms: int) -> str:
    return f"{ms / 1000:.0f}" if ms % 1000 == 0 or ms >= 10_000 else f"{ms / 1000:.1f}"


def run_limit(cap: int) -> str:
    """The run's error at the round cap (H4.2): it names the cap."""
    return (
        f"The run made {cap} tool rounds, its cap (maxToolRounds = {cap}), and stopped: "
        "raise maxToolRounds or ask for a smaller step."
    )


# ---------------------------------------------------------------- harness notes


def _head(attempt: int) -> str:
    return f"Harness note, attempt {attempt}: "


def repeating(attempt: int, line: str, cycle: int) -> str:
    """After a reply the repetition guard cut (H4.7)."""
    what = f'the line "{line}"' if cycle <= 1 else f'a cycle of {cycle} lines ending with the line "{line}"'
    return (
        _head(attempt) + f"your previous reply repeated {what} until it was cut. "
        "Give the answer again; never list the same item twice."
    )


def empty(attempt: int) -> str:
    """After a reply with no text and no tool call (H4.7)."""
    return (
        _head(attempt) + "your previous reply had no text and no tool call. "
        "Give your answer as text, or call a tool."
    )


def stalled(attempt: int, seconds: float) -> str:
    """After a stream that went silent past its idle deadline (H4.5)."""
    return (
        _head(attempt)
        + f"your previous reply produced no output for {in_words(seconds)}, and the harness cut it. "
        "Reason briefly, then act."
    )


def length(attempt: int, row: int, tokens: int | None, caps: RCfg = CAPS) -> str:
    """H4.8 Length: the reply reasoned to the output limit."""
    return (
        _head(attempt) + f"your previous reply hit {_limit(tokens)} while it was still reasoning. It gave no "
        "text and no tool call, so the harness discarded it with every tool call that it planned. If you plan "
        "the whole task again in your reasoning, you hit the same limit. Reason only about the next step, then "
        "call its tool. For a large answer (a file, a document, a long text), write a minimal working version "
        f"first, then extend it with more edits in later turns. Length note {row} of {caps.long}."
    )


MARKUPS = ("hermes", "qwen3", "qwen-xml", "kimi", "dsml")


def leak(attempt: int, row: int, markup: str, reason: str, caps: RCfg = CAPS) -> str:
    """H4.8 Leak: a tool call written as markup the harness could not read."""
    return (
        _head(attempt) + f"your previous reply wrote a tool call as {markup} markup in its text, and the "
        f"harness could not read it ({reason}). No tool ran. Make the call again through the tool-calling "
        "interface, with its arguments as one JSON object that agrees with the schema of the tool. Do not write "
        "a tool call as text. If you need no tool, give the answer as plain text. "
        f"Leak note {row} of {caps.leak}."
    )


def rejected(attempt: int, row: int, cause: str, caps: RCfg = CAPS) -> str:
    """After output the server's tool-call parser rejected (H4.8, capped like a leak)."""
    return (
        _head(attempt) + "your previous reply began a tool call that the server's tool-call parser could not "
        f"read, so the server discarded the reply and no tool ran ({cause}). Make the call again through the "
        "tool-calling interface, with its arguments as one JSON object that agrees with the schema of the tool. "
        "If you need no tool, give the answer as plain text. "
        f"Rejected note {row} of {caps.leak}."
    )


def rejected_gave_up(cause: str, caps: RCfg = CAPS) -> str:
    """The run's error when the server rejects the model's output after the notes' cap."""
    return (
        f"{cause}. The server's tool-call parser rejected the model's output after {caps.leak} rejected notes "
        "in a row: use a different model, or serve it with a chat template whose tool-call format it follows."
    )


def listed(calls: Iterable[Any]) -> str:
    """Each call's tool and canonical arguments, cut to ARGUMENTS_SHOWN characters."""
    out = []
    for c in calls:
        args = canonical_arguments(c.arguments)
        if len(args) > ARGUMENTS_SHOWN:
            args = args[: ARGUMENTS_SHOWN - 1] + "…"
        out.append(f"{c.name} {args}")
    return "; ".join(out)


def redirect(attempt: int, row: int, rounds: int, calls: Iterable[Any], caps: RCfg = CAPS) -> str:
    """H4.8 Repeat: the same calls with the same results, not run again."""
    return (
        _head(attempt)
        + f"you made the same tool calls {rounds} times in a row, and they gave the same results "
        f"each time: {listed(calls)}. The harness did not run them again. Do not make these calls with these "
        "arguments again in this turn. Use different arguments, use a different tool, or give your answer with "
        f"what you found. Redirect note {row} of {caps.redirect}."
    )


def interrupted(tool: str, restart: bool) -> str:
    """The result of a tool call a crash or restart cut, when the tool is not replay-safe (H7.4)."""
    how = "interrupted by a restart" if restart else "interrupted"
    return (
        f"Tool {tool} was {how} and may have partially run. "
        "Check the state it changes (files, processes, jobs) before you run it again."
    )


def compacting(overflow: bool, message: str = "") -> str:
    """Shown when a run compacts: its messages so far move into the chat (H4)."""
    if overflow:
        return (
            f"the provider said the context is too long ({message}); moving this run's messages into the chat"
        )
    return "the context passed the compaction threshold; moving this run's messages into the chat"


def compacted(prompt: str) -> str:
    """The user message a compacted run goes on from: its work so far is the newest
    lines of the chat in the system prompt (the newly pinned view)."""
    return (
        "Harness note: this run's messages so far (the user's request, your tool calls and their results) "
        "were moved into the chat in the system prompt, as its newest lines, because the context grew too "
        "long. Zoom into a line to read it whole. Go on with the user's request from where you stopped; "
        f"do not start over. The request was:\n\n{prompt}"
    )


def compacted_pinned() -> str:
    """The user message a compacted run goes on from when its view pins the person's last
    request (`rules.pinned`): the request is there, after the chat, with the task list."""
    return (
        "Harness note: this run's messages so far (the user's request, your tool calls and their results) "
        "were moved into the chat in the system prompt, as its newest lines, because the context grew too "
        "long. Zoom into a line to read it whole. After the chat come your task list and the person's "
        "last request: go on with that request from where you stopped; do not start over."
    )


def compaction_failed(overflow: bool, cause: str, message: str = "") -> str:
    """The run's error when a compaction cannot go on (H4: overflow needs its entry);
    `message`: the provider's words on the overflow."""
    what = (
        f"the provider said the context is too long ({message})"
        if overflow
        else "the context passed the threshold"
    )
    return f"{what}, and the run could not be compacted: {cause}"


def overflow_after_compaction(message: str) -> str:
    """The run's error when the context overflows again in the round it compacted."""
    return (
        "the provider said the context is too long even after this round's compaction, so the run ends "
        f"instead of compacting again: {message}. Lower memory.viewBytes or use a model with a larger "
        "context window"
    )


HOW_TO_ALLOW = {
    "HEADLESS": "no person can answer here: allow it with a rule in permissions.allow (e.g. Bash(npm test)), "
    "or run it in the interactive agent, which asks",
    "NEVER": "the approval policy is never: allow it with a rule in permissions.allow, or run with "
    "--approval on-request",
    "TIMEOUT": "nobody answered within permissions.askTimeoutMs",
    "REFUSED": "the user said no",
    "ABORTED": "the run was aborted while it asked",
    "PLAN": "read, grep, glob and ls still work: look around, then hand your plan to the person with exit_plan",
    "HOOK_UNASKED": "no rule allows what a guard asks about: run it in the interactive agent with an approval "
    "policy that asks, or change the hook",
}
"""What a denial that came from an ask says of the way to allow the call, by its cause."""

PLAN_NOT_APPROVED = {
    "REFUSED": "the person did not approve the plan: plan mode stays on; change the plan as they say "
    "and call exit_plan again",
    "TIMEOUT": "nobody answered within permissions.askTimeoutMs: plan mode stays on",
    "ABORTED": "the run was aborted while it asked: plan mode stays on",
}
"""What a plan that was not approved says, by the cause."""

PLAN_ANSWERED = "No person can approve the plan here: the run ends with it as its answer."
"""The result of `exit_plan` where nobody can answer (the run ends with the plan)."""

NO_PLAN = "(exit_plan was called with no plan)"
"""The run's answer when the model called `exit_plan` with an empty plan."""


def outside_unasked(why: str, tool: str, path: str) -> str:
    """How to allow a call that asked, where no person can answer, for a place outside the
    workspace (`why`): the rule that names that very place."""
    return (
        f"{why}: allow it with a rule in permissions.allow: {tool}({path}), or run it in the "
        "interactive agent, which asks"
    )


def git_unasked(why: str) -> str:
    """How to allow a write in a `.git` folder where no person can answer: only a person can."""
    return f"{why}: no rule allows it; run it in the interactive agent, which asks"


def loaded_unasked(why: str, place: str) -> str:
    """How to allow a write to what eukhe or git loads as code where no person can answer: a rule
    of the person's own settings naming that very place (a project's rules cannot)."""
    return (
        f"{why}: allow it with a rule in permissions.allow of your own settings (~/.eukhe/settings.json; "
        f"a project's rules cannot): Edit({place}/**), or run it in the interactive agent, which asks"
    )


def fetch_unasked(why: str, host: str) -> str:
    """How to allow a web fetch that asked where no person can answer: the rule that names
    its host."""
    return (
        f"{why}: allow it with a rule in permissions.allow: WebFetch(domain:{host}), or run it in the "
        "interactive agent, which asks"
    )


def mcp_headless(tool: str) -> str:
    """How to allow an MCP tool's call that asked where no person can answer: its own rule,
    or its server's (`mcp__<server>` names all its tools)."""
    server = "__".join(tool.split("__")[:2])
    return (
        f"an MCP tool runs outside the sandbox, and no person can answer here: allow it with a rule in "
        f"permissions.allow ({tool}, or {server} for all of its server's tools), or run it in the "
        "interactive agent, which asks"
    )


def guard_why(why: str, guard: str, reason: str) -> str:
    """The cause of an ask a guard asked for (or of its denial), as it is read: the rules' own
    (`why`, when they asked too), the guard's, and the hook's reason."""
    said = why if why == guard else f"{why}; {guard}"
    return f"{said}: {reason or 'no reason given'}"


def denied(tool: str, why: str, rule: str, how: str, reason: str = "") -> str:
    """The result of a call the permission rule denied: not run, its cause, the rule that
    decided (if one), how to allow it, and the user's reason (if they gave one)."""
    by = f" ({rule})" if rule else ""
    said = f" The user's reason: {reason}" if reason else ""
    tail = f"; {how}" if how else ""
    return f"Tool {tool} was not run: permission denied: {why}{by}{tail}.{said}"


def hook_denied(tool: str, reason: str, event: Event) -> str:
    """The result of a call a PreToolUse or PermissionRequest hook denied (exit 2, a deny, or
    a guard that failed): not run, and the hook's reason."""
    return f"Tool {tool} was not run: a {event.value} hook denied it: {reason or 'no reason given'}"
