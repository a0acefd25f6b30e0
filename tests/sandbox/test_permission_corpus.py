"""The hostile corpus (`corpus.CASES`: quoting tricks, `$IFS`, here-docs, `env X=… cmd`,
absolute paths to binaries, `sh -c`, aliases, newlines, with peers' issues where they
exist) through the splitter and the permission rule, as the gate reads a bash call: each
case's decision as `verdicts.VERDICTS` holds it, and the laws' promises on every case."""

from __future__ import annotations

from collections import Counter

import pytest

from eukhe.bash.reader import split
from eukhe.rules.permission import Call, Cfg, Mode, Policy, Verdict, Why, decide, forms, read_only
from tests.bash.corpus import CASES
from tests.sandbox.verdicts import RULES, VERDICTS, key

ASKS = {Why.UNREADABLE, Why.ASK_RULE, Why.UNTRUSTED}
RUNS = {Why.ALLOW_RULE, Why.READS, Why.SANDBOXED}
DENIED_WORDS = ("rm", "curl")  # what RULES deny


def call_of(command: str) -> Call:
    sp = split(command)
    writes = bool(sp.writes) or not all(read_only(w) for w in sp.commands)
    return Call("bash", sp.commands, sp.whole, writes=writes)


def cfg(policy: Policy) -> Cfg:
    return Cfg(Mode.WORKSPACE_WRITE, policy, True, True, RULES)


def test_the_corpus_is_large_and_every_case_has_its_verdict() -> None:
    assert len(CASES) >= 60
    assert {key(c.command) for c in CASES} == set(VERDICTS)


@pytest.mark.parametrize("case", CASES, ids=[key(c.command)[:40] for c in CASES])
def test_each_command_gets_its_verdict(case: object) -> None:
    command = case.command  # type: ignore[attr-defined]
    call = call_of(command)
    got = tuple(decide(cfg(p), call).why for p in (Policy.ON_REQUEST, Policy.UNTRUSTED))
    assert got == VERDICTS[key(command)]


@pytest.mark.parametrize("policy", [Policy.ON_REQUEST, Policy.UNTRUSTED])
def test_no_case_runs_a_denied_program_or_an_unread_command(policy: Policy) -> None:
    """Whatever the trick, a command that runs `rm` or `curl` in any form the rule can see is
    denied, and one the parser could not read whole never runs unasked."""
    for case in CASES:
        call = call_of(case.command)
        d = decide(cfg(policy), call)
        names = {f[0] for w in call.commands for f in forms(w)}
        if names & set(DENIED_WORDS):
            assert d.verdict is Verdict.DENY, case
        if not call.whole:
            assert d.verdict in (Verdict.ASK, Verdict.DENY), case


def test_how_many_cases_each_layer_decides() -> None:
    """The counts the closing note gives (on-request, then untrusted)."""
    on_request = Counter(VERDICTS[key(c.command)][0].name for c in CASES)
    untrusted = Counter(VERDICTS[key(c.command)][1].name for c in CASES)
    assert sum(on_request.values()) == sum(untrusted.values()) == len(CASES)
    assert on_request["DENY_RULE"] == untrusted["DENY_RULE"]  # the policy never changes a denial
    assert on_request["UNREADABLE"] == untrusted["UNREADABLE"]
