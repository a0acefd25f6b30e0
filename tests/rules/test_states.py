"""The rules' states remade in one step (`rules.states.replace`) are the objects
`dataclasses.replace` makes; the rules' enums hash as the singletons their members are."""

from __future__ import annotations

import dataclasses
import importlib
import pickle
import pkgutil
from dataclasses import dataclass, field
from enum import Enum

import pytest

import eukhe.laws
import eukhe.rules
from eukhe.rules import confine, queue
from eukhe.rules.states import Choice, replace


class Color(Choice):
    RED = "red"
    BLUE = "blue"


@dataclass(frozen=True)
class Plain:
    color: Color
    n: int = 0
    items: tuple[int, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class Checked:
    n: int

    def __post_init__(self) -> None:
        if self.n < 0:
            raise ValueError("n below 0")


@dataclass(frozen=True)
class Derived:
    n: int
    twice: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "twice", 2 * self.n)


@dataclass
class Loose:
    n: int
    m: int = 1


def test_a_plain_state_is_remade_as_dataclasses_would_and_the_old_one_is_unchanged() -> None:
    s = Plain(Color.RED, 1, (1, 2), ("a",))
    t = replace(s, n=5, color=Color.BLUE)
    assert t == dataclasses.replace(s, n=5, color=Color.BLUE) == Plain(Color.BLUE, 5, (1, 2), ("a",))
    assert type(t) is Plain and hash(t) == hash(Plain(Color.BLUE, 5, (1, 2), ("a",)))
    assert s == Plain(Color.RED, 1, (1, 2), ("a",))
    assert replace(s) == s and replace(s) is not s
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.n = 3  # type: ignore[misc]
    loose = replace(Loose(1), m=2)
    loose.n = 7  # a dataclass that is not frozen stays so
    assert loose == Loose(7, 2)


def test_an_unknown_field_is_refused_as_dataclasses_refuses_it() -> None:
    with pytest.raises(TypeError, match="nope"):
        replace(Plain(Color.RED), nope=1)  # type: ignore[call-arg]


def test_a_state_that_checks_or_derives_goes_through_its_init() -> None:
    with pytest.raises(ValueError, match="below 0"):
        replace(Checked(1), n=-1)
    assert replace(Derived(2), n=5).twice == 10
    # the rules' own such states: confine's places derive their secret folders, a queue keeps
    # its built nodes as `Built`
    places = confine.Where(workspace="/w", home="/h", user="/u")
    moved = replace(places, user="/v")
    assert moved.secrets == confine.Where(workspace="/w", home="/h", user="/v").secrets != places.secrets
    assert isinstance(replace(queue.Queue(1), built=frozenset()).built, queue.Built)


def test_an_enum_of_the_rules_hashes_and_compares_by_identity_in_a_process_and_after_pickling() -> None:
    assert hash(Color.RED) == object.__hash__(Color.RED)
    assert {Color.RED: 1}[pickle.loads(pickle.dumps(Color.RED))] == 1
    assert Color("blue") is Color.BLUE and list(Color) == [Color.RED, Color.BLUE]
    assert len({Color.RED, Color.RED, Color.BLUE}) == 2


def test_every_enum_of_the_rules_and_their_laws_is_a_choice() -> None:
    """The walks hash them some millions of times: `Enum`'s own hash is a Python call."""
    seen = 0
    for package in (eukhe.rules, eukhe.laws):
        for info in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            for value in vars(module).values():
                if (
                    isinstance(value, type)
                    and issubclass(value, Enum)
                    and value.__module__ == module.__name__
                ):
                    assert issubclass(value, Choice), f"{module.__name__}.{value.__name__} is not a Choice"
                    seen += 1
    assert seen >= 90  # the rules' and the laws' own enums, all of them looked at
