"""How a eukhe process ends: what it printed is written out first, its code is the
command's, and a reader that went away costs no traceback."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from eukhe.process_exit import exit_code

SAYS = "print('said'); print('warned', file=sys.stderr)"
ENDS = f"import sys; from eukhe.process_exit import leave; {SAYS}; leave(3)"


def test_what_was_printed_is_written_and_the_code_kept() -> None:
    done = subprocess.run([sys.executable, "-c", ENDS], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (3, "said\n", "warned\n")


def test_a_reader_gone_before_the_end_costs_no_traceback() -> None:
    p = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(0.5); " + ENDS],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"},  # its output buffered
    )
    assert p.stdout is not None and p.stderr is not None
    p.stdout.close()  # the reader goes away: the flush meets a closed pipe
    err = p.stderr.read()
    assert p.wait(timeout=60) == 3, err
    assert "Traceback" not in err and "BrokenPipeError" not in err, err


@pytest.mark.parametrize(("code", "out"), [(None, 0), (0, 0), (2, 2), ("a message", 1)])
def test_the_code_of_a_system_exit(code: object, out: int, capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_code(code) == out
    assert capsys.readouterr().err == ("a message\n" if isinstance(code, str) else "")
