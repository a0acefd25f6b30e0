"""`python -m eukhe.laws.prover check ...`: CrossHair's command line, in a process of its own
(`engine.Provers` starts one a file of proof cases), with the conditions of a function and
of a class looked up once a process, not once a call or once a case.

Before each call a proof makes, CrossHair asks which conditions the callee has. For a plain
function it builds a new `FunctionInfo` each time, so nothing is remembered and the callee's
signature is read again (`inspect.signature`, which parses a builtin's text signature with
`ast`); and each case gets a parser of its own, whose cache of class conditions starts
empty. About half of the proofs' CPU time went there. A callee's conditions are the leading
asserts of its source and its signature, which do not change while the prover runs, and
every case's parser is made from the same options: the answer is kept, per kind of parser
and callee. What is proven is unchanged: the same conditions are found, once."""

from __future__ import annotations

import sys
from collections.abc import Callable, Hashable
from typing import Any

from crosshair import condition_parser
from crosshair.fnutil import FunctionInfo
from crosshair.main import main as crosshair_main

Lookup = Callable[[Any, Any], Any]


def remembered(lookup: Lookup, key: Callable[[Any], Hashable]) -> Lookup:
    """`lookup(parser, what)` with its answers kept by the parser's kind (the classes of
    the parsers it asks) and `key(what)`; an unhashable callee is asked each time."""
    kept: dict[Hashable, Any] = {}
    missing = object()

    def remembering(parser: Any, what: Any) -> Any:
        try:
            k = (tuple(type(p) for p in parser.parsers), key(what))
            got = kept.get(k, missing)
        except TypeError:
            return lookup(parser, what)
        if got is missing:
            got = kept[k] = lookup(parser, what)
        return got

    return remembering


def _function(info: FunctionInfo) -> Hashable:
    return (info.context, info.name if info.context is not None else None, info.descriptor)


def _class(cls: type) -> Hashable:
    return cls


def main() -> None:
    """CrossHair's own `main` on this process's arguments; it exits with its status."""
    parser: Any = condition_parser.CompositeConditionParser
    parser.get_fn_conditions = remembered(parser.get_fn_conditions, _function)
    parser.get_class_conditions = remembered(parser.get_class_conditions, _class)
    crosshair_main(sys.argv[1:])


if __name__ == "__main__":
    main()
