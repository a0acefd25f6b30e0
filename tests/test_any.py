"""`Any` stays at the edges (issue 41, item 5): outside the pure rules and their laws, a line
that names `Any` is at a JSON or an SDK boundary, or an untyped seam still to be typed. JSON's
own are named once, with their reason (`eukhe.json_types`). Each package's count is kept
here: a change that adds one fails, and one that removes some lowers the ceiling with it."""

from __future__ import annotations

import io
import tokenize
from collections import Counter
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "eukhe"

EXEMPT = ("rules", "laws", "json_types.py")
"""The pure rules and their laws (a model's state is any value a law walks), and JSON's types."""

CEILING = {
    "run": 18,  # the loop's races and the kernel (made on first use), 0.1's steps
    "ai": 7,  # the SDKs' calls (their keyword arguments, their request types) and their objects read
    "store": 7,  # the codec's values (any value a step returns), DBOS's serializer
    "kernel": 4,  # jupyter_client's messages
    "cli": 3,  # typer's and click's options and commands
    "owner": 3,  # a route's provider, made once
    "ui": 3,  # termios' attributes (typeshed's), the session's runs
    "children": 1,  # the run's recorded effects, their append wrapped to feed the ledger
    "client": 2,
    "mcp": 2,  # the SDK's read and write streams
    "tools": 2,  # a tool's schema types; the search's race of any engine's result
    "memory": 1,  # SQLAlchemy's row
    "waits": 1,
    "admission": 0,
    "display": 0,
    "hooks": 0,  # a hook's payload and answer are JSON (json_types), every other seam typed
    "acp": 0,  # the protocol's SDK types every message; JSON-RPC's own are json_types
}
"""The most lines naming `Any` each package may have."""

TOTAL = 54
"""The most in all (issue 41 asked 200, issue 52 at most 120)."""


def lines_naming_any(path: Path) -> int:
    """Lines of `path` whose code (not a comment, a string, an import) names `Any`."""
    named, imports = set(), set()
    for tok in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
        if tok.type == tokenize.NAME and tok.string == "Any":
            named.add(tok.start[0])
        elif tok.type == tokenize.NAME and tok.string == "import":
            imports.add(tok.start[0])
    return len(named - imports)


def counts() -> Counter[str]:
    found: Counter[str] = Counter()
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] in EXEMPT:
            continue
        if n := lines_naming_any(path):
            found[rel.parts[0] if len(rel.parts) > 1 else rel.stem] += n
    return found


def test_no_package_names_any_more_often_than_its_ceiling() -> None:
    found = counts()
    over = {p: (n, CEILING.get(p, 0)) for p, n in found.items() if n > CEILING.get(p, 0)}
    assert over == {}, f"(lines naming Any, the ceiling) by package: {over}; type the new seams"
    lower = {p: (found.get(p, 0), n) for p, n in CEILING.items() if found.get(p, 0) < n}
    assert lower == {}, f"fewer lines name Any now: lower these ceilings to the counts {lower}"


def test_at_most_two_hundred_lines_name_any() -> None:
    assert sum(CEILING.values()) <= TOTAL
    assert sum(counts().values()) <= TOTAL


def test_a_comment_a_string_and_an_import_are_not_counted(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text('from typing import Any\n# Any here\nx = "Any"\ny: Any = 1\ndef f(a: Any) -> Any: ...\n')
    assert lines_naming_any(f) == 2
