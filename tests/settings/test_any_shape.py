"""No settings file, whatever its shape, ends a command in a traceback: every value
a run and `eukhe settings` read is checked by the file's check, or refused where it is
read, with SettingsError (or ModelError for a model that cannot be used)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eukhe.admission import limits_from
from eukhe.ai.models import ModelError, resolve
from eukhe.settings import KEYS, SettingsError, child_settings, loaded, memory_settings, run_settings, trust
from eukhe.settings import resolve as resolve_settings
from eukhe.settings.permissions import in_force
from eukhe.skills import get_resource_snapshot

FIELDS = {"vllm", "vllm/m", "api", "baseUrl", "apiKeyEnv", "concurrency", "queueLimit", "contextWindow", "x"}
NAMES = sorted({part for k in KEYS for part in k.name.split(".")} | FIELDS | {"maxOutputTokens"})

leaf = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 10**12), st.floats(allow_nan=True), st.text(max_size=8),
)  # fmt: skip
shapes = st.recursive(
    leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(NAMES), inner, max_size=4)
    ),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(st.dictionaries(st.sampled_from(NAMES), shapes, max_size=6), st.booleans())
def test_any_shape_is_a_clear_error_or_settings(
    tmp_path_factory: Any, data: dict[str, Any], trusted: bool
) -> None:
    root: Path = tmp_path_factory.mktemp("shape")
    home, repo = root / "home", root / "repo"
    (repo / ".eukhe").mkdir(parents=True)
    home.mkdir()
    (repo / ".eukhe" / "settings.json").write_text(json.dumps(data))
    if trusted:
        trust.record(home, repo, True)
    env = {"EUKHE_HOME": str(home)}
    try:
        values = loaded(repo, env).values
        resolve_settings(repo, env).lines()
        run_settings(values, "vllm/m")
        memory_settings(values)
        child_settings(values)
        in_force(repo, env)
        limits_from(values, "vllm")
        get_resource_snapshot(repo, env, settings=values)
        resolve(str(values.get("model") or "vllm/m"), values, env={})
    except (SettingsError, ModelError):
        pass
