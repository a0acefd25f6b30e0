"""Permission settings (`eukhe.settings.permissions`): Claude Code's rule syntax read into the
permission model's rules with where each comes from, the project's share as its trust allows,
the ask's deadline, and a person's "always for this project" kept in the home."""

from __future__ import annotations

import asyncio
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from eukhe.rules.permission import Answer, Call, Kind, Mode, Policy, Rule, Source, granted, path_matches
from eukhe.settings import SettingsError, loaded, trust
from eukhe.settings.approvals import approvals, approve
from eukhe.settings.permissions import in_force, permissions_in_force
from eukhe.settings.rule_syntax import EXAMPLE, path_globs
from eukhe.settings.trust import RIGHTS, SIDES, Side
from eukhe.tools import BUILTIN, Context, Limits, call


@dataclass(frozen=True)
class World:
    home: Path  # the eukhe home ($EUKHE_HOME)
    user: Path  # the user's home folder ($HOME)
    repo: Path  # the project
    env: dict[str, str]

    def settings(self, data: object) -> Path:
        f = self.home / "settings.json"
        f.write_text(json.dumps(data))
        return f

    def project(self, data: object) -> Path:
        f = self.repo / ".eukhe" / "settings.json"
        f.write_text(json.dumps(data))
        return f


@pytest.fixture
def world(tmp_path: Path) -> World:
    home, user, repo = tmp_path / "eukhe-home", tmp_path / "user", tmp_path / "repo"
    for d in (home, user, repo / ".eukhe"):
        d.mkdir(parents=True)
    real = Path(os.path.realpath(tmp_path))  # the anchors are resolved
    return World(
        real / home.name, real / user.name, real / repo.name, {"EUKHE_HOME": str(home), "HOME": str(user)}
    )


def read_as(w: World, rule: str, where: str = "project") -> list[tuple[str, str | None]]:
    """The model's rules one allow rule reads as, from the project's file or the home's."""
    trust.record(w.home, w.repo, True)
    w.project({"permissions": {"allow": [rule]}} if where == "project" else {})
    w.settings({"permissions": {"allow": [rule]}} if where == "home" else {})
    got = in_force(w.repo, w.env)
    assert [x.text for x in got.written] == [rule]
    assert {r.source for r in got.rules} == {Source.PROJECT if where == "project" else Source.HOME}
    return [(r.tool, r.pattern) for r in got.rules]


def test_every_rule_form_reads_as_the_models_rules(world: World) -> None:
    w, repo, user = world, str(world.repo), str(world.user)
    assert read_as(w, "Bash(npm test)") == [("Bash", "npm test")]
    assert read_as(w, "Bash(npm run *)") == [("Bash", "npm run *")]
    assert read_as(w, "Bash(git diff:*)") == [("Bash", "git diff:*")]
    assert read_as(w, "Bash(echo \\(x\\))") == [("Bash", "echo (x)")]
    for bare in ("Bash", "Bash(*)", "Bash()"):  # as Claude Code reads them: the whole tool
        assert read_as(w, bare) == [("Bash", None)]
    assert read_as(w, "WebFetch") == [("WebFetch", None)]
    assert read_as(w, "mcp__server__tool") == [("mcp__server__tool", None)]
    assert read_as(w, "Read") == [("Read", None)]
    assert read_as(w, "Write") == [("Edit", None)]  # Write is Edit
    assert read_as(w, "Write(//tmp/out.txt)") == [("Edit", "/tmp/out.txt"), ("Edit", "/tmp/out.txt/**")]
    assert read_as(w, "Read(//etc/**)") == [("Read", "/etc"), ("Read", "/etc/**")]
    assert read_as(w, "Read(~/.ssh/*)") == [("Read", f"{user}/.ssh/*"), ("Read", f"{user}/.ssh/*/**")]
    assert read_as(w, "Edit(/src/**/*.ts)") == [
        ("Edit", f"{repo}/src/**/*.ts"),
        ("Edit", f"{repo}/src/**/*.ts/**"),
        ("Edit", f"{repo}/src/*.ts"),
        ("Edit", f"{repo}/src/*.ts/**"),
    ]
    assert read_as(w, "Read(*.env)") == [
        ("Read", f"{repo}/*.env"),
        ("Read", f"{repo}/*.env/**"),
        ("Read", f"{repo}/**/*.env"),
        ("Read", f"{repo}/**/*.env/**"),
    ]
    assert read_as(w, "Read(./docs/*.md)") == [
        ("Read", f"{repo}/docs/*.md"),
        ("Read", f"{repo}/docs/*.md/**"),
    ]


