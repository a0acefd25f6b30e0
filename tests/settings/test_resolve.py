"""The settings in effect: a default for every key, the files over it, and where each
value came from; bad files and values are clear errors, and no file is written."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from eukhe.settings import DEFAULT, KEYS, SettingsError, resolve, trust

SPEC_DEFAULTS = {
    "maxToolRounds": 250,
    "retry.maxRetries": 3,
    "retry.provider.streamIdleTimeoutMs": 120_000,
    "memory.settleTimeoutMs": 20_000,
    "subagentStallMs": 600_000,
    "auxiliaryModel": None,
    "allowedModels": [],
    "bash.defaultTimeoutMs": 120_000,
}
"""Every settings key the spec names, with the default it gives (H2.3, H4.2, H4.5,
H5.2, H6, H7.1)."""


def files(tmp_path: Path, user: str | None = None, project: str | None = None) -> tuple[Path, dict[str, str]]:
    home, proj = tmp_path / "home", tmp_path / "proj"
    (proj / ".eukhe").mkdir(parents=True)
    home.mkdir()
    if user is not None:
        (home / "settings.json").write_text(user)
    if project is not None:
        (proj / ".eukhe" / "settings.json").write_text(project)
    return proj, {"EUKHE_HOME": str(home)}


def test_every_key_the_spec_names_has_its_default(tmp_path: Path) -> None:
    proj, env = files(tmp_path)
    r = resolve(proj, env)
    for key, default in SPEC_DEFAULTS.items():
        assert r.get(key) == default, key
        assert r.sources[key] == DEFAULT
    assert {k.name for k in KEYS} >= set(SPEC_DEFAULTS)
    assert all(r.sources[k.name] == DEFAULT for k in KEYS)


def test_files_over_defaults_with_the_source_of_each_value_and_unknown_keys_kept(tmp_path: Path) -> None:
    proj, env = files(
        tmp_path,
        user='{"retry": {"maxRetries": 5, "enabled": false}, "maxToolRounds": 9, "mine": {"a": [1]}}',
        project='{"retry": {"maxRetries": 1}, "providers": {"vllm": {"baseUrl": "http://h"}}}',
    )
    user_file, project_file = str(tmp_path / "home" / "settings.json"), str(proj / ".eukhe" / "settings.json")
    trust.record(tmp_path / "home", proj, True)  # a trusted folder: its providers apply
    r = resolve(proj, env)
    assert r.values["retry"] == {
        "enabled": False,
        "maxRetries": 1,
        "baseDelayMs": 2000,
        "provider": {"maxRetryDelayMs": 60_000, "streamIdleTimeoutMs": 120_000},
    }
    assert r.values["mine"] == {"a": [1]}
    assert r.sources["retry.maxRetries"] == project_file
    assert r.sources["retry.enabled"] == user_file
    assert r.sources["maxToolRounds"] == user_file
    assert r.sources["retry.baseDelayMs"] == DEFAULT
    assert r.sources["providers.vllm.baseUrl"] == project_file
    assert r.sources["mine.a"] == user_file
    lines = r.lines()
    assert lines[:2] == [f"# {user_file}", f"# {project_file}"]
    shown = {x.split(" = ")[0]: x for x in lines[2:]}
    assert re.fullmatch(rf"retry\.maxRetries = 1 +\({re.escape(project_file)}\)", shown["retry.maxRetries"])
    assert re.fullmatch(rf"mine\.a = \[1\] +\({re.escape(user_file)}; unknown key, kept\)", shown["mine.a"])
    assert re.fullmatch(r"auxiliaryModel = null +\(default\)", shown["auxiliaryModel"])
    assert list(shown) == sorted(shown)
    assert json.loads(json.dumps(r.json()))["sources"]["retry.maxRetries"] == project_file


def test_a_malformed_file_names_the_file_line_and_column_and_is_never_rewritten(tmp_path: Path) -> None:
    text = '{\n  "retry": {"maxRetries": 2,}\n}\n'
    proj, env = files(tmp_path, project=text)
    path = proj / ".eukhe" / "settings.json"
    before = os.stat(path).st_mtime_ns
    with pytest.raises(
        SettingsError,
        match=rf"^settings file {re.escape(str(path))}, line 2 column 29: not valid JSON: Expecting",
    ):
        resolve(proj, env)
    assert path.read_text() == text and os.stat(path).st_mtime_ns == before


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ('{"retry": {"maxRetries": -1}}', "setting retry.maxRetries=-1 in {f}: expected a whole number >= 0"),
        ('{"retry": {"enabled": "yes"}}', "setting retry.enabled='yes' in {f}: expected true or false"),
        ('{"retry": 3}', "setting retry=3 in {f}: expected an object"),
        (
            '{"auxiliaryModel": ""}',
            "setting auxiliaryModel='' in {f}: expected a provider/model name or null",
        ),
        (
            '{"allowedModels": "openai/*"}',
            "setting allowedModels='openai/*' in {f}: expected a list of provider/model names",
        ),
        ('{"skills": [1]}', "setting skills=[1] in {f}: expected a list of paths"),
        ("[1, 2]", "settings file {f}: expected a JSON object, got a list"),
    ],
)
def test_a_value_of_the_wrong_kind_names_the_key_and_the_file(tmp_path: Path, text: str, error: str) -> None:
    proj, env = files(tmp_path, user=text)
    f = tmp_path / "home" / "settings.json"
    with pytest.raises(SettingsError) as raised:
        resolve(proj, env)
    assert str(raised.value) == error.format(f=f)
