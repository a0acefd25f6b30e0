"""Claude Code's plugins (issue 55, finding 7): `eukhe plugin add` a marketplace folder, a git
marketplace (cloned into the home: a real `git clone` of a `file://` URL and of a local path),
or one plugin; a plugin's hooks, agents, commands, skills and MCP servers load, with
`${CLAUDE_PLUGIN_ROOT}` its folder in the home; `list`, `disable`, `enable`, `remove`; Claude
Code's `enabledPlugins` read from trusted settings only; a run's configuration takes the
plugins' files once."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from eukhe.ai.faux import FauxServer, parse
from eukhe.hooks.config import load as load_hooks
from eukhe.mcp.config import servers
from eukhe.plugins import in_effect, read
from eukhe.settings.load import Taken
from eukhe.settings.trust import record
from eukhe.skills import load_agents, load_prompts, load_skills
from tests.plugins.market import LOG_HOOK, git_repo, marketplace, plugin, write
from tests.proc import eukhe

HOOKS = {
    "SessionStart": [
        {"hooks": [{"type": "command", "command": "python3 ${CLAUDE_PLUGIN_ROOT}/hooks/log.py start"}]}
    ]
}


@pytest.fixture
def place(tmp_path: Path) -> SimpleNamespace:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir(mode=0o700)
    project.mkdir()
    (home / "settings.json").write_text("{}")
    return SimpleNamespace(home=home, project=project, tmp=tmp_path, env={"EUKHE_HOME": str(home)})


def added(p: SimpleNamespace, *args: str) -> str:
    done = eukhe("plugin", "add", *args, cwd=p.project, home=p.home)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_marketplace_folders_plugin_loads_whole_with_its_root(place: SimpleNamespace) -> None:
    market = marketplace(place.tmp / "market", "tools", {"tidy": HOOKS}, **{"hooks/log.py": LOG_HOOK})
    said = added(place, str(market))
    assert "added tools (folder" in said and "tidy@tools" in said
    root = place.home / "plugins" / "cache" / "tools" / "tidy"
    assert (root / "hooks" / "log.py").is_file()  # a copy in the home: what runs is what was added
    (market / "plugins" / "tidy" / "agents" / "tidy-up.md").unlink()  # the source may change after
    agents = load_agents(place.home, place.project)
    assert [(a.name, a.source, a.tools) for a in agents.agents] == [
        ("tidy-up", "plugin:tidy", ("read", "grep"))
    ]
    assert (
        agents.agents[0].description
        == 'Use this agent after a change lands. Examples:\n<example>\nuser: "tidy it"\n</example>'
    )
    [command] = load_prompts(place.home, place.project).prompts
    assert (command.name, command.description, command.argument_hint) == ("tidy", "Tidy: one file", "[file]")
    assert command.content == f"Run {root}/bin/tidy on $1.\n"
    [skill] = load_skills(place.home, place.project).skills
    assert (skill.name, skill.source) == ("tidying", "plugin:tidy")
    hooks = load_hooks(place.project, place.env)
    [m] = hooks.hooks.matchers
    [h] = m.hooks
    assert (h.command, h.plugin_root, h.source) == (
        f"python3 {root}/hooks/log.py start",
        str(root),
        root / "hooks" / "hooks.json",
    )
    found, _ = servers(place.project, place.env)
    [s] = found
    assert (s.name, s.command, s.args) == ("plugin_tidy_notes", f"{root}/bin/notes", ("--root", str(root)))
    assert s.env["CLAUDE_PLUGIN_ROOT"] == str(root) and s.from_home
    listed = eukhe("plugin", "list", cwd=place.project, home=place.home)
    assert "tidy@tools 1.0.0: enabled; tidy does things" in listed.stdout


def test_a_plugins_hook_runs_with_its_root_through_the_runner(place: SimpleNamespace) -> None:
    market = marketplace(place.tmp / "market", "tools", {"tidy": HOOKS}, **{"hooks/log.py": LOG_HOOK})
    added(place, str(market))
    with FauxServer(parse([{"results": 0, "text": "hi"}])) as server:
        done = eukhe(
            "run",
            "--model",
            "vllm/m",
            "--base-url",
            server.url,
            "--json",
            "go",
            cwd=place.project,
            home=place.home,
        )
    assert done.returncode == 0, done.stderr
    [line] = (place.project / "plugin-hook.log").read_text().splitlines()
    root = str(place.home / "plugins" / "cache" / "tools" / "tidy")
    assert json.loads(line) == {"event": "SessionStart", "root": root, "arg": "start"}


@pytest.mark.parametrize("how", ["file-url", "local-path"])
def test_a_git_marketplace_is_cloned_into_the_home(place: SimpleNamespace, how: str) -> None:
    repo = git_repo(marketplace(place.tmp / "repo", "team", {"tidy": None, "other": None}))
    source = repo.as_uri() if how == "file-url" else str(repo / ".git")
    said = added(place, source, "tidy")  # only the one named
    assert "added team (git" in said
    assert (place.home / "plugins" / "marketplaces" / "team" / ".git").is_dir()
    assert [p.id for p in in_effect(place.home, place.project).plugins] == ["tidy@team"]
    assert "other@team" not in read(place.home).plugins


def test_one_plugin_is_added_to_local_and_a_bad_source_says_why(place: SimpleNamespace) -> None:
    plugin(place.tmp / "solo", "solo")
    said = added(place, str(place.tmp / "solo"))
    assert "solo@local" in said
    bad = eukhe("plugin", "add", str(place.tmp), cwd=place.project, home=place.home)
    assert bad.returncode == 1
    assert bad.stderr.startswith(
        f"eukhe plugin add: {place.tmp} holds neither .claude-plugin/marketplace.json nor"
    )
    gone = eukhe("plugin", "add", "file:///nowhere/at/all", cwd=place.project, home=place.home)
    assert gone.returncode == 1 and "cannot clone file:///nowhere/at/all:" in gone.stderr


def test_disable_enable_and_remove_switch_everything_a_plugin_brings(place: SimpleNamespace) -> None:
    added(place, str(marketplace(place.tmp / "market", "tools", {"tidy": HOOKS})))
    off = eukhe("plugin", "disable", "tidy", cwd=place.project, home=place.home)
    assert off.returncode == 0 and off.stdout.strip() == "disabled tidy@tools"
    assert load_agents(place.home, place.project).agents == ()
    assert load_hooks(place.project, place.env).hooks.matchers == ()
    assert servers(place.project, place.env)[0] == ()
    assert (
        eukhe("plugin", "enable", "tools", cwd=place.project, home=place.home).stdout.strip()
        == "enabled tidy@tools"
    )
    assert len(load_agents(place.home, place.project).agents) == 1
    assert eukhe("plugin", "remove", "tidy@tools", cwd=place.project, home=place.home).returncode == 0
    assert not (place.home / "plugins" / "cache" / "tools" / "tidy").exists()
    assert read(place.home).plugins == {} and read(place.home).marketplaces == {}
    missing = eukhe("plugin", "remove", "tidy", cwd=place.project, home=place.home)
    assert missing.returncode == 1 and "no plugin or marketplace 'tidy'" in missing.stderr


def test_enabled_plugins_count_only_from_trusted_settings(place: SimpleNamespace) -> None:
    added(place, str(marketplace(place.tmp / "market", "tools", {"tidy": HOOKS})))
    write(
        place.project / ".claude" / "settings.json",
        json.dumps({"enabledPlugins": {"tidy@tools": False, "ghost@far": True}}),
    )
    # not trusted: the project's enabledPlugins is not read
    assert [p.id for p in in_effect(place.home, place.project).plugins] == ["tidy@tools"]
    record(place.home, place.project, True)
    effect = in_effect(place.home, place.project)
    assert effect.plugins == ()
    assert any("enables the plugin 'ghost@far', which is not added" in n for n in effect.notices)
    # the home's settings are the person's own: read everywhere
    (place.home / "settings.json").write_text(json.dumps({"enabledPlugins": {"tidy@tools": False}}))
    assert in_effect(place.home, None).plugins == ()


def test_extra_known_marketplaces_of_the_settings_name_a_source_to_add(place: SimpleNamespace) -> None:
    market = marketplace(place.tmp / "market", "tools", {"tidy": None})
    known = {"extraKnownMarketplaces": {"tools": {"source": {"source": "directory", "path": str(market)}}}}
    (place.home / "settings.json").write_text(json.dumps(known))
    assert "tidy@tools" in added(place, "tools")


def test_a_run_takes_its_plugins_files_once(place: SimpleNamespace) -> None:
    added(place, str(marketplace(place.tmp / "market", "tools", {"tidy": HOOKS})))
    taken = Taken.take(place.project, place.env)
    hooks_file = place.home / "plugins" / "cache" / "tools" / "tidy" / "hooks" / "hooks.json"
    hooks_file.write_text(json.dumps({"hooks": {}}))  # written after the run took its configuration
    assert len(load_hooks(place.project, place.env, taken).hooks.matchers) == 1
    assert load_hooks(place.project, place.env).hooks.matchers == ()


def _listing(folder: Path, entries: list[dict[str, object]]) -> Path:
    write(
        folder / ".claude-plugin" / "marketplace.json",
        json.dumps({"name": "strangers", "owner": {"name": "them"}, "plugins": entries}),
    )
    return folder


def test_a_marketplace_entrys_name_cannot_lead_its_clone_out_of_the_staging_folder(
    place: SimpleNamespace,
) -> None:
    """The attack: a stranger's marketplace names an entry `x/../../../../<a folder of the
    user>` with a git source. The entry's clone went to `staging / f"plugin-{name}"` before its
    name was checked: into the user's folder, outside the home."""
    repo = git_repo(plugin(place.tmp / "payload", "payload"))
    target = place.tmp / "planted"
    ups = len(place.home.parts) + 3  # from staging/plugin-x (the home's plugins/.adding-*) to /, and past it
    name = "x/" + "/".join([".."] * ups) + str(target)
    market = _listing(place.tmp / "market", [{"name": name, "source": {"source": "url", "url": str(repo)}}])
    done = eukhe("plugin", "add", str(market), cwd=place.project, home=place.home)
    assert not target.exists(), (
        f"the clone landed outside the home: {sorted(p.name for p in target.iterdir())}"
    )
    assert done.returncode == 1, done.stderr
    assert "expected lowercase letters, digits" in done.stderr, done.stderr


def test_a_marketplace_entry_is_cloned_over_the_network_only(place: SimpleNamespace) -> None:
    """The attack: a stranger's marketplace points an entry at one of the user's own local
    repositories (a path, or file://): adding it would copy that repository into a plugin and
    run its hooks. A person may add a local marketplace they name; an entry of one is fetched
    over https, ssh or git only."""
    private = git_repo(plugin(place.tmp / "private", "private"))
    for url in (str(private), private.as_uri(), f"ext::sh -c touch% {place.tmp / 'ran'}"):
        market = _listing(place.tmp / "market", [{"name": "tidy", "source": {"source": "url", "url": url}}])
        done = eukhe("plugin", "add", str(market), cwd=place.project, home=place.home)
        assert done.returncode == 1, (url, done.stderr)
        assert "(a marketplace's plugin is cloned over https, ssh, git only)" in done.stderr, (
            url,
            done.stderr,
        )
        assert not (place.home / "plugins" / "cache" / "strangers").exists(), url
    assert not (place.tmp / "ran").exists()
