"""Nothing below the faces calls back up into them (issue 41): the command line and the
interactive agent hand the runtime typed sinks (`run.sink.RunSink`: an object of the
protocol), never a lambda, a function of their own or a bound method of one of their
objects. The check reads the faces' code: every call into a module below them (an import
from below, or an object one of those made) is looked at, argument by argument."""

from __future__ import annotations

import ast
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
