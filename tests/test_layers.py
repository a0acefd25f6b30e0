"""The house's layers hold: every package of eukhe imports only from the rows below
it, no module is in an import cycle, and the rules are pure. Imports made inside
functions count as much as those at the top (they are arrows all the same), and each
one is listed here with its reason."""

from __future__ import annotations

import ast
import functools
import sys
from collections import defaultdict
from pathlib import Path

import pytest

# on one worker: the import graph (`all_arrows`, every module parsed, about 1.8 CPU-seconds) is
# read once for all of them, not once on each worker that runs one
pytestmark = pytest.mark.xdist_group("layers")

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "eukhe"

LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("the pure rules", ("rules",)),
    ("their laws and the engine that checks them", ("laws",)),
    ("the errors' one root", ("errors",)),
    ("JSON's types, where a value is what json.loads gives", ("json_types",)),
    (
        "the ground: terminal text, run ids, file kinds, whole writes, eukhe's own reads, crash "
        "windows, polls, the process exit, the home's files",
        (
            "terminal",
            "ids",
            "humanize",
            "filekind",
            "fdwrite",
            "ownfiles",
            "fault_injection",
            "timing",
            "process_exit",
            "procfs",
            "home",
        ),
    ),
    ("the events every face shows", ("events",)),
    ("deadlines and cancels", ("waits",)),
    ("settings", ("settings",)),
    # a person's own choice, like the home's settings: the loaders of hooks, servers, agents,
    # commands and skills each read the plugins in effect
    ("Claude Code's plugins a person added: their record, which are in effect", ("plugins",)),
    ("providers", ("ai",)),
    ("admission (H3)", ("admission",)),
    ("what a face shows of the events: their lines, the agent's view", ("display",)),
    ("the bash reader the permission gate asks", ("bash",)),
    ("the sandbox", ("sandbox",)),
    ("background jobs: their keepers, records and sweep (rules.job)", ("jobs",)),
    ("skills", ("skills",)),
    ("the built-in tools", ("tools",)),
    ("MCP servers as tools", ("mcp",)),
    ("the Python kernel", ("kernel",)),
    ("the user's hook commands, each one bounded (rules.hook)", ("hooks",)),
    ("persistence: the DBOS launch, its codec, URLs, the session queries", ("store",)),
    # the chat's tables live in the store's database (through store.engine), so the
    # memory stands on the store, not the other way round
    ("the chat memory", ("memory",)),
    ("the owner's client and its wire", ("client",)),
    ("subagents: delivery, ledger, watch, their tools", ("children",)),
    ("the run: its loop, its workflow, its runtime, its session loop, its context", ("run",)),
    ("the owner daemon", ("owner",)),
    ("the one composition root", ("runtime",)),
    # entry points: they put a process together
    ("the owner process's entry", ("owner.__main__",)),
    ("the interactive agent", ("ui",)),
    ("the editor face: the Agent Client Protocol on stdio", ("acp",)),
    ("the command line", ("cli", "__main__", "__init__")),
    ("the warm template's entry: it forks the command line", ("warm",)),
]
"""The rows from the ground up: a module imports only from its row and the rows below."""

LAZY: dict[tuple[str, str], str] = {
    ("eukhe.ai.models", "eukhe.ai.openai_chat"): "a provider's SDK loads only when a run uses it",
    ("eukhe.ai.models", "eukhe.ai.openai_responses"): "a provider's SDK loads only when a run uses it",
    ("eukhe.ai.models", "eukhe.ai.anthropic"): "a provider's SDK loads only when a run uses it",
    ("eukhe.owner.__main__", "eukhe.runtime"): (
        "the owner listens before it loads DBOS and the run's machinery, which only a recovery needs"
    ),
    ("eukhe.cli.entry", "eukhe.ui.app"): (
        "`eukhe` draws the prompt's mark before the agent's imports (prompt_toolkit, the settings)"
    ),
    ("eukhe.cli.entry", "eukhe.cli.main"): "the interactive agent never waits for the command line's parser",
    ("eukhe.cli.lazy", "eukhe.cli.stored"): (
        "DBOS and SQLAlchemy load only for a command that opens or reads the store"
    ),
    (
        "eukhe.cli.lazy",
        "eukhe.cli.lawbook",
    ): "the laws' engine (Hypothesis, CrossHair) loads only for `eukhe laws`",
    ("eukhe.cli.lazy", "eukhe.cli.demo"): (
        "the faux model and the OpenAI SDK load only for `eukhe demo` and `eukhe faux serve`"
    ),
    ("eukhe.run.kernel", "eukhe.kernel"): "jupyter_client loads only for a run's first cell",
    ("eukhe.run.assemble", "eukhe.mcp.servers"): "the mcp SDK loads only for a run with MCP servers",
    ("eukhe.mcp.check", "eukhe.mcp.trial"): (
        "the mcp SDK loads only when servers are checked (`eukhe mcp list` and `test`, the agent's /mcp)"
    ),
    ("eukhe.cli.lazy", "eukhe.acp.serve"): "the protocol's SDK and the store load only for `eukhe acp`",
    ("eukhe.tools.web.fetch", "eukhe.tools.web.convert"): (
        "markdownify (BeautifulSoup) and pypdf load only for a run's first fetched page: 0.2 s of every start"
    ),
    ("eukhe.ui.session", "eukhe.ui.session_runtime"): (
        "the agent's store half (DBOS, SQLAlchemy) loads in the boot thread, behind the prompt"
    ),
}
"""Every import made inside a function, each with its reason."""

