"""Nothing below the faces calls back up into them (issue 41): the command line and the
interactive agent hand the runtime typed sinks (`run.sink.RunSink`: an object of the
protocol), never a lambda, a function of their own or a bound method of one of their
objects. The check reads the faces' code: every call into a module below them (an import
from below, or an object one of those made) is looked at, argument by argument."""

from __future__ import annotations

import ast
import dataclasses
import inspect
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "eukhe"


def module_of(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_face(module: str) -> bool:
    return any(module == f or module.startswith(f"{f}.") for f in ("eukhe.cli", "eukhe.ui", "eukhe.__main__"))


def below(target: str | None) -> bool:
    return target is not None and target.split(".")[0] == "eukhe" and not is_face(target)


def root(e: ast.expr) -> ast.expr:
    while isinstance(e, ast.Attribute | ast.Call):
        e = e.value if isinstance(e, ast.Attribute) else e.func
    return e


def callbacks_up(source: str, module: str, classes: set[str], methods: set[str]) -> list[str]:
    """The calls of `source` (a face's module) into a module below that pass one of the
    face's callables (`classes`: the faces' classes, `methods`: their methods' names), each
    as `module:line: call(argument)`."""
    tree = ast.parse(source)
    imports: dict[str, str] = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and n.module:
            imports |= {a.asname or a.name: f"{n.module}.{a.name}" for a in n.names}
        elif isinstance(n, ast.Import):
            imports |= {a.asname or a.name.split(".")[0]: a.name for a in n.names}
    defs = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    stored = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    made_below: set[str] = set()  # objects a module below made: `runtime = open_runtime(...)`
    # the face's objects: `self` in its classes, a parameter typed by a face's class, one it makes
    objects = {"self"} if any(isinstance(n, ast.ClassDef) for n in ast.walk(tree)) else set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call):
            names = {t.id for t in n.targets if isinstance(t, ast.Name)}
            r = root(n.value)
            if isinstance(r, ast.Name) and below(imports.get(r.id)):
                made_below |= names
            if isinstance(n.value.func, ast.Name) and n.value.func.id in classes:
                objects |= names
        elif isinstance(n, ast.arg) and n.annotation is not None:
            named = {x.id for x in ast.walk(n.annotation) if isinstance(x, ast.Name)}
            named |= {
                x.value
                for x in ast.walk(n.annotation)
                if isinstance(x, ast.Constant) and isinstance(x.value, str)
            }
            if named & classes:
                objects.add(n.arg)
    found = []
    for n in ast.walk(tree):
        if not isinstance(n, ast.Call) or not isinstance(r := root(n.func), ast.Name):
            continue
        if not (below(imports.get(r.id)) or r.id in made_below):
            continue
        for a in [*n.args, *(k.value for k in n.keywords)]:
            if (
                isinstance(a, ast.Lambda)
                or (isinstance(a, ast.Name) and a.id in defs - stored)
                or (
                    isinstance(a, ast.Attribute)
                    and isinstance(a.value, ast.Name)
                    and a.value.id in objects
                    and a.attr in methods
                )
            ):
                found.append(f"{module}:{n.lineno}: {ast.unparse(n.func)}({ast.unparse(a)})")
    return found


def test_no_face_hands_a_callable_of_its_own_down() -> None:
    faces = [p for p in sorted(SRC.rglob("*.py")) if is_face(module_of(p))]
    defined = [n for p in faces for n in ast.walk(ast.parse(p.read_text())) if isinstance(n, ast.ClassDef)]
    classes = {c.name for c in defined}
    methods = {
        f.name for c in defined for f in c.body if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    found = [line for p in faces for line in callbacks_up(p.read_text(), module_of(p), classes, methods)]
    assert found == [], "a face hands a callable of its own down; pass a typed sink instead:\n" + "\n".join(
        found
    )


def test_the_check_finds_each_kind_of_callback() -> None:
    """The check itself can fail: a lambda, a face's function and a face object's bound method,
    each handed to a function below, or to an object a function below made."""
    source = """
from eukhe.runtime import open_runtime
from eukhe.home import open_home

def progress(line): ...

class Printer:
    def show(self, kind, text): ...

def main(printer: Printer, other):
    open_home(say=lambda line: print(line))
    open_home(say=progress)
    runtime = open_runtime(1, 2, 3)
    runtime.drive(printer.show)
    runtime.drive(printer.name)  # data of a face's object, not a method
    open_home(say=sorted)  # a builtin is no face's
    runtime.drive(other.show)  # not known as a face's object
    sorted([], key=lambda x: x)  # not a call below
"""
    got = callbacks_up(source, "eukhe.cli.x", {"Printer"}, {"show"})
    assert [line.split(": ", 1)[0] for line in got] == [
        "eukhe.cli.x:11",
        "eukhe.cli.x:12",
        "eukhe.cli.x:14",
    ], got


RUN_BUILT_WHOLE = ("runtime.py", "run/assemble.py", "run/workflow.py")
"""The composition root, the run's builder and its workflow: each part they make is made whole."""


def assigned_after(source: str) -> list[int]:
    """The lines of `source` that assign to an attribute of an object other than `self`: a part
    finished after it was made (`process.lease = ...`, `gate.hooks = ...`)."""
    lines = []
    for n in ast.walk(ast.parse(source)):
        targets = (
            n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, ast.AugAssign) else []
        )
        for t in targets:
            for e in t.elts if isinstance(t, ast.Tuple) else [t]:
                if isinstance(e, ast.Attribute) and not (
                    isinstance(e.value, ast.Name) and e.value.id == "self"
                ):
                    lines.append(n.lineno)
    return sorted(set(lines))


