"""The tie of classification: the run reads its replies through `rules.classify` (swapping
the rule changes what the run does), and the rule knows every failure kind a provider
can report."""

from __future__ import annotations

from eukhe.ai.reply import FailureKind
from eukhe.rules import classify, recovery
from eukhe.rules import run as run_rule
from eukhe.rules.classify import Failure, Read, Seen
from eukhe.run.loop import RunRules, Settings
from tests.run.test_generation import go


def test_every_failure_kind_of_a_provider_is_one_the_rule_knows() -> None:
    assert {k.value for k in FailureKind} == {f.value for f in Failure} - {"none"}


def test_the_run_reads_its_replies_through_the_rule_tie() -> None:
    """The real rule answers a plain text reply; a rule that reads every text as no answer
    makes the same reply a noted no-answer, and the run spends its notes and fails."""
    out, _server, _, _ = go(["The answer."])
    assert out.outcome == "answered" and out.notes == 0

    def blind(s: Seen) -> Read:
        if s.failure is Failure.NONE and not s.calls:
            return Read(run_rule.Input(run_rule.Kind.NO_ANSWER), recovery.Reply(recovery.Out.NOTED))
        return classify.classify(s)

    out, server, _, _ = go(["The answer."], Settings(), rules=RunRules(classify=blind))
    assert out.outcome == "failed" and out.notes == run_rule.MAX_NOTES
    assert len(server.seen) == run_rule.MAX_NOTES + 1