MOST_LAZY = 15
"""At most this many imports inside functions in all (issue 25; the kernel's, issue 26; web_fetch's
converters, issue 44): the graph stays in sight."""

IMPURE_STDLIB = frozenset({"asyncio", "random", "time", "logging", "os", "socket", "subprocess", "threading"})
"""Standard-library modules a rule may not import: no I/O, clock, randomness, logging or asyncio."""


def module_of(path: Path, src: Path = SRC) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def row_of(module: str) -> int:
    """The index of the row that holds `module` (the longest name that matches)."""
    rel = module.removeprefix("eukhe").removeprefix(".") or "__init__"
    best, found = -1, None
    for i, (_, names) in enumerate(LAYERS):
        for n in names:
            if (rel == n or rel.startswith(n + ".")) and len(n) > best:
                best, found = len(n), i
    if found is None:
        raise AssertionError(f"{module}: in no row of LAYERS; give it one")
    return found


def is_module(dotted: str, src: Path = SRC) -> bool:
    p = src / dotted.replace(".", "/")
    return p.with_suffix(".py").exists() or (p / "__init__.py").exists()


class Arrow:
    def __init__(self, source: str, target: str, line: int, in_function: bool, type_only: bool) -> None:
        self.source, self.target, self.line = source, target, line
        self.in_function, self.type_only = in_function, type_only

    def __repr__(self) -> str:
        where = " (inside a function)" if self.in_function else ""
        return f"{self.source}:{self.line} imports {self.target}{where}"


def arrows_of(path: Path, src: Path = SRC) -> list[Arrow]:
    """Every import of an eukhe module the file makes, wherever it is made."""
    module = module_of(path, src)
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    parents: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node

    def context(node: ast.AST) -> tuple[bool, bool]:
        in_function = type_only = False
        while node in parents:
            node = parents[node]
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                in_function = True
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                type_only = True
        return in_function, type_only

    out = []
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = module.split(".") if is_package else module.split(".")[:-1]
                base = ".".join(here[: len(here) - node.level + 1] + ([node.module] if node.module else []))
            # `from pkg import sub` is an arrow to the submodule, not to the package's other parts
            subs = [f"{base}.{a.name}" for a in node.names if is_module(f"{base}.{a.name}", src)]
            targets = subs if subs and len(subs) == len(node.names) else [base, *subs]
        for t in targets:
            if t == "eukhe" or t.startswith("eukhe."):
                out.append(Arrow(module, t, node.lineno, *context(node)))
    return out


@functools.cache
def all_arrows() -> list[Arrow]:  # parsed once for the module's tests (three seconds a parse)
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 100, f"too few modules under {PACKAGE}"
    return [a for f in files for a in arrows_of(f)]


def test_no_import_runs_back_up_the_layers() -> None:
    up = [
        f"{a!r}: row {row_of(a.target)} ({LAYERS[row_of(a.target)][0]}) is above row "
        f"{row_of(a.source)} ({LAYERS[row_of(a.source)][0]})"
        for a in all_arrows()
        if a.target != "eukhe" and row_of(a.target) > row_of(a.source)
    ]
    assert up == [], "imports that run back up:\n" + "\n".join(up)


def test_no_module_is_in_an_import_cycle() -> None:
    graph: dict[str, set[str]] = defaultdict(set)
    for a in all_arrows():
        if not a.type_only and a.target != a.source and a.target != "eukhe":
            graph[a.source].add(a.target)
    cycles = strongly_connected(graph)
    assert cycles == [], "modules in a cycle:\n" + "\n".join(" -> ".join(sorted(c)) for c in cycles)


