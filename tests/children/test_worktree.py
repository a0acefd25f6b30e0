"""Subagents in git worktrees of their own (`isolation: "worktree"`), with real git, real
bubblewrap and the real `eukhe` process against the faux model: three children change the same
file and commit, each on its own branch; the parent's HEAD, index, stash and files are as they
were; each report names its branch once; a child's write to its parent's checkout fails, with
its file tools and with bash alike. Then what a worktree leaves as it ends, the merge a parent
asks for (through the gate), and spawn's clear errors."""

from __future__ import annotations

import asyncio
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from eukhe.ai.faux import FauxServer, parse
from eukhe.ai.reply import ToolCall
from eukhe.children import texts
from eukhe.children.worktree import (
    Worktree,
    WorktreeError,
    end_worktree,
    make_worktree,
    merge_branch,
    session_branches,
)
from eukhe.rules import child as child_rule
from eukhe.rules import permission as rule
from eukhe.rules.access import Verdict, Why
from eukhe.rules.child import Kept, Owe, Part
from eukhe.rules.confine import Act
from eukhe.rules.permission import PermissionState
from eukhe.run.permit import Gate
from eukhe.sandbox.bwrap import why_not
from eukhe.sandbox.session import for_run
from eukhe.settings.permissions import in_force
from eukhe.tools import Context
from eukhe.tools.bash import BASH
from eukhe.tools.write import WRITE
from tests.proc import eukhe, messages, sessions

