"""settings.json: merged, validated, and a broken file named with its place."""

from __future__ import annotations

from pathlib import Path

import pytest

from eukhe.settings import SettingsError, load, run_settings, trust


def test_project_settings_deep_merge_over_the_users(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "proj"
    (home).mkdir()
    (project / ".eukhe").mkdir(parents=True)
    (home / "settings.json").write_text('{"retry": {"maxRetries": 5, "enabled": true}, "maxToolRounds": 9}')
    (project / ".eukhe" / "settings.json").write_text('{"retry": {"maxRetries": 1}, "unknown": {"kept": 1}}')
    trust.record(home, project, True)  # a trusted folder: its file applies in full, unknown keys too
    merged = load(project, env={"EUKHE_HOME": str(home)})
    assert merged == {"retry": {"maxRetries": 1, "enabled": True}, "maxToolRounds": 9, "unknown": {"kept": 1}}
    s = run_settings(merged)
    assert (s.max_retries, s.retry_enabled, s.max_tool_rounds) == (1, True, 9)


def test_a_malformed_file_names_the_file_and_the_place_and_is_kept(tmp_path: Path) -> None:
    (tmp_path / "settings.json").write_text('{\n  "maxToolRounds": 3,\n}\n')
    with pytest.raises(
        SettingsError, match=r"settings\.json, line 3 column 1: not valid JSON: Expecting property"
    ):
        load(None, env={"EUKHE_HOME": str(tmp_path)})
    assert (tmp_path / "settings.json").read_text() == '{\n  "maxToolRounds": 3,\n}\n'


def test_values_of_the_wrong_kind_are_clear_errors() -> None:
    with pytest.raises(SettingsError, match=r"^setting retry\.maxRetries='3': expected a whole number >= 0$"):
        run_settings({"retry": {"maxRetries": "3"}})
    with pytest.raises(SettingsError, match=r"^setting retry\.enabled=1: expected bool$"):
        run_settings({"retry": {"enabled": 1}})


def test_no_file_is_the_defaults(tmp_path: Path) -> None:
    assert run_settings(load(tmp_path, env={"EUKHE_HOME": str(tmp_path / "none")})).max_tool_rounds == 0


def test_a_models_output_limit_is_read_by_its_whole_name() -> None:
    settings = {"models": {"openai/gpt-4.1": {"contextWindow": 1_000_000, "maxOutputTokens": 64}}}
    assert run_settings(settings, "openai/gpt-4.1").max_output_tokens == 64
    assert run_settings(settings, "openai/gpt-4o").max_output_tokens == 0  # another model: its own limit
    assert run_settings(settings).max_output_tokens == 0
    assert run_settings({"models": {"a/b": {"contextWindow": 9}}}, "a/b").max_output_tokens == 0


@pytest.mark.parametrize("bad", [0, -5, "64", True, 1.5, None])
def test_a_malformed_output_limit_is_refused_with_its_place(bad: object) -> None:
    with pytest.raises(
        SettingsError,
        match=rf"^setting models\.a/b\.maxOutputTokens={bad!r}: expected a whole number >= 1 \(",
    ):
        run_settings({"models": {"a/b": {"maxOutputTokens": bad}}}, "a/b")