def test_a_slash_path_is_under_the_folder_of_its_settings_file(world: World) -> None:
    """Claude Code roots `/path` where its settings file's project is: a project's under the
    project, the user's under the folder their settings file is in (`~/.claude` there, the
    eukhe home here); `//` is absolute and `~/` the user's home folder, from either."""
    w = world
    assert read_as(w, "Edit(/src/a.py)") == [
        ("Edit", f"{w.repo}/src/a.py"),
        ("Edit", f"{w.repo}/src/a.py/**"),
    ]
    got = read_as(w, "Edit(/src/a.py)", where="home")
    assert got == [("Edit", f"{w.home}/src/a.py"), ("Edit", f"{w.home}/src/a.py/**")]
    assert read_as(w, "Read(//etc/hosts)", where="home") == [
        ("Read", "/etc/hosts"),
        ("Read", "/etc/hosts/**"),
    ]
    assert read_as(w, "Read(~/notes)", where="home") == [
        ("Read", f"{w.user}/notes"),
        ("Read", f"{w.user}/notes/**"),
    ]
    assert read_as(w, "Read(notes/*)", where="home") == [
        ("Read", f"{w.repo}/notes/*"),
        ("Read", f"{w.repo}/notes/*/**"),
    ]


@pytest.mark.parametrize(
    ("spec", "path", "hit"),
    [
        ("//etc/**", "/etc", True),
        ("//etc/**", "/etc/ssh/sshd_config", True),
        ("//etc/**", "/etcetera", False),
        ("src/**", "/cwd/src/a/b.py", True),
        ("src/**", "/cwd/lib/src/a.py", False),  # a slash before the end anchors it at its folder
        ("*.env", "/cwd/.env", True),
        ("*.env", "/cwd/deploy/prod.env", True),  # no slash: any depth below its folder
        ("*.env", "/elsewhere/prod.env", False),
        ("docs", "/cwd/a/docs/readme.md", True),  # a folder it matches: what is in it too
        ("src/*.py", "/cwd/src/a.py", True),
        ("src/*.py", "/cwd/src/sub/a.py", False),  # * stays within a folder
        ("/src/**/*.ts", "/proj/src/a.ts", True),  # ** is none or some folders
        ("/src/**/*.ts", "/proj/src/x/y/a.ts", True),
        ("/src/**/*.ts", "/cwd/src/a.ts", False),
        ("a?c", "/cwd/abc", True),
        ("a?c", "/cwd/a/c", False),
        ("~/.ssh/*", "/home/u/.ssh/id_ed25519", True),
        ("~/.ssh/*", "/home/u/.sshx/id", False),
    ],
)
def test_path_rules_match_as_claude_codes_gitignore_reading_does(spec: str, path: str, hit: bool) -> None:
    globs = path_globs(spec, root="/proj", cwd="/cwd", user_home="/home/u")
    assert any(path_matches(g, path) for g in globs) is hit, globs


@pytest.mark.parametrize(
    ("rule", "why"),
    [
        ("Bash(rm -rf", '"(" after \'Bash\' is not closed by a ")" at the end'),
        ("Bash)", 'it has a ")" and no "("'),
        ("", "it is empty"),
        ("bash(ls)", "rules name tools as Claude Code does: Bash, not bash"),
        ("write", "rules name tools as Claude Code does: Write, not write"),
        ("Web Fetch", '\'Web Fetch\' is not a tool name (a letter, then letters, digits, "_" or "-")'),
        (
            "IPython(print)",
            "only Bash, Read, Edit, Write and WebFetch rules take a (pattern); "
            "write IPython alone for every call of it",
        ),
        (
            "WebFetch(https://example.com/a)",
            "a WebFetch rule names a host as domain:HOST, e.g. WebFetch(domain:example.com)",
        ),
        (
            "WebFetch(domain:example.com:8080)",
            "domain:example.com:8080 is not a host (no scheme, port, path or wildcard but a leading *.)",
        ),
        ("WebFetch(domain:)", "domain: names no host; write WebFetch alone for every host"),
        ("Read(../secrets)", '".." is not read in a path rule: name the folder from //, ~/ or /'),
        (
            "Read(!keep.txt)",
            'a path rule cannot start with "!": gitignore\'s negation is not read; write an allow rule',
        ),
        ("Edit(src\\*.py)", 'a path rule cannot hold "\\"'),
        ("Read(*.[ch])", "character classes ([...]) are not read in a path rule; use * or ?"),
        ("Read(~root/.ssh)", "'~root' is not read: write ~/ for your home folder"),
        ("Read(**/a/**/b/**/c/**)", "a path rule holds ** 3 times at most"),
    ],
)
def test_a_malformed_rule_is_refused_with_the_file_the_key_the_rule_and_what_is_wrong(
    world: World, rule: str, why: str
) -> None:
    f = world.project({"permissions": {"deny": ["Bash(ok)", rule]}})
    want = f"setting permissions.deny[1]={rule!r} in {f}: expected a rule {EXAMPLE}; {why}"
    with pytest.raises(SettingsError, match=f"^{re.escape(want)}$"):
        loaded(world.repo, world.env)
    with pytest.raises(SettingsError, match=f"^{re.escape(want)}$"):
        in_force(world.repo, world.env)