WHY_NOT = why_not()
needs_bwrap = pytest.mark.skipif(WHY_NOT is not None, reason=f"{WHY_NOT}: apt-get install bubblewrap")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def repository(root: Path) -> Path:
    """A repository with one commit, an identity of its own (the sandbox hides the user's home and
    its ~/.gitconfig), a stash, a staged change and an unstaged one."""
    repo = root / "project"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "t")
    (repo / "shared.txt").write_text("base\n")
    (repo / "other.txt").write_text("other\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "first")
    (repo / "other.txt").write_text("stashed\n")
    git(repo, "stash", "-q")
    (repo / "other.txt").write_text("staged\n")
    git(repo, "add", "other.txt")
    (repo / "shared.txt").write_text("the parent's own edit\n")
    return repo


def state(repo: Path) -> dict[str, str]:
    """The parent's checkout as a person sees it: HEAD, index, stash, files, branch."""
    return {
        "head": git(repo, "rev-parse", "HEAD"),
        "branch": git(repo, "symbolic-ref", "HEAD"),
        "index": git(repo, "ls-files", "--stage"),
        "staged": git(repo, "diff", "--cached"),
        "stash": git(repo, "stash", "list", "--format=%H %gs"),
        "shared": (repo / "shared.txt").read_text(),
        "other": (repo / "other.txt").read_text(),
        "status": git(repo, "status", "--porcelain"),
    }


@needs_bwrap
def test_three_subagents_in_worktrees_leave_the_parents_checkout_as_it_was(tmp_path: Path) -> None:
    repo = repository(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    before = state(repo)
    children = "ABC"

    def child(x: str) -> list[dict[str, Any]]:
        work = {"calls": [
            {"name": "bash", "arguments": {"command": f"echo {x} >> shared.txt && git commit -qam 'c {x}'"}},
            {"name": "write", "arguments": {"path": str(repo / "shared.txt"), "content": f"{x} was here\n"}},
            {"name": "bash", "arguments": {"command": f"echo {x} > {repo}/shared.txt"}},
        ]}  # fmt: skip
        return [
            {"when": f"task of child {x}", "results": 0, **work},
            {"when": f"task of child {x}", "results": 3, "text": f"child {x} done"},
        ]

    spawns = {"calls": [
        {"name": "spawn", "arguments": {"task": f"task of child {x}", "isolation": "worktree"}, "id": f"s{x}"}
        for x in children
    ]}  # fmt: skip
    script = [
        *(r for x in children for r in child(x)),
        {"when": "[child-", "results": 0, "text": "read the reports"},
        {"when": "go", "results": 0, **spawns},
        {"when": "go", "results": 3, "text": "spawned three"},
    ]
    with FauxServer(parse(script)) as server:
        done = eukhe("run", "--model", "vllm/m", "--base-url", server.url, "go", cwd=repo, home=home)
    assert done.returncode == 0, done.stderr
    assert state(repo) == before

    [row] = sessions(repo, home)
    session = row["id"]
    branches = sorted(git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/eukhe/").split())
    assert branches == [f"eukhe/{session}/0001.c{n}" for n in (1, 2, 3)]
    first = git(repo, "rev-parse", "HEAD").strip()
    subjects = set()
    for b in branches:
        [subject] = git(repo, "log", "--format=%s", f"{first}..{b}").splitlines()  # one commit of its own
        subjects.add(subject)
        assert git(repo, "show", f"{b}:shared.txt") == f"base\n{subject[-1]}\n"
    assert subjects == {f"c {x}" for x in children}
    assert not list((home / "worktrees").glob("*/*")), "a worktree whose work is on its branch is removed"

    reports = [
        str(m["content"]) for m in messages(session, repo, home) if str(m["content"]).startswith("[child-")
    ]
    assert len(reports) == 3, reports
    for b in branches:
        [report] = [r for r in reports if b in r]
        assert report.count(b) == 1, report  # its branch named once
        assert "1 commit (" in report and "1 file changed, +1 -0: shared.txt (+1 -0)" in report, report

    for x in children:  # each write to the parent's checkout failed, and said why (as its model saw)
        results = [
            str(m.get("content"))
            for seen in server.seen
            if isinstance(seen.body, dict) and f"task of child {x}" in str(seen.body.get("messages"))
            for m in seen.body["messages"]
            if m.get("role") == "tool"
        ]
        assert any("read-only to a subagent working in a git worktree" in r for r in results), results
        assert any("Read-only file system" in r for r in results), results

    # a rewind past the spawn deletes no branch, and names them
    said = eukhe("rewind", session, "--to", "1", "--conversation", cwd=repo, home=home)
    assert said.returncode == 0, said.stderr
    assert f"kept (a rewind deletes none): {', '.join(branches)}" in said.stdout, said.stdout
    assert (
        sorted(git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/eukhe/").split())
        == branches
    )


# ---------------------------------------------------------------- the worktree's end, the merge


def made(repo: Path, home: Path, cid: str) -> Worktree:
    return asyncio.run(make_worktree(repo, home, cid))


def test_a_worktree_with_nothing_to_keep_is_removed_with_its_branch(tmp_path: Path) -> None:
    repo, home = repository(tmp_path), tmp_path / "home"
    wt = made(repo, home, "S/0001.c1")
    got = asyncio.run(end_worktree(wt, "c1.1"))
    assert got.kept is Kept.NOTHING and got.text() == ""
    assert not Path(wt.path).exists()
    assert git(repo, "branch", "--list", "eukhe/*") == ""


def test_uncommitted_work_is_committed_on_its_branch_and_said(tmp_path: Path) -> None:
    repo, home = repository(tmp_path), tmp_path / "home"
    wt = made(repo, home, "S/0001.c2")
    (Path(wt.path) / "new.txt").write_text("one\ntwo\n")
    got = asyncio.run(end_worktree(wt, "c1.2"))
    assert got.kept is Kept.COMMITTED
    assert git(repo, "log", "-1", "--format=%s", wt.branch).strip() == "eukhe: uncommitted work of c1.2"
    assert git(repo, "show", f"{wt.branch}:new.txt") == "one\ntwo\n"
    text = got.text()
    assert text.count(wt.branch) == 1 and "uncommitted work was committed" in text
    assert "new.txt (+2 -0)" in text
    assert not Path(wt.path).exists()  # everything is on its branch
    again = asyncio.run(end_worktree(wt, "c1.2"))  # ended already: the branch told as it is
    assert again.kept is Kept.BRANCH and again.commits == got.commits


def test_merge_takes_a_branch_and_a_conflict_is_aborted_and_named(tmp_path: Path) -> None:
    repo, home = repository(tmp_path), tmp_path / "home"
    git(repo, "stash", "-q")  # a clean checkout to merge into
    ok = made(repo, home, "S/0001.c1")
    (Path(ok.path) / "added.txt").write_text("new\n")
    asyncio.run(end_worktree(ok, "c1.1"))
    said = asyncio.run(merge_branch(repo, ok.branch))
    assert said.startswith(f"merged {ok.branch} into {repo}") and (repo / "added.txt").read_text() == "new\n"

    bad = made(repo, home, "S/0001.c2")
    (Path(bad.path) / "shared.txt").write_text("theirs\n")
    asyncio.run(end_worktree(bad, "c1.2"))
    (repo / "shared.txt").write_text("mine\n")
    git(repo, "commit", "-qam", "mine")
    head = git(repo, "rev-parse", "HEAD")
    with pytest.raises(
        WorktreeError, match=r"conflicts with your checkout in shared\.txt; the merge was aborted"
    ):
        asyncio.run(merge_branch(repo, bad.branch))
    assert git(repo, "rev-parse", "HEAD") == head and git(repo, "status", "--porcelain") == ""
    with pytest.raises(WorktreeError, match="is not a subagent's branch"):
        asyncio.run(merge_branch(repo, "main"))


def test_a_sessions_branches_are_found_from_a_run_on(tmp_path: Path) -> None:
    repo, home = repository(tmp_path), tmp_path / "home"
    for cid in ("S/0001.c1", "S/0003.c1", "S/0003.c1.c2", "T/0003.c1"):
        wt = made(repo, home, cid)
        (Path(wt.path) / "x.txt").write_text(cid)
        asyncio.run(end_worktree(wt, cid))
    got = asyncio.run(session_branches(repo, "S", 2))
    assert got == ["eukhe/S/0003.c1", "eukhe/S/0003.c1.c2"]


def test_isolation_outside_a_repository_says_so(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(WorktreeError, match=r"is not in a git repository .*spawn it without isolation"):
        made(plain, tmp_path / "home", "S/0001.c1")
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    with pytest.raises(WorktreeError, match="has no commit yet"):
        made(empty, tmp_path / "home", "S/0001.c1")


# ---------------------------------------------------------------- the boundary: tools and gate


def gate(workspace: Path, home: Path, fenced: tuple[Path, ...] = (), mode: str | None = None) -> Gate:
    rights = in_force(workspace, sandbox=mode)
    return Gate(PermissionState(rights.cfg(person=False, sandbox=True)), workspace, home, fenced=fenced)


@needs_bwrap
def test_a_child_in_its_worktree_commits_but_cannot_touch_its_parents_git(tmp_path: Path) -> None:
    """The sandbox as the child's run makes it: its commit lands on its branch; the parent's
    index, HEAD, branches and stash cannot be written."""
    root = Path(tempfile.mkdtemp(dir="/var/tmp"))  # outside /tmp: the sandbox's /tmp is its own
    try:
        repo, home = repository(root), root / "home"
        wt = made(repo, home, "S/0001.c1")
        box = for_run(
            {}, Path(wt.path), home, "S/0001.c1", user_home=Path.home(), temp=Path(tempfile.gettempdir())
        )
        box = box.showing(*wt.shown).binding(*wt.writable).sealing(*wt.sealed)
        before = state(repo)

        def bash(command: str) -> str:
            return asyncio.run(
                BASH.run({"command": command, "timeout": 30}, Context(Path(wt.path), sandbox=box))
            ).content

        assert "exit code 0" in bash("echo x >> shared.txt && git commit -qam mine")
        for attack in (
            f"git -C {repo} commit -qam stolen",
            "git update-ref refs/heads/main HEAD",
            f"git -C {repo} stash",
            f"echo x > {repo}/.git/HEAD",
            f"echo gitdir: /x > {wt.path}/.git",  # where its repository is: eukhe's word, not its
            f"echo /tmp/fake > {wt.admin}/commondir",
            f"printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> {wt.admin}/config.worktree",
        ):
            assert "exit code 0" not in bash(attack), attack
        assert state(repo) == before
        assert git(repo, "log", "-1", "--format=%s", wt.branch).strip() == "mine"
    finally:
        subprocess.run(["rm", "-rf", str(root)], check=False)


def test_a_worktree_whose_head_left_its_branch_is_kept_and_nothing_committed_elsewhere(
    tmp_path: Path,
) -> None:
    """A child that pointed its worktree's HEAD at its parent's branch (its own folder in the
    repository is writable to it) and left work uncommitted: eukhe's commit, outside any
    sandbox, would land on the parent's branch. None is made; the worktree is kept and said."""
    repo, home = repository(tmp_path), tmp_path / "home"
    wt = made(repo, home, "S/0001.c1")
    Path(wt.admin, "HEAD").write_text("ref: refs/heads/main\n")
    (Path(wt.path) / "shared.txt").write_text("planted\n")
    head = git(repo, "rev-parse", "main")
    got = asyncio.run(end_worktree(wt, "c1.1"))
    assert git(repo, "rev-parse", "main") == head
    assert Path(wt.path).exists() and "its HEAD is on main, not on its branch" in got.text(), got


def test_the_file_tools_of_a_child_in_a_worktree_read_its_parents_checkout_and_never_write_it(
    tmp_path: Path,
) -> None:
    repo, home = repository(tmp_path), tmp_path / "home"
    wt = made(repo, home, "S/0001.c1")
    for mode in (None, "danger-full-access"):  # whatever the mode
        g = gate(Path(wt.path), home, (repo,), mode)
        ctx = Context(Path(wt.path), reach=g.opened)
        got = asyncio.run(WRITE.run({"path": str(repo / "shared.txt"), "content": "x"}, ctx))
        assert got.is_error and Why.FENCED.value in got.content, got
        mine = asyncio.run(
            WRITE.run({"path": "mine.txt", "content": "x"}, Context(Path(wt.path), reach=g.opened))
        )
        assert not mine.is_error, mine  # its worktree, though it lies in the home
        assert g.opened(Act.READ, str(repo / "shared.txt")) is None
    assert (repo / "shared.txt").read_text() == "the parent's own edit\n"


def test_merge_child_writes_git_so_a_person_is_asked_and_headless_is_denied(tmp_path: Path) -> None:
    repo, home = repository(tmp_path), tmp_path / "home"
    g = gate(repo, home)
    call = ToolCall("m1", "merge_child", '{"branch": "eukhe/S/0001.c1"}', {"branch": "eukhe/S/0001.c1"})
    assert g.call_of(call).writes
    permit = asyncio.run(g.permit(call))
    assert not permit.runs and permit.why == Why.HEADLESS.value, permit
    person = in_force(repo).cfg(person=True, sandbox=True)
    for mode in (person, rule.Cfg(rule.Mode.FULL, person.policy, True, True)):  # asked, even in full access
        d = rule.decide(mode, g.call_of(call))
        assert (d.verdict, d.why) == (Verdict.ASK, Why.GIT), d


def test_an_agent_file_may_ask_for_a_worktree(tmp_path: Path) -> None:
    from eukhe.skills._agents import load_agents

    home = tmp_path / "home"
    (home / "agents").mkdir(parents=True)
    (home / "agents" / "fixer.md").write_text(
        "---\nname: fixer\ndescription: fixes things\nisolation: worktree\n---\nFix it.\n"
    )
    [agent] = load_agents(home).agents
    assert agent.isolation == "worktree" and type(agent).of(agent.json()) == agent


def test_the_report_and_the_worktrees_end_ask_the_rule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tie: what the report says and what a worktree keeps come from `rules.child`
    (`parts`, `kept`); swapped, the runtime does what the swapped rule says."""
    changes = "Changes on branch eukhe/S/0001.c1: 1 commit (abc1234 x)"
    for sub in (0, 1, 2):  # every submission says the changes once, after the head
        said = texts.report(Owe.FAILED, "c1.1", "boom", changes, sub)
        assert said == f"[child-failed child:c1.1] boom\n\n{changes}"
    assert (
        texts.report(Owe.EXITED, "c1.1", "done")
        == "[child-exited: no-reply child:c1.1] Last assistant text: done"
    )
    monkeypatch.setattr(child_rule, "parts", lambda owe, changes, sub: (Part.HEAD,))
    assert changes not in texts.report(Owe.FAILED, "c1.1", "boom", changes, 0)

    repo, home = repository(tmp_path), tmp_path / "home"
    wt = made(repo, home, "S/0001.c1")
    (Path(wt.path) / "new.txt").write_text("work\n")
    monkeypatch.setattr(child_rule, "kept", lambda commits, dirty: Kept.NOTHING)
    got = asyncio.run(end_worktree(wt, "c1.1"))
    assert got.kept is Kept.NOTHING and not Path(wt.path).exists()  # the swapped rule's word: lost
