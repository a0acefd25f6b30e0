"""The prover's process (`eukhe.laws.prover`): CrossHair's command line, a callee's conditions
looked up once. The engine's own tests show that it still refutes a false law and confirms a
true one (tests/laws/test_engine.py); these show what is kept and what is asked again."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from eukhe.laws.prover import remembered


class Parser:
    def __init__(self, *parsers: object) -> None:
        self.parsers = parsers


def test_an_answer_is_kept_per_kind_of_parser_and_callee() -> None:
    asked: list[Any] = []

    def lookup(parser: Any, what: Any) -> str:
        asked.append(what)
        return f"conditions of {what}"

    kept = remembered(lookup, lambda what: what)
    one, other = Parser(1), Parser(2)  # two cases' parsers, made from the same options
    assert kept(one, "f") == kept(other, "f") == "conditions of f"
    assert kept(one, "g") == "conditions of g"
    assert asked == ["f", "g"]
    kept(Parser("another kind"), "f")  # a parser that asks other parsers: asked again
    assert asked == ["f", "g", "f"]


def test_an_unhashable_callee_is_asked_each_time() -> None:
    asked: list[Any] = []

    def lookup(parser: Any, what: Any) -> int:
        asked.append(what)
        return len(asked)

    kept = remembered(lookup, lambda what: what)
    assert kept(Parser(1), {}) == 1
    assert kept(Parser(1), {}) == 2


def test_the_prover_finds_a_counterexample_behind_a_callee_it_has_met(tmp_path: Path) -> None:
    """The callee's conditions kept from the first case do not hide the second case's failure."""
    cases = tmp_path / "cases.py"
    cases.write_text(
        "def square(x: int) -> int:\n"
        "    return x * x\n\n\n"
        "def case_true(x: int) -> None:\n"
        "    assert square(x) >= 0\n\n\n"
        "def case_false(x: int) -> None:\n"
        "    assert square(x) != 49\n"
    )
    argv = [sys.executable, "-m", "eukhe.laws.prover", "check", "--analysis_kind=asserts", "--report_all"]
    done = subprocess.run(
        [*argv, cases],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert f"{cases}:5: info: Confirmed over all paths." in done.stdout
    assert any(f"when calling case_false({x})" in done.stdout for x in (7, -7)), done.stdout