def test_no_package_is_in_an_import_cycle() -> None:
    """Packages, not only modules: `cli` importing one module of `warm` while `warm` imports
    `cli` is a cycle the module graph does not show (each module's arrows go one way)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for a in all_arrows():
        source, target = package_of(a.source), package_of(a.target)
        if not a.type_only and source != target and a.target != "eukhe":
            graph[source].add(target)
    cycles = strongly_connected(graph)
    assert cycles == [], "packages in a cycle:\n" + "\n".join(" -> ".join(sorted(c)) for c in cycles)


def package_of(module: str) -> str:
    """The package a module belongs to: eukhe's first level below `eukhe` (`eukhe.cli.main`:
    `eukhe.cli`; `eukhe.errors`: itself)."""
    return ".".join(module.split(".")[:2])


def test_imports_inside_functions_are_the_few_listed_lazy_ones() -> None:
    inside = [a for a in all_arrows() if a.in_function and not a.type_only]
    unlisted = [repr(a) for a in inside if (a.source, a.target) not in LAZY]
    assert unlisted == [], "imports inside functions, not listed in LAZY with a reason:\n" + "\n".join(
        unlisted
    )
    stale = sorted(set(LAZY) - {(a.source, a.target) for a in inside})
    assert stale == [], f"LAZY lists imports no longer made: {stale}"
    assert len(inside) <= MOST_LAZY, f"{len(inside)} imports inside functions (at most {MOST_LAZY}):\n" + (
        "\n".join(map(repr, inside))
    )


FACES = ("eukhe.cli", "eukhe.ui", "eukhe.acp")
"""The faces a person or an editor meets: `eukhe run` and the command line, the agent, the editor's."""

BEHIND_THE_RUNTIME = ("eukhe.store", "eukhe.client", "eukhe.memory")
"""What the faces reach only through the runtime and the run's public names (issue 52, item 6):
the session service, `run/home_store.py`, `run/store_access.py`, `run/owner_access.py` and
`run/chat_access.py` stand in front of them."""

PAST_THE_RUNTIME: dict[tuple[str, str], str] = {
    ("eukhe.cli.entry", "eukhe.client.handoff"): (
        "the `eukhe` command's first step hands `eukhe run` to the warm template before anything else "
        "loads; the runtime's face would load the run's machinery the handoff exists to skip"
    ),
}
"""Each import of a face past the runtime, with its reason."""

LAUNCHES: dict[tuple[str, str], str] = {
    ("eukhe.cli.entry", "eukhe.ui"): "the launcher draws the agent's prompt mark before its imports",
    ("eukhe.cli.entry", "eukhe.ui.typeahead"): "the launcher keeps what is typed before the agent is up",
    ("eukhe.cli.entry", "eukhe.ui.app"): "the launcher opens the agent",
    ("eukhe.cli.lazy", "eukhe.acp.serve"): "`eukhe acp` opens the editor's face",
}
"""The only imports of one face by another: the command's launcher opening a face. Whatever two
faces share lives below them (`eukhe.display`, the runtime)."""


def face_breaks(arrows: list[Arrow]) -> list[str]:
    """Every arrow from a face past the runtime, or into another face, not listed with its reason.
    Imports for the type checker count: a face that names the store's types knows the store."""
    found = []
    for a in arrows:
        source, target = package_of(a.source), package_of(a.target)
        if source not in FACES or (a.source, a.target) in PAST_THE_RUNTIME | LAUNCHES:
            continue
        if target in BEHIND_THE_RUNTIME:
            found.append(f"{a!r}: a face reaches {target} only through the runtime's public names")
        elif target in FACES and target != source:
            found.append(f"{a!r}: one face imports another; move what they share below both")
    return found


def test_faces_reach_the_store_client_and_memory_only_through_the_runtime() -> None:
    arrows = all_arrows()
    found = face_breaks(arrows)
    assert found == [], "faces past the runtime:\n" + "\n".join(found)
    made = {(a.source, a.target) for a in arrows}
    stale = sorted(set(PAST_THE_RUNTIME | LAUNCHES) - made)
    assert stale == [], f"listed imports no longer made: {stale}"


def test_the_face_check_sees_a_face_past_the_runtime_and_a_face_in_another() -> None:
    seen = face_breaks(
        [
            Arrow("eukhe.ui.session_runtime", "eukhe.store.durable", 1, False, True),
            Arrow("eukhe.cli.printer", "eukhe.ui.lines", 2, False, False),
            Arrow("eukhe.acp.agent", "eukhe.memory.chat", 3, True, False),
        ]
    )
    assert len(seen) == 3, seen
    passes = [
        Arrow("eukhe.cli.entry", "eukhe.ui.app", 1, True, False),
        Arrow("eukhe.cli.entry", "eukhe.client.handoff", 1, False, False),
        Arrow("eukhe.ui.session", "eukhe.run.home_store", 1, False, False),
        Arrow("eukhe.run.home_store", "eukhe.store.durable", 1, False, False),
        Arrow("eukhe.cli.main", "eukhe.cli.stored", 1, False, False),
    ]
    assert face_breaks(passes) == []


