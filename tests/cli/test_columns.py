"""Lines fit 80 columns (issue 29, item 10; issue 41): `eukhe sessions` cuts a line with an
ellipsis, `eukhe status` wraps its lines, with an owner and without; `COLUMNS=80`, as a narrow
terminal."""

from __future__ import annotations

from pathlib import Path

from eukhe.ai.faux import FauxServer, parse
from eukhe.humanize import clipped
from tests.proc import eukhe

NARROW = {"COLUMNS": "80"}


def test_a_line_is_clipped_to_its_columns_with_an_ellipsis() -> None:
    assert clipped("abcdef", 6) == "abcdef"
    assert clipped("abcdefg", 6) == "abcde…"
    assert clipped("abc", 1) == "…"


def test_sessions_and_status_fit_eighty_columns(tmp_path: Path) -> None:
    # A home of 78 characters: whole on a line of its own, it fits only unindented.
    home = tmp_path / ("home" + "e" * max(0, 78 - len(str(tmp_path)) - 5))
    prompt = "please look at every file of this project and tell me what each of them does"
    with FauxServer(parse(["Done."])) as server:
        ran = eukhe("run", "--model", "vllm/m", "--base-url", server.url, prompt, cwd=tmp_path, home=home)
        assert ran.returncode == 0, ran.stderr
        listed = eukhe("sessions", cwd=tmp_path, home=home, extra=NARROW)
    assert listed.returncode == 0, listed.stderr
    [line] = listed.stdout.splitlines()
    assert len(line) <= 80 and line.endswith("…") and "answered" in line, line
    owned = eukhe("status", cwd=tmp_path, home=home, extra=NARROW)  # the run's owner is up
    assert owned.returncode == 0, owned.stderr
    lines = owned.stdout.splitlines()
    assert lines[0].startswith("owner: pid ") and all(len(x) <= 80 for x in lines), lines
    eukhe("shutdown", cwd=tmp_path, home=home)
    status = eukhe("status", cwd=tmp_path, home=tmp_path / "another", extra=NARROW)
    lines = status.stdout.splitlines()
    assert len(lines) >= 2 and all(len(x) <= 80 for x in lines), lines
    assert "no owner runs for" in lines[0] and "owner.sock" in status.stdout
