"""What the rules' states are made of, made to be remade fast: the law walks make and hash some
millions of them (`eukhe laws`, and every step a run takes asks the rules too).

- `replace`: `dataclasses.replace` in one step for a dataclass of plain fields, the same
  object it would make; any other dataclass goes to `dataclasses.replace` itself.
- `Choice`: the base of the rules' enums, hashed as the singletons their members are."""

from __future__ import annotations

import dataclasses
import functools
from enum import Enum
from typing import TYPE_CHECKING, TypeVar

_T = TypeVar("_T")


class Choice(Enum):
    """An enum whose members hash by identity, as they compare (`Enum`'s own hash is a Python
    call on the member's name, the walks' most frequent call after the dataclasses' own). A
    member is one object in a process, unpickled too; a set of them is hashed again in a process
    it is sent to, as every set is."""

    __hash__ = object.__hash__


@functools.cache
def _plain(cls: type) -> frozenset[str] | None:
    """The fields of a dataclass whose instances are their fields and nothing more, None for
    any other: one with an `__init__` of its own, one that checks or derives in `__post_init__`,
    one that keeps a field out of `__init__`, one with slots."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.init:
        return None
    # an InitVar is only ever for a __post_init__ to take: one without it is refused with it
    if hasattr(cls, "__post_init__") or "__slots__" in cls.__dict__:
        return None
    fields = dataclasses.fields(cls)  # its own, neither ClassVars nor InitVars
    if any(not f.init for f in fields):
        return None
    return frozenset(f.name for f in fields)


def _replace(obj: _T, /, **changes: object) -> _T:
    cls: type = type(obj)
    names = _plain(cls)
    if names is None:
        return dataclasses.replace(obj, **changes)  # type: ignore[type-var]
    if not names.issuperset(changes):
        unknown = ", ".join(sorted(set(changes) - names))
        raise TypeError(f"{cls.__name__} has no field {unknown}")
    new: _T = object.__new__(cls)
    # its own dict, set past the frozen class's __setattr__, as its __init__ sets each field
    object.__setattr__(new, "__dict__", {**obj.__dict__, **changes})
    return new


if TYPE_CHECKING:
    # mypy checks a call's fields against the dataclass's own, as it does `dataclasses.replace`'s
    from dataclasses import replace as replace
else:
    replace = _replace