def test_the_layer_checks_see_an_upward_import_a_cycle_and_a_hidden_import(tmp_path: Path) -> None:
    # the checks themselves, on a made-up package: each must see its break
    pkg = tmp_path / "src" / "eukhe"
    (pkg / "rules").mkdir(parents=True)
    (pkg / "cli").mkdir()
    (pkg / "rules" / "a.py").write_text("def f():\n    from eukhe.cli import b\n")
    (pkg / "cli" / "b.py").write_text("from eukhe.rules import a\n")
    src = tmp_path / "src"
    arrows = arrows_of(pkg / "rules" / "a.py", src) + arrows_of(pkg / "cli" / "b.py", src)
    [up] = [a for a in arrows if a.source == "eukhe.rules.a"]
    assert up.target == "eukhe.cli.b" and up.in_function and row_of(up.target) > row_of(up.source)
    graph = {a.source: {a.target} for a in arrows}
    assert strongly_connected(graph) == [{"eukhe.rules.a", "eukhe.cli.b"}]


def strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """The cycles of `graph`: its strongly connected parts of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = set()
            while True:
                w = stack.pop()
                on.discard(w)
                part.add(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(part)

    for v in list(graph):
        if v not in index:
            visit(v)
    return found


# ---------------------------------------------------------------- the rules' row: pure


def impure(path: Path, src: Path = SRC) -> list[str]:
    """Every import a rule may not make: only the standard library (less I/O, clock,
    randomness, logging and asyncio) and eukhe.rules."""
    problems = []
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    module = module_of(path, src)
    for a in arrows_of(path, src):
        if not (a.target == "eukhe.rules" or a.target.startswith("eukhe.rules.")):
            problems.append(f"{a!r}: a rule imports only the standard library and eukhe.rules")
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        for n in names:
            top = n.partition(".")[0]
            if top in ("eukhe", "__future__"):
                continue
            if top in IMPURE_STDLIB:
                problems.append(
                    f"{module}:{node.lineno} imports {n}: no I/O, clock, randomness, logging or asyncio"
                )
            elif top not in sys.stdlib_module_names:
                problems.append(
                    f"{module}:{node.lineno} imports {n}: neither the standard library nor eukhe.rules"
                )
    return problems


def test_the_rules_are_pure() -> None:
    files = sorted((PACKAGE / "rules").rglob("*.py"))
    assert files
    problems = [p for f in files for p in impure(f)]
    assert problems == [], "rules must be pure; forbidden imports:\n" + "\n".join(problems)


def test_the_purity_check_sees_each_impure_import(tmp_path: Path) -> None:
    src = tmp_path / "src"
    rules = src / "eukhe" / "rules"
    rules.mkdir(parents=True)
    for source in (
        "import asyncio\n",
        "import hypothesis\n",
        "from eukhe.laws import x\n",
        "from ..laws import x\n",
        "def f() -> None:\n    import logging\n",
        "from time import monotonic\n",
    ):
        (rules / "example.py").write_text(source)
        assert len(impure(rules / "example.py", src)) == 1, source
    (rules / "run.py").write_text("")
    (rules / "example.py").write_text(
        "from __future__ import annotations\nimport dataclasses\n"
        "from eukhe.rules import run\nfrom .run import Cfg\n"
    )
    assert impure(rules / "example.py", src) == []


# ---------------------------------------------------------------- the command line: a face only


def process_control(path: Path) -> list[str]:
    """What in a module of the command line ends or steers the process: the `signal`
    module, `os._exit`. The runtime does both (`runtime.py`, its ending through
    `process_exit.py`); the command line parses, prints and asks it."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            found += [
                f"{path.name}:{node.lineno} imports {n}" for n in names if n.partition(".")[0] == "signal"
            ]
        elif isinstance(node, ast.Attribute) and node.attr in ("_exit", "add_signal_handler"):
            found.append(f"{path.name}:{node.lineno} calls {ast.unparse(node)}")
    return found


def test_the_command_line_neither_handles_signals_nor_ends_the_process() -> None:
    files = sorted((PACKAGE / "cli").rglob("*.py"))
    assert files
    found = [f for p in files for f in process_control(p)]
    assert found == [], "the command line does what the runtime should:\n" + "\n".join(found)


def test_the_process_check_sees_a_signal_handler_and_an_exit(tmp_path: Path) -> None:
    for source in (
        "import signal\n",
        "from signal import SIGINT\n",
        "import os\nos._exit(1)\n",
        "loop.add_signal_handler(2, f)\n",
    ):
        (tmp_path / "m.py").write_text(source)
        assert len(process_control(tmp_path / "m.py")) == 1, source
    (tmp_path / "m.py").write_text("import sys\nsys.exit(1)\n")
    assert process_control(tmp_path / "m.py") == []