def test_a_rule_list_of_the_wrong_kind_is_refused(world: World) -> None:
    f = world.settings({"permissions": {"allow": "Bash"}})
    want = f"setting permissions.allow='Bash' in {f}: expected a list of rules such as"
    with pytest.raises(SettingsError, match=f"^{re.escape(want)}"):
        in_force(world.repo, world.env)


def test_a_projects_allow_rules_wait_for_trust_its_deny_and_ask_rules_do_not(world: World) -> None:
    w = world
    w.settings({"permissions": {"deny": ["Bash(rm *)"], "allow": ["Bash(ls)"]}})
    f = w.project({"permissions": {"deny": ["Read(.env)"], "ask": ["Bash(git push:*)"], "allow": ["Bash"]}})
    got = in_force(w.repo, w.env)
    assert [(x.kind, x.text, x.source) for x in got.written] == [
        (Kind.DENY, "Bash(rm *)", Source.HOME),
        (Kind.DENY, "Read(.env)", Source.PROJECT),  # added to the user's, not in their place
        (Kind.ASK, "Bash(git push:*)", Source.PROJECT),
        (Kind.ALLOW, "Bash(ls)", Source.HOME),
    ]
    assert len(got.held) == 1
    assert got.held[0].startswith(f"{f}: permissions.allow is ignored: this folder is not trusted")
    assert "lets the model's tool calls it names run without asking you" in got.held[0]
    assert f"eukhe trust {w.repo}" in got.held[0]
    assert got.written[1].where == str(f) and got.written[0].where == str(w.home / "settings.json")

    trust.record(w.home, w.repo, True)
    got = in_force(w.repo, w.env)
    assert got.held == ()
    assert [x.text for x in got.written if x.kind is Kind.ALLOW] == ["Bash(ls)", "Bash"]
    assert Rule(Kind.ALLOW, "Bash", None, Source.PROJECT) in got.rules


def test_a_project_narrows_the_approval_policy_and_the_sandbox_mode_but_widens_them_only_when_trusted(
    world: World,
) -> None:
    w = world
    mine = w.settings({"permissions": {"approval": "untrusted"}})
    f = w.project({"permissions": {"approval": "never"}, "sandbox": {"mode": "read-only"}})
    got = in_force(w.repo, w.env)
    assert (got.policy, got.policy_from, got.mode, got.mode_from) == (
        Policy.NEVER, str(f), Mode.READ_ONLY, str(f)
    )  # fmt: skip
    assert got.held == ()

    w.project({"permissions": {"approval": "on-request"}, "sandbox": {"mode": "danger-full-access"}})
    said = loaded(w.repo, w.env)
    got = in_force(w.repo, w.env)
    assert (got.policy, got.policy_from) == (Policy.UNTRUSTED, str(mine))
    assert (got.mode, got.mode_from) == (Mode.WORKSPACE_WRITE, "default")
    assert said.values["permissions"] == {"approval": "untrusted"} and "sandbox" not in said.values
    assert {h.key for h in said.held} == {"permissions.approval", "sandbox.mode"}
    assert any('("on-request" is wider than your "untrusted")' in n for n in got.held)
    assert any('("danger-full-access" is wider than your "workspace-write")' in n for n in got.held)
    assert all(n.startswith(f"{f}: ") and "this folder is not trusted" in n for n in got.held)

    trust.record(w.home, w.repo, True)  # trusted: the project's own choice, wider too
    got = in_force(w.repo, w.env)
    assert (got.policy, got.mode) == (Policy.ON_REQUEST, Mode.FULL)


