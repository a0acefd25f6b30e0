"""The rules are pure: every module under src/eukhe/rules imports only the
standard library (less I/O, clock, randomness, logging and asyncio) and
eukhe.rules itself."""

from __future__ import annotations

import ast
import sys
from pathlib import Path, PurePath

RULES_DIR = Path(__file__).resolve().parents[1] / "src" / "eukhe" / "rules"
RULES_PACKAGE = "eukhe.rules"

IMPURE_STDLIB = frozenset({"asyncio", "random", "time", "logging", "os", "socket", "subprocess", "threading"})
"""Standard-library modules a rule may not import: no I/O, clock, randomness, logging or asyncio."""


def _in_rules(module: str) -> bool:
    return module == RULES_PACKAGE or module.startswith(RULES_PACKAGE + ".")


def _module_of(path: PurePath) -> tuple[str, bool]:
    """The dotted module name of a file path under `eukhe/`, and whether it is a package."""
    parts = list(path.parts)
    if "eukhe" not in parts:
        raise ValueError(f"{path}: not under an eukhe/ folder")
    parts = parts[parts.index("eukhe") :]
    is_package = parts[-1] == "__init__.py"
    parts = parts[:-1] if is_package else [*parts[:-1], PurePath(parts[-1]).stem]
    return ".".join(parts), is_package


def _check_absolute(name: str) -> str | None:
    """Why the absolute module `name` may not be imported by a rule, or None."""
    if _in_rules(name):
        return None
    top = name.partition(".")[0]
    if top in IMPURE_STDLIB:
        return "impure standard-library module (rules do no I/O, clock, randomness, logging or asyncio)"
    if top in sys.stdlib_module_names:
        return None
    return "neither the standard library nor eukhe.rules"


def check_source(source: str, path: str | PurePath) -> list[str]:
    """Every import in `source` that a rule may not make, one message each.

    `path` is the module's file path (e.g. `src/eukhe/rules/run.py`); it names
    the file in the messages and places relative imports.
    """
    path = PurePath(path)
    module, is_package = _module_of(path)
    package = module.split(".") if is_package else module.split(".")[:-1]
    tree = ast.parse(source, filename=str(path))
    problems: list[str] = []

    def report(node: ast.stmt, text: str, why: str) -> None:
        problems.append(f"{path}:{node.lineno}: `{text}`: {why}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                why = _check_absolute(alias.name)
                if why is not None:
                    report(node, f"import {alias.name}", why)
        elif isinstance(node, ast.ImportFrom):
            names = ", ".join(alias.name for alias in node.names)
            text = f"from {'.' * node.level}{node.module or ''} import {names}"
            if node.level == 0:
                assert node.module is not None
                base = node.module
                if base == "__future__":
                    continue
            else:
                if node.level - 1 > len(package) - 1:
                    report(node, text, "relative import beyond the top-level package")
                    continue
                parent = package[: len(package) - (node.level - 1)]
                base = ".".join([*parent, *([node.module] if node.module else [])])
                if not _in_rules(base) and not (
                    base and all(_in_rules(f"{base}.{alias.name}") for alias in node.names)
                ):
                    report(node, text, f"relative import resolving to {base!r}, outside eukhe.rules")
                continue
            # `from eukhe import rules` names a rules module through its parent.
            if not _in_rules(base) and all(_in_rules(f"{base}.{alias.name}") for alias in node.names):
                continue
            why = _check_absolute(base)
            if why is not None:
                report(node, text, why)
    return problems


def test_rules_import_only_stdlib_and_rules() -> None:
    files = sorted(RULES_DIR.rglob("*.py"))
    assert files, f"no modules found under {RULES_DIR}"
    root = RULES_DIR.parents[2]
    problems: list[str] = []
    for file in files:
        problems += check_source(file.read_text(encoding="utf-8"), file.relative_to(root))
    assert not problems, "rules must be pure; forbidden imports:\n" + "\n".join(problems)


def test_checker_reports_forbidden_imports() -> None:
    problems = check_source("import asyncio\nimport hypothesis\n", "src/eukhe/rules/example.py")
    assert len(problems) == 2
    assert any("import hypothesis" in p and "src/eukhe/rules/example.py:2" in p for p in problems)
    assert any("import asyncio" in p and "impure" in p for p in problems)

    for source in (
        "from eukhe.laws import x\n",
        "from ..laws import x\n",
        "from .. import laws\n",
        "import eukhe\n",
        "import os.path\n",
        "from time import monotonic\n",
        "from random import Random\n",
        "def f() -> None:\n    import logging\n",
        "from .... import x\n",
    ):
        assert len(check_source(source, "src/eukhe/rules/example.py")) == 1, source


def test_checker_allows_stdlib_and_rules() -> None:
    source = (
        "from __future__ import annotations\n"
        "import dataclasses\n"
        "from enum import Enum\n"
        "from collections.abc import Iterator\n"
        "import eukhe.rules.run\n"
        "from eukhe.rules import run\n"
        "from eukhe import rules\n"
        "from . import run\n"
        "from .run import Cfg\n"
        "from .. import rules\n"
    )
    assert check_source(source, "src/eukhe/rules/example.py") == []
    assert check_source("from .run import Cfg\nfrom .sub import x\n", "src/eukhe/rules/__init__.py") == []
    assert check_source("from ..run import Cfg\n", "src/eukhe/rules/sub/mod.py") == []
    assert len(check_source("from ...laws import x\n", "src/eukhe/rules/sub/mod.py")) == 1
