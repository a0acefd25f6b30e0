"""Each package of eukhe has a public face: its `__init__` names, in `__all__`, what other
packages may use of it (issue 52, item 6). A module of another package imports only those
names; a package's own modules use its privates freely.

What a package names, it either loads (`from eukhe.settings import load`: import it from the
package) or, where loading it all would load what its light parts never need (DBOS,
SQLAlchemy, an SDK), names under `TYPE_CHECKING` from the module that holds it (`from
eukhe.store.urls import StoreError`: import it from that module). A package whose face is its
modules (the rules, each a model) names them; a module named so is public whole, less its
`_private` names. Top-level modules (`eukhe.errors`, `eukhe.ids`) are their own face, and so
are the modules of `rules` and `laws`, which have no `__init__` (each is a model or its laws,
public whole): their names without a leading underscore."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "eukhe"

LOADS: dict[str, str] = {
    "eukhe.warm.__main__": (
        "the warm template imports the modules a run loads (`import eukhe.run.workflow`), to fork runs "
        "with their imports done; it takes no name from them"
    ),
}
"""Modules whose plain `import eukhe.x.y` statements load a module for its own sake, each with why."""


@dataclass(frozen=True)
class Face:
    """What a package's `__init__` names: each public name, where it is named from (the
    module, or the package itself for a submodule or a name defined there), and whether the
    package loads it or names it for the type checker only."""

    names: dict[str, str]
    loaded: frozenset[str]


def module_of(path: Path, src: Path) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(dotted: str, src: Path) -> bool:
    p = src / dotted.replace(".", "/")
    return p.with_suffix(".py").exists() or (p / "__init__.py").exists()


def face_of(package: Path) -> Face | None:
    """The face `package/__init__.py` declares, or None when it has no `__all__`."""
    tree = ast.parse((package / "__init__.py").read_text(encoding="utf-8"))
    listed: list[str] | None = None
    where: dict[str, str] = {}
    loaded: set[str] = set()
    name = "eukhe." + package.name

    def bind(node: ast.stmt, typing_only: bool) -> None:
        bound: list[tuple[str, str]] = []
        if isinstance(node, ast.ImportFrom) and node.module:
            bound = [(a.asname or a.name, f"{node.module}.{a.name}") for a in node.names]
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            bound = [(node.name, f"{name}.{node.name}")]
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            bound = [(t.id, f"{name}.{t.id}") for t in targets if isinstance(t, ast.Name)]
        for local, full in bound:
            where[local] = full
            if not typing_only:
                loaded.add(local)

    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                bind(inner, typing_only=True)
        else:
            bind(node, typing_only=False)
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign)
            else []
        )
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and node.value is not None:
            listed = list(ast.literal_eval(node.value))
    if listed is None:
        return None
    lazy = [n for n in tree.body if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "_LAZY"]
    if "__getattr__" in loaded and lazy:  # its `__getattr__` loads what `_LAZY` names (ai's adapters)
        loaded |= set(ast.literal_eval(lazy[0].value))
    return Face({n: where.get(n, f"{name}.{n}") for n in listed}, frozenset(loaded))


@dataclass(frozen=True)
class Use:
    source: str
    line: int
    module: str  # what the import names after `from` (or the module of `import a.b`)
    name: str | None  # the name it takes from it (None: `import eukhe.x.y`)

    def __repr__(self) -> str:
        what = f"from {self.module} import {self.name}" if self.name else f"import {self.module}"
        return f"{self.source}:{self.line} {what}"


def uses_of(path: Path, src: Path) -> list[Use]:
    """Every name the file takes from eukhe, wherever the import is made."""
    module = module_of(path, src)
    here = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(here[: len(here) - node.level + 1] + ([node.module] if node.module else []))
            if base == "eukhe" or base.startswith("eukhe."):
                out += [Use(module, node.lineno, base, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            out += [Use(module, node.lineno, a.name, None) for a in node.names if a.name.startswith("eukhe.")]
    return out


def package_of(module: str) -> str:
    return ".".join(module.split(".")[:2])


def breaks(src: Path) -> list[str]:
    """Every import that passes another package's face, with what is wrong."""
    root = src / "eukhe"
    faces = {f"eukhe.{p.name}": face_of(p) for p in root.iterdir() if (p / "__init__.py").exists()}
    found = []
    for path in sorted(root.rglob("*.py")):
        for use in uses_of(path, src):
            target = package_of(use.module) if use.module != "eukhe" else f"eukhe.{use.name}"
            if target == package_of(use.source) or target == "eukhe":
                continue
            if use.name is None and use.source in LOADS:
                continue
            if problem := judged(use, target, faces, src):
                found.append(f"{use!r}: {problem}")
    return found


