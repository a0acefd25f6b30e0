"""The terminal held while the agent starts (`ui.typeahead`), on a pseudo-terminal: keys
typed before it took hold (cooked by the terminal: Enter made a newline) and after are
kept as typed, in order, and the terminal is given back as it was found."""

from __future__ import annotations

import os
import pty
import termios
import time
from collections.abc import Iterator

import pytest

from eukhe.ui.typeahead import TypeAhead


@pytest.fixture
def tty() -> Iterator[tuple[int, int]]:
    """A pseudo-terminal: the typist's end, and the agent's (cooked, as a shell leaves it)."""
    typist, agent = pty.openpty()
    try:
        yield typist, agent
    finally:
        os.close(typist)
        os.close(agent)


def typed(typist: int, keys: bytes) -> None:
    os.write(typist, keys)
    time.sleep(0.05)  # the terminal's line discipline has taken them


def test_keys_before_and_after_the_hold_are_kept_as_typed_in_order(tty: tuple[int, int]) -> None:
    typist, agent = tty
    found = termios.tcgetattr(agent)
    assert found[0] & termios.ICRNL and found[3] & termios.ICANON
    typed(typist, b"first one\rsec")  # cooked: the Enter becomes a newline, the rest waits for its line
    held = TypeAhead(agent, termios.tcgetattr(agent))
    typed(typist, b"ond one\r\x1b[A")  # held: as typed, an arrow key too
    assert held.take() == b"first one\rsecond one\r\x1b[A"
    assert held.take() == b""
    held.restore()
    assert termios.tcgetattr(agent) == found


def test_held_the_terminal_echoes_nothing_and_makes_no_lines(tty: tuple[int, int]) -> None:
    agent = tty[1]
    held = TypeAhead(agent, termios.tcgetattr(agent))
    attrs = termios.tcgetattr(agent)
    assert not attrs[3] & (termios.ECHO | termios.ICANON) and not attrs[0] & termios.ICRNL
    assert attrs[3] & termios.ISIG  # Ctrl-C still stops a start
    held.restore()
    held.restore()  # once is enough; again does nothing
    assert termios.tcgetattr(agent)[3] & termios.ECHO
