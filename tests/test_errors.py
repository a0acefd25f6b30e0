"""One root for eukhe's errors: every error class eukhe raises (bar the private ones a
module raises and catches itself) is an `EukheError`, whose code says what failed."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import eukhe
from eukhe.errors import Code, EukheError


def error_classes() -> list[type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(eukhe.__path__, "eukhe."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if (
                inspect.isclass(obj)
                and issubclass(obj, BaseException)
                and obj.__module__ == module.__name__
                and not name.startswith("_")
            ):
                found[f"{obj.__module__}.{name}"] = obj
    return list(found.values())


def test_every_error_eukhe_raises_has_the_one_root_and_a_code() -> None:
    classes = error_classes()
    assert len(classes) > 25
    strays = sorted(f"{c.__module__}.{c.__name__}" for c in classes if not issubclass(c, EukheError))
    assert strays == [], f"error classes outside the root: {strays}"
    assert all(isinstance(c.code, Code) for c in classes if issubclass(c, EukheError))


def test_a_lease_or_owner_failure_is_not_called_the_models() -> None:
    from eukhe.client.client import OwnerError
    from eukhe.client.lease import LeaseStopped
    from eukhe.memory.tables import ChatStoreError
    from eukhe.settings import SettingsError

    assert OwnerError("gone").code.kind == "owner_error"
    assert LeaseStopped().code.kind == "lease_error"
    assert ChatStoreError().code.kind == "chat_error"
    assert SettingsError("bad").code.kind == "settings_error"
    assert isinstance(SettingsError("bad"), ValueError)  # callers that catch the old base still do