def judged(use: Use, target: str, faces: dict[str, Face | None], src: Path) -> str | None:
    """What is wrong with `use` of package (or top-level module) `target`, or None."""
    if target not in faces:  # a top-level module: its names without an underscore
        if use.module == "eukhe":
            return None
        private = [p for p in [*use.module.split("."), use.name or ""] if p.startswith("_")]
        return f"{private[0]} is private to {use.module}" if private else None
    face = faces[target]
    if face is None:
        return f"{target} has no public face: name what others may use in its __init__'s __all__"
    if use.module == "eukhe":  # `from eukhe import store`: the package itself
        return None
    path = use.module.removeprefix(target).removeprefix(".")
    first = path.split(".")[0] if path else ""
    if first and first in face.names and face.names[first] == f"{target}.{first}":
        # a module the package names whole: its names, less its privates
        return f"{use.name} is private to {use.module}" if use.name and use.name.startswith("_") else None
    if use.name is None:
        return f"{use.module} is not in {target}'s face"
    if not path:  # from the package itself
        if use.name not in face.names:
            return f"{use.name} is not in {target}'s face (its __all__)"
        if use.name not in face.loaded and not is_module(f"{target}.{use.name}", src):
            return (
                f"{target} names {use.name} for the type checker only: import it from {face.names[use.name]}"
            )
        return None
    if first.startswith("_"):
        return f"{use.module} is private: import {use.name} from {target}"
    if use.name not in face.names:
        return f"{use.name} is not in {target}'s face (its __all__)"
    if face.names[use.name] != f"{use.module}.{use.name}":
        return f"{target} names {use.name} from {face.names[use.name]}, not from {use.module}"
    return None


def test_no_module_passes_another_packages_face() -> None:
    found = breaks(SRC)
    assert found == [], "imports past a package's face (name it in the package's __all__):\n" + "\n".join(
        found
    )


def test_every_package_has_a_face() -> None:
    bare = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists() and face_of(p) is None)
    assert bare == [], f"packages whose __init__ names no __all__: {bare}"


def test_every_name_a_face_names_is_there() -> None:
    """A face names what exists: its module holds the name (or is it)."""
    missing = []
    for p in sorted(PACKAGE.iterdir()):
        if (p / "__init__.py").exists() and (face := face_of(p)) is not None:
            for name, full in face.names.items():
                module, _, attr = full.rpartition(".")
                if is_module(full, SRC) or name in face.loaded:
                    continue
                file = SRC / (module.replace(".", "/") + ".py")
                if not file.exists():
                    file = SRC / module.replace(".", "/") / "__init__.py"
                if not file.exists() or attr not in bound_in(file):
                    missing.append(f"eukhe.{p.name}: {name} ({full})")
    assert missing == [], "faces name what is not there:\n" + "\n".join(missing)


def bound_in(file: Path) -> set[str]:
    """The names a module binds at its top level (defined, assigned or imported)."""
    names: set[str] = set()
    for node in ast.parse(file.read_text(encoding="utf-8")).body:
        for n in [node, *(node.body if isinstance(node, ast.If | ast.Try) else [])]:
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(n.name)
            elif isinstance(n, ast.Import | ast.ImportFrom):
                names |= {a.asname or a.name.partition(".")[0] for a in n.names}
            elif isinstance(n, ast.Assign | ast.AnnAssign):
                for t in n.targets if isinstance(n, ast.Assign) else [n.target]:
                    names |= {e.id for e in ast.walk(t) if isinstance(e, ast.Name)}
    return names


def test_the_check_sees_each_way_past_a_face(tmp_path: Path) -> None:
    """The check itself, on a made-up eukhe: each break is seen, each right use passes."""
    src = tmp_path / "src"
    store, rules, cli = (src / "eukhe" / n for n in ("store", "rules", "cli"))
    for d in (store, rules, cli):
        d.mkdir(parents=True)
    (src / "eukhe" / "__init__.py").write_text("")
    (src / "eukhe" / "ids.py").write_text("def new(): ...\ndef _raw(): ...\n")
    (store / "__init__.py").write_text(
        "from typing import TYPE_CHECKING\nfrom eukhe.store._open import open_store\n"
        "if TYPE_CHECKING:\n    from eukhe.store.urls import StoreError\n"
        "__all__ = ['StoreError', 'open_store', 'urls']\n"
    )
    (store / "_open.py").write_text("def open_store(): ...\ndef hidden(): ...\n")
    (store / "urls.py").write_text(
        "class StoreError(Exception): ...\ndef _private(): ...\ndef shown(): ...\n"
    )
    (store / "codec.py").write_text("def encode(): ...\n")
    (rules / "__init__.py").write_text("__all__ = ['wait']\n")
    (rules / "wait.py").write_text("class End: ...\n")
    (cli / "__init__.py").write_text("__all__ = []\n")
    right = [
        "from eukhe.store import open_store",
        "from eukhe.store.urls import StoreError",
        "from eukhe.store import urls",
        "from eukhe.store.urls import shown",  # `urls` is named whole
        "from eukhe.rules import wait",
        "from eukhe.rules.wait import End",
        "from eukhe.ids import new",
        "from eukhe import store",
    ]
    wrong = [
        "from eukhe.store._open import open_store",  # a private module
        "from eukhe.store import StoreError",  # named for the type checker only
        "from eukhe.store.codec import encode",  # not in the face
        "from eukhe.store import hidden",
        "from eukhe.store.urls import _private",
        "from eukhe.ids import _raw",
        "import eukhe.store.codec",
    ]
    for line in right + wrong:
        (cli / "main.py").write_text(line + "\n")
        assert (breaks(src) == []) == (line in right), (line, breaks(src))
    (cli / "main.py").write_text("")
    (rules / "__init__.py").write_text("")
    assert breaks(src) == []  # nothing uses the rules: no face is needed to pass
    (cli / "main.py").write_text("from eukhe.rules import wait\n")
    assert breaks(src) == [
        "eukhe.cli.main:1 from eukhe.rules import wait: eukhe.rules has no public face: "
        "name what others may use in its __init__'s __all__"
    ]