def test_plan_mode_is_the_settings_a_project_turns_it_on_anywhere_and_off_only_when_trusted(
    world: World,
) -> None:
    w = world
    mine = w.settings({"permissions": {"defaultMode": "plan"}})
    got = in_force(w.repo, w.env)
    assert (got.plan, got.plan_from, got.cfg(True, True).plan) == (True, str(mine), True)
    assert in_force(w.repo, w.env, permission_mode="default").cfg(True, True).plan is False  # the flag's
    f = w.project({"permissions": {"defaultMode": "default"}})  # wider than the user's plan: held back
    got = in_force(w.repo, w.env)
    assert got.plan and any('("default" is wider than your "plan")' in n for n in got.held)
    w.settings({})
    w.project({"permissions": {"defaultMode": "plan"}})  # narrower: taken in an untrusted folder
    assert (in_force(w.repo, w.env).plan, in_force(w.repo, w.env).plan_from) == (True, str(f))
    want = '--permission-mode \'bypassPermissions\' on the command line: expected one of "plan", "default"'
    with pytest.raises(SettingsError, match=f"^{re.escape(want)}$"):
        in_force(w.repo, w.env, permission_mode="bypassPermissions")


def test_the_users_flags_win_and_may_widen(world: World) -> None:
    w = world
    w.project({"permissions": {"approval": "never"}, "sandbox": {"mode": "read-only"}})
    got = in_force(w.repo, w.env, sandbox="danger-full-access", approval="on-request")
    assert (got.mode, got.mode_from, got.policy, got.policy_from) == (
        Mode.FULL, "command line", Policy.ON_REQUEST, "command line"
    )  # fmt: skip
    cfg = got.cfg(person=True, sandbox=True)
    assert (cfg.mode, cfg.policy, cfg.person, cfg.rules) == (Mode.FULL, Policy.ON_REQUEST, True, ())
    want = "--sandbox 'wide-open' on the command line: expected one of"
    with pytest.raises(SettingsError, match=f"^{re.escape(want)}"):
        in_force(w.repo, w.env, sandbox="wide-open")
    flagged = in_force(w.repo, w.env, flags={Kind.DENY: ["Edit(/dist/**)"]})
    assert flagged.rules == (
        Rule(Kind.DENY, "Edit", f"{w.repo}/dist", Source.FLAG),
        Rule(Kind.DENY, "Edit", f"{w.repo}/dist/**", Source.FLAG),
    )


def test_every_narrow_key_orders_its_values() -> None:
    narrow = {k for k, (s, _) in SIDES.items() if s is Side.NARROW}
    assert narrow == set(RIGHTS) == {"permissions.approval", "sandbox.mode", "permissions.defaultMode"}
    assert RIGHTS["permissions.approval"] == ("never", "untrusted", "on-request")
    assert RIGHTS["permissions.defaultMode"] == ("plan", "default")  # plan mode is the narrower
    assert RIGHTS["sandbox.mode"] == ("read-only", "workspace-write", "danger-full-access")
    assert SIDES["permissions.deny"][0] is Side.SAFE and SIDES["permissions.ask"][0] is Side.SAFE
    assert SIDES["permissions.allow"][0] is Side.TRUST


def test_an_ask_timeout_of_0_is_refused(world: World) -> None:
    f = world.settings({"permissions": {"askTimeoutMs": 0}})
    want = (
        f"setting permissions.askTimeoutMs=0 in {f}: "
        "expected a whole number of milliseconds >= 1 (every wait has a deadline)"
    )
    with pytest.raises(SettingsError, match=f"^{re.escape(want)}$"):
        in_force(world.repo, world.env)


def test_an_ask_timeout_at_or_past_the_subagent_stall_is_refused_naming_both(world: World) -> None:
    w = world
    f = w.settings({"permissions": {"askTimeoutMs": 600_000}})
    want = (
        f"setting permissions.askTimeoutMs=600000 in {f}: expected less than subagentStallMs=600000 "
        "(default), so a subagent's ask ends before the subagent is taken as stalled; "
        "lower permissions.askTimeoutMs or raise subagentStallMs"
    )
    with pytest.raises(SettingsError, match=f"^{re.escape(want)}$"):
        in_force(w.repo, w.env)
    f = w.settings({"permissions": {"askTimeoutMs": 500_000}})
    assert (in_force(w.repo, w.env).ask_timeout_ms, in_force(w.repo, w.env).timeout_from) == (500_000, str(f))
    g = w.project({"subagentStallMs": 400_000})  # a project's stall below the user's deadline
    with pytest.raises(
        SettingsError,
        match=f"in {re.escape(str(f))}: expected less than subagentStallMs=400000 \\({re.escape(str(g))}\\)",
    ):
        in_force(w.repo, w.env)
    w.settings({})
    got = in_force(w.repo, w.env)
    assert (got.ask_timeout_ms, got.timeout_from) == (300_000, "default")
    w.project({})
    w.settings({"subagentStallMs": 4000})  # unset, the deadline gives way to a short stall: half of it
    got = in_force(w.repo, w.env)
    assert (got.ask_timeout_ms, got.timeout_from) == (2000, "default")


