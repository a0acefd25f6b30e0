"""`split`: a bash command's simple commands, read from tree-sitter-bash's tree. The corpus
(tests/bash/corpus.py) pins what each ordinary and hostile command runs; Hypothesis
checks that `split` is total and bounded on any text, and that its words are bash's own
(bash itself, with every command name unknown, prints the words it would pass)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from eukhe.bash.reader import MAX_COMMANDS, MAX_DEPTH, Split, split
from tests.bash.corpus import CASES, Case

TIME_BOUND = 10.0  # seconds for one call: tells a hang from a loaded machine (the slowest 256 KiB of nested
# scripts took 0.4 s on a quiet machine and 2.9 s on a loaded one)


@pytest.mark.parametrize("case", CASES, ids=[f"{i}:{c.source[:40]}" for i, c in enumerate(CASES)])
def test_corpus(case: Case) -> None:
    got = split(case.command)
    assert (got.commands, got.whole) == (case.commands, case.whole), got.why
    assert bool(got.why) != got.whole, "a reason exactly when not whole"


def test_corpus_is_wide() -> None:
    assert len(CASES) >= 60
    assert all(c.source for c in CASES)
    assert len({c.command for c in CASES}) == len(CASES), "each command once"
    assert sum(not c.whole for c in CASES) >= 20 and sum(c.whole for c in CASES) >= 20


def test_reasons_name_what_failed() -> None:
    cases = {
        "PATH=/x ls": "PATH",
        "eval $x": "eval",
        'bash -c "$X"': "bash -c",
        "f() { :; }": "function",
        "alias a=b": "alias",
        "": "empty",
        "ls &&": "incomplete",
        "echo 'x": "syntax error",
        "a\x00": "NUL",
        "$X y": "$X",
    }
    for command, word in cases.items():
        why = split(command).why
        assert word in why, (command, why)


def test_nesting_past_the_bound_is_not_whole() -> None:
    got = split("eval " * (MAX_DEPTH + 2) + "id")  # each eval reads the rest as a script
    assert not got.whole and "deeper" in got.why
    assert len(got.commands) == MAX_DEPTH + 1
    assert split("eval " * MAX_DEPTH + "id").whole


def test_commands_past_the_bound_are_not_whole() -> None:
    got = split("; ".join(["ls"] * (MAX_COMMANDS + 1)))
    assert not got.whole and str(MAX_COMMANDS) in got.why
    assert len(got.commands) == MAX_COMMANDS


def test_deep_trees_are_walked_without_recursion() -> None:
    deep = "echo " + "$(echo " * 5000 + "x" + ")" * 5000
    got = split(deep)
    assert not got.whole  # past the command cap, but read in time and without a RecursionError
    parens = "( " * 10000 + "ls" + " )" * 10000
    assert split(parens) == Split((("ls",),), True)


def test_large_code_points_do_not_crash_the_parser() -> None:
    # tree-sitter-bash #337: `{` then U+31860 crashed the process in the grammar's scanner
    assert not split("{\U00031860").whole
    assert split("echo {\U0010ffff} ${x}\U0009c6cc") == Split(
        (("echo", "{\U0010ffff}", "${x}\U0009c6cc"),), True
    )


# ---------------------------------------------------------------- totality

PIECES = [
    "$(", ")", "`", "'", '"', "\\", "\n", "\\\n", "${", "}", "$((", "))", "<<E\n", "\nE\n", "<<'E'\n",
    "bash -c ", "eval ", "$'", "[[ ", " ]]", "case ", " in ", "esac", "if ", "then ", "fi", "for ",
    "do ", "done", "function ", "() {", "&&", "|", ";", "&", ">", "<(", "x=", "PATH=", "$IFS", "#",
    "\x00", "é", "\u2028", "\udc80", "*", "{a,b}", "time ", "coproc ", "alias ", "a[", "]",
]  # fmt: skip


def check_total(command: str) -> None:
    start = time.monotonic()
    got = split(command)
    took = time.monotonic() - start
    assert took < TIME_BOUND, f"{took:.2f}s for {command[:80]!r}"
    assert isinstance(got, Split)
    assert all(isinstance(w, str) for words in got.commands for w in words)
    assert got.whole == (got.why == "")
    assert len(got.commands) <= MAX_COMMANDS


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.characters(codec=None, categories=None)))
def test_split_is_total_on_any_text(command: str) -> None:
    check_total(command)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=6)), max_size=40))
def test_split_is_total_on_shell_fragments(pieces: list[str]) -> None:
    check_total("".join(pieces))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(PIECES), st.integers(min_value=1000, max_value=70000))
def test_split_is_bounded_on_large_input(piece: str, n: int) -> None:
    check_total((piece * (n // max(1, len(piece))))[:n])


# ---------------------------------------------------------------- bash agrees on words

BASH = shutil.which("bash")

# Fragments of one word with no expansion and no pattern: what quote removal is for.
PLAIN = st.text(alphabet="abcxyz019-_./:=,+%@^", min_size=1, max_size=4)
ESCAPED = st.sampled_from(
    ["\\ ", "\\\\", "\\'", '\\"', "\\$", "\\`", "\\*", "\\;", "\\|", "\\&", "\\n", "\\#"]
)
SINGLE = st.text(alphabet='ab $`"\\*;|&#()<>!\n\t', max_size=5).map(lambda t: "'" + t + "'")
DOUBLE = st.lists(
    st.one_of(
        st.text(alphabet="ab '*;|&#()<>\n\t", min_size=1, max_size=3),
        st.sampled_from(["\\$", "\\`", '\\"', "\\\\", "\\a", "\\n", "\\'"]),
    ),
    max_size=4,
).map(lambda parts: '"' + "".join(parts) + '"')
ANSI_ESCAPES = [
    "\\n", "\\t", "\\\\", "\\'", '\\"', "\\x41", "\\x4a5", "\\101", "\\7", "\\e", "\\a", "\\?",
    "\\u00e9", "\\U0001F600", "\\cA", "\\z", "\\x",
]  # fmt: skip
ANSI = st.lists(
    st.one_of(st.text(alphabet='ab *"$`', min_size=1, max_size=3), st.sampled_from(ANSI_ESCAPES)),
    max_size=4,
).map(lambda parts: "$'" + "".join(parts) + "'")
WORD = st.lists(st.one_of(PLAIN, ESCAPED, SINGLE, DOUBLE, ANSI), min_size=1, max_size=4).map("".join)


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(WORD, min_size=0, max_size=4))
@example(["$'\\\\'\\'"])  # found by this test: a $'…' string bash ends before tree-sitter-bash does
@example(["==''"])  # found by this test: `==` a token of its own to tree-sitter-bash, text to bash
def test_words_are_bashs_words(args: list[str]) -> None:
    """bash, with no command found on its PATH, hands each command's words to
    `command_not_found_handle`, which prints them: where `split` reads a command whole,
    they must be its words (where it does not, the rule asks: nothing to compare)."""
    command = "zzq_unknown_command " + " ".join(args)
    got = split(command)
    event("whole" if got.whole else f"not whole: {got.why[:30]}")
    if not got.whole:
        return
    script = (
        "command_not_found_handle() { printf '%s\\0' $# \"$@\"; }\n"
        "PATH=/nonexistent-eukhe-test\n" + command + "\n"
    )
    assert BASH is not None
    out = subprocess.run(
        [BASH, "--norc", "--noprofile", "-c", script],
        capture_output=True,
        timeout=10,
        env={"LC_ALL": "C.UTF-8", "HOME": os.environ.get("HOME", "/")},
        check=False,
    ).stdout
    fields = out.split(b"\x00")[:-1]  # each run: its count of words, then the words
    said: list[tuple[str, ...]] = []
    while fields:
        count = int(fields[0])
        said.append(tuple(f.decode("utf-8", "replace") for f in fields[1 : count + 1]))
        fields = fields[count + 1 :]
    assert tuple(said) == got.commands