def test_the_run_s_parts_are_made_whole_never_finished_after() -> None:
    found = [
        f"{name}:{line}" for name in RUN_BUILT_WHOLE for line in assigned_after((SRC / name).read_text())
    ]
    assert found == [], "a part assigned to after it is made; give it at construction:\n" + "\n".join(found)


def test_the_check_finds_a_part_finished_after_it_is_made() -> None:
    source = """
def open(registry):
    process = ProcessContext()
    process.lease = partial(held, registry)
    process.admission, process.owner = registry, registry.client
    children.offered += ("read",)
    self.made = 1
    made = Made(lease=registry)
"""
    assert assigned_after(source) == [4, 5, 6]  # not `self`'s own, not a keyword at construction


def test_one_way_into_a_loop_from_another_thread() -> None:
    """Another thread reaches a run's loop (its cancel, its gate) and a waiter's (the run's end)
    through `run.handles.call_soon` only: one `call_soon_threadsafe` in the run's code."""
    run = [SRC / "runtime.py", *sorted((SRC / "run").rglob("*.py"))]
    calls = [f"{p.name}" for p in run for _ in range(p.read_text().count(".call_soon_threadsafe("))]
    assert calls == ["handles.py"], calls


def test_a_process_keeps_one_table_of_its_runs_not_pairs_of_loops() -> None:
    """A run is reached through its handle (`ProcessContext.runs`); no dict of (loop, X) pairs,
    no future parked for a run's end, no callback for `eukhe abort`."""
    from eukhe.run.context import ProcessContext

    kinds = {f.name: str(f.type) for f in dataclasses.fields(ProcessContext)}
    assert kinds["runs"] == "RunTable"
    pairs = [name for name, kind in kinds.items() if kind.startswith("dict[") and "AbstractEventLoop" in kind]
    assert pairs == [] and "ending" not in kinds, pairs
    assert "lease" in kinds and "Callable" not in kinds["lease"], kinds["lease"]
    source = (SRC / "client" / "admission.py").read_text()
    assert "on_abort" not in source and "aborts: Aborts | None" in source


def test_the_seams_below_the_workflow_are_typed_objects_not_callables() -> None:
    """What the workflow gives a run's parts is one interface (`run.steps.Steps`): `assemble`
    and `Delivery` take it, and no callable or `Any` of the workflow's (its take, its loop's
    run, DBOS's sleep); the loop's inbox and gate are typed objects too."""
    from eukhe.run.assemble import assemble
    from eukhe.run.delivery import Delivery
    from eukhe.run.loop import RunLoop

    taken = {
        **{f"assemble({n})": str(p.annotation) for n, p in inspect.signature(assemble).parameters.items()},
        **{f"Delivery.{f.name}": str(f.type) for f in dataclasses.fields(Delivery)},
        **{
            f"RunLoop.{f.name}": str(f.type)
            for f in dataclasses.fields(RunLoop)
            if f.name in ("inbox", "gate")
        },
    }
    loose = {k: v for k, v in taken.items() if "Callable" in v or "Any" in v}
    assert loose == {}, loose
    assert taken["assemble(steps)"] == taken["Delivery.steps"] == "Steps"


def test_no_two_classes_of_the_run_share_a_name() -> None:
    """One word for each thing: the session's setup and the run's settings are two classes of
    two names (`SessionSetup`, `RunConfig`), not two `Setup`s."""
    named: dict[str, list[str]] = {}
    for p in [SRC / "runtime.py", *sorted((SRC / "run").rglob("*.py"))]:
        for n in ast.parse(p.read_text()).body:
            if isinstance(n, ast.ClassDef):
                named.setdefault(n.name, []).append(p.name)
    assert {k: v for k, v in named.items() if len(v) > 1} == {}