def test_approvals_are_kept_per_project_private_and_read_back_as_the_users_rules(
    world: World, tmp_path: Path
) -> None:
    w = world
    asked = Call("bash", commands=(("npm", "test"),))
    wrote = Call("write", paths=(f"{w.repo}/out (1).txt",), writes=True)
    kept = approve(w.home, w.repo, granted(asked, Answer.PROJECT) + granted(wrote, Answer.PROJECT))
    assert kept == (
        Rule(Kind.ALLOW, "Bash", "npm test", Source.APPROVED),
        Rule(Kind.ALLOW, "Edit", f"{w.repo}/out (1).txt", Source.APPROVED),
    )
    f = w.home / "approvals.json"
    assert f.stat().st_mode & 0o777 == 0o600
    assert approve(w.home, w.repo, granted(asked, Answer.PROJECT)) == kept  # kept once
    other = tmp_path / "other"
    other.mkdir()
    assert approvals(w.home, other) == ()
    (tmp_path / "link").symlink_to(w.repo)
    assert approvals(w.home, tmp_path / "link") == kept  # by the project's real path
    got = in_force(w.repo, w.env)
    assert [(x.kind, x.text, x.source, x.where) for x in got.written] == [
        (Kind.ALLOW, "Bash(npm test)", Source.APPROVED, str(f)),
        (Kind.ALLOW, f"Edit(/{w.repo}/out \\(1\\).txt)", Source.APPROVED, str(f)),
    ]
    assert got.rules == kept  # the path stays the path granted: never re-read as a glob
    with pytest.raises(SettingsError, match="only allow rules are kept"):
        approve(w.home, w.repo, [Rule(Kind.DENY, "Bash", None, Source.APPROVED)])


def test_unreadable_approvals_are_an_error_naming_the_file(world: World) -> None:
    f = world.home / "approvals.json"
    f.write_text('{"projects": {"/x": [{"tool": 3}]}}')
    with pytest.raises(
        SettingsError, match=f"^approvals {re.escape(str(f))}: not what eukhe writes \\(TypeError"
    ):
        in_force(world.repo, world.env)


def test_the_write_tool_cannot_touch_the_approvals(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EUKHE_HOME", str(world.home))
    approve(world.home, world.repo, [Rule(Kind.ALLOW, "Bash", "ls", Source.APPROVED)])
    f = world.home / "approvals.json"
    before = f.read_text()
    ctx = Context(world.repo, limits=Limits())
    args = {"path": str(f), "content": '{"projects": {"/": [{"tool": "Bash", "pattern": null}]}}'}
    done = asyncio.run(call(BUILTIN, "write", args, ctx))
    assert done.is_error and "it touches eukhe's own files: its home" in done.content, done.content
    assert f.read_text() == before


def test_permissions_in_force_shows_each_rule_with_its_source_the_mode_policy_and_deadline(
    world: World,
) -> None:
    w = world
    mine = w.settings({"permissions": {"deny": ["Bash(rm *)"], "askTimeoutMs": 120_000}})
    w.project({"permissions": {"ask": ["Bash(git push:*)"], "allow": ["Bash"]}})
    approve(w.home, w.repo, [Rule(Kind.ALLOW, "Bash", "npm test", Source.APPROVED)])
    lines = permissions_in_force(w.repo, w.env, approval="untrusted")
    f = w.repo / ".eukhe" / "settings.json"
    assert lines[:7] == [
        "sandbox mode: workspace-write (default)",
        "approval policy: untrusted (command line)",
        f"ask timeout: 120000 ms ({mine}); an ask nobody answers is then denied",
        f"deny   Bash(rm *)        home settings: {mine}",
        f"ask    Bash(git push:*)  project settings: {f}",
        f"allow  Bash(npm test)    project approvals: {w.home / 'approvals.json'}",
        f"held back: {f}: permissions.allow is ignored: this folder is not trusted, and permissions.allow "
        "lets the model's tool calls it names run without asking you. "
        f"To apply it, run `eukhe trust {w.repo}` (see `eukhe trust --help`)",
    ]
    assert len(lines) == 7
    w.settings({})
    w.project({})
    (w.home / "approvals.json").unlink()
    assert permissions_in_force(w.repo, w.env)[3:] == [
        "no rules: each call is decided by the mode and the policy"
    ]
