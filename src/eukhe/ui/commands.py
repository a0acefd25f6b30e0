"""The interactive agent's slash commands: what each does, its completion, and the one
line that says why when it fails. A command answers in lines of the scrollback; a
message that names a prompt template or a skill (`/name args`, `/skill:name args`)
is no command: it is sent to the model, expanded."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from eukhe.ai.effort import effort_refusal
from eukhe.ai.models import ModelError
from eukhe.children.worktree import session_branches
from eukhe.display import provider_line
from eukhe.errors import Code, EukheError
from eukhe.events import event
from eukhe.hooks.config import load as load_hooks
from eukhe.hooks.report import listing as hooks_listing
from eukhe.humanize import clipped, counted
from eukhe.ids import valid_session
from eukhe.jobs import JobError
from eukhe.jobs.holder import Scope
from eukhe.mcp import check
from eukhe.mcp.config import servers as mcp_servers
from eukhe.plugins import listing as plugins_listing
from eukhe.rules import todo
from eukhe.rules.rewind import rewindable
from eukhe.run.chat_access import status_json, status_lines, zoomed
from eukhe.run.checkpoint import CheckpointError, Shadow, plan, project_of
from eukhe.run.owner_access import OwnerError, RequestKind, ask_once
from eukhe.run.spec import SessionSetup, setup
from eukhe.settings import SettingsError, home, resolve
from eukhe.settings.permissions import permissions_in_force
from eukhe.skills import agents_listing, load_agents
from eukhe.ui.session import AgentSession

if TYPE_CHECKING:  # the store's half loads with the session's store (ui/session.py)
    from eukhe.run.home_store import Chat, ChatStore
    from eukhe.ui.session_runtime import SessionRuntime


class CommandError(EukheError):
    """A command that cannot do what it was asked: its one line says why."""

    code = Code.INPUT


@dataclass(frozen=True)
class Command:
    name: str
    args: str  # how its arguments read in /help
    says: str
    run: Callable[[AgentSession, str], Awaitable[list[str]]]


async def _help(s: AgentSession, arg: str) -> list[str]:
    lines = [f"/{c.name}{' ' + c.args if c.args else ''}: {c.says}" for c in COMMANDS.values()]
    keys = [
        "Enter sends; Alt+Enter or Ctrl-J inserts a newline.",
        "While a run works: Enter queues a steer (it enters at the next round end), "
        "Alt+Enter a follow-up (the next run's prompt).",
        "Ctrl-C aborts the run (what you queued comes back to the prompt; what you send after it "
        "is the next run); at an idle prompt, "
        "Ctrl-C twice exits, as does Ctrl-D. Ctrl-O opens the last tool result.",
        "Shift+Tab turns plan mode on or off: nothing writes or runs until you approve the model's plan.",
        "/NAME args sends a prompt template; /skill:NAME args hands the model a skill.",
    ]
    return lines + keys


async def _model(s: AgentSession, arg: str) -> list[str]:
    if not arg:
        known = ", ".join(models(s)) or "none in the settings"
        return [f"model: {s.made.model if s.made else '(not set)'}", f"configured: {known}"]
    if s.working:
        raise CommandError("a run is at work: switch the model once it ends")
    if s.failed and s.made is None:  # the session could not open (no model, say): again, with this one
        s.options.model, s.failed = arg, ""
        await s.boot()
        return [f"model: {arg}"] if not s.failed else []
    try:
        o = s.options
        made = await asyncio.to_thread(setup, s.cwd, arg, o.base_url, o.api, o.sandbox, o.approval, o.effort)
    except (SettingsError, ModelError) as e:
        raise CommandError(str(e)) from None
    _keep(s, made)
    s.options.model = arg
    return [f"model: {arg} (the session's next runs)"]


def _keep(s: AgentSession, made: SessionSetup) -> None:
    """A new setup for the session's next runs, carrying how its runs were made."""
    was = s.made
    s.made = (
        made
        if was is None
        else dataclasses.replace(
            made, steers=was.steers, deferred=was.deferred, poll_seconds=was.poll_seconds
        )
    )


OWN = "the model's own"


async def _effort(s: AgentSession, arg: str) -> list[str]:
    """The reasoning effort of the next runs: low, medium, high, the provider's own name, or off
    (the model's own); over `models.<m>.reasoningEffort`."""
    if s.made is None:
        raise CommandError("the session is still opening")
    if not arg:
        now = s.made.run.reasoning_effort
        return [f"reasoning effort: {now or OWN} (/effort low|medium|high|off)"]
    if s.working:
        raise CommandError("a run is at work: change the effort once it ends")
    o = s.options
    try:
        made = await asyncio.to_thread(setup, s.cwd, o.model, o.base_url, o.api, o.sandbox, o.approval, arg)
    except (SettingsError, ModelError) as e:
        raise CommandError(str(e)) from None
    _keep(s, made)
    o.effort = arg
    refused = effort_refusal(made.route_api, made.run.reasoning_effort)
    now = made.run.reasoning_effort
    return [refused] if refused else [f"reasoning effort: {now or OWN} (the next runs)"]


async def _sessions(s: AgentSession, arg: str) -> list[str]:
    rows = await s.sessions()
    if not rows:
        return ["no sessions yet"]
    out = []
    for r in rows[-20:]:
        started = r.started.strftime("%Y-%m-%d %H:%M") if r.started else "?"
        prompt = clipped(r.last_prompt, 60)
        here = " (this one)" if r.session == s.id else ""
        out.append(f"{r.session}{here}  {started}  {counted(r.runs, 'run')}  {r.outcome}  {prompt}")
    return out


async def _session(s: AgentSession, arg: str) -> list[str]:
    if not arg:
        return [f"session: {s.id}"]
    if s.working:
        raise CommandError("a run is at work: open another session once it ends")
    if not valid_session(arg):
        raise CommandError(f"session id {arg!r}: use letters, digits, '-', '_' or '.'")
    durable = _durable(s)
    found = await durable.sessions.runs(arg)
    if not found:
        raise CommandError(f"no session {arg!r} (/sessions lists them)")
    out = [f"session {arg}: {counted(len(found), 'run')}", *(await durable.sessions.transcript(arg)).lines()]
    s.switch(arg)
    s.view.children = []
    await _relisted(s)
    return out


async def _relisted(s: AgentSession) -> None:
    """The task list above the prompt: the one of the session now open, as it stands."""
    s.view.todo = todo.json_of((await _durable(s).sessions.pins(s.id)).tasks)


async def _fork(s: AgentSession, arg: str) -> list[str]:
    if s.working:
        raise CommandError("a run is at work: fork the session once it ends")
    if arg and not arg.isdigit():
        raise CommandError(f"/fork {arg}: give a run's number, or nothing for the last run")
    durable = _durable(s)
    try:
        new, upto = await durable.sessions.fork(s.id, int(arg) if arg else None)
    except EukheError as e:  # the store's: no such run, or it cannot be written
        raise CommandError(str(e)) from None
    old = s.id
    s.switch(new)
    s.view.children = []
    await _relisted(s)
    return [
        f"forked session {old} after its run {upto}: this is session {new}",
        *(await durable.sessions.transcript(new)).lines(),
        *await _branches(s, old, 1, f"the fork shares them with session {old}; its reports name them"),
    ]


async def _branches(s: AgentSession, session: str, first: int, said: str) -> list[str]:
    """The branches of the session's subagents in worktrees from run `first` on, kept as they
    are (`said`: why); none, nothing said."""
    got = await session_branches(s.cwd, session, first)
    if not got:
        return []
    return [f"the branches of its subagents from run {first} on are kept ({said}): {', '.join(got)}"]


REWIND_PARTS = ("files", "conversation", "both")


async def _rewind(s: AgentSession, arg: str) -> list[str]:
    """`/rewind`: the runs to go back before; `/rewind N [files|conversation|both]`: the plan;
    the same with `yes` at its end: done."""
    if s.working:
        raise CommandError("a run is at work: rewind once it ends")
    durable = _durable(s)
    runs = await durable.sessions.numbered(s.id)
    words = arg.split()
    if not words:
        if not runs:
            return ["this session has no run yet: there is nothing to rewind"]
        listed = [f"  {k}  {clipped(prompt, 60)}" for k, _, prompt in runs]
        return ["go back to before a run of this session:", *listed, REWIND_USE]
    n, part, yes = words[0], words[1] if len(words) > 1 else "both", words[-1] == "yes"
    if not n.isdigit() or part not in (*REWIND_PARTS, "yes"):
        raise CommandError(f"/rewind {arg}: {REWIND_USE}")
    first, part = int(n), "both" if part == "yes" else part
    last, why = rewindable(s.id, first, [(k, live) for k, live, _ in runs])
    if why is not None:  # a run in flight (another process's), or no such run
        raise CommandError(why)
    out: list[str] = []
    if part in ("files", "both"):
        out += await _rewind_files(s, first, yes)
    if part in ("conversation", "both"):
        if yes:
            out.append(await durable.sessions.rewind_conversation(s.id, first, last))
            await _relisted(s)  # the list the ended runs wrote ends with them
        else:
            ended = f"run {first}" if first == last else f"runs {first} to {last}"
            out.append(f"the conversation: {ended} would end in this session's transcript")
    out += await _branches(s, s.id, first, "a rewind deletes none")
    if not yes:
        out.append(f"/rewind {first} {part} yes applies it")
    return out


REWIND_USE = "/rewind N [files|conversation|both] shows the plan, and with yes at its end applies it"


async def _rewind_files(s: AgentSession, n: int, yes: bool) -> list[str]:
    """The files' part of `/rewind`: the plan, or done (files changed by hand since are kept)."""
    assert s.made is not None
    shadow = Shadow(project_of(s.made.cwd), home())
    try:
        commit, name, changes, hand, _ = await plan(shadow, s.id, n)
        if commit is None or not changes:
            return [f"the files of {shadow.project}: nothing to rewind"]
        chosen = [c for c in changes if c.path not in hand]
        if not yes:
            kept = f" (keeping {len(hand)} changed by hand: {', '.join(sorted(hand))})" if hand else ""
            return [f"the files: {len(chosen)} would be restored to before run {name}{kept}"]
        await shadow.restore(commit, chosen)
    except CheckpointError as e:
        raise CommandError(f"the checkpoints of {shadow.project}: {e}") from None
    kept = f"; kept {len(hand)} changed by hand" if hand else ""
    return [f"the files: restored {len(chosen)} to before run {name}{kept}"]


async def _memory(s: AgentSession, arg: str) -> list[str]:
    def read() -> list[str]:
        store, chat = _chat(s)
        try:
            return status_lines(status_json(chat.status(), time.time()))
        finally:
            store.close()

    return await asyncio.to_thread(read)


async def _zoom(s: AgentSession, arg: str) -> list[str]:
    parts = arg.split()
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise CommandError("/zoom ID N: two whole numbers, as the view names a line ID+N")

    def read() -> tuple[str | None, str]:
        store, chat = _chat(s)
        try:
            return zoomed(chat, int(parts[0]), int(parts[1]))
        finally:
            store.close()

    got, why = await asyncio.to_thread(read)
    if got is None:
        raise CommandError(why)
    return got.splitlines()


def _durable(s: AgentSession) -> SessionRuntime:
    try:
        return s.opened
    except RuntimeError as e:  # not open: the command's line says why
        raise CommandError(str(e)) from None


def _chat(s: AgentSession) -> tuple[ChatStore, Chat]:
    """The chat as the store has it now, to read (the owner writes it)."""
    durable = _durable(s)
    assert s.made is not None  # made before the store opens
    return durable.chat(s.made.settings)


async def _status(s: AgentSession, arg: str) -> list[str]:
    out = [f"session {s.id or '(opening)'}: {s.view.status()}"]
    try:
        got = await ask_once(home(), RequestKind.STATUS)
    except (OwnerError, OSError) as e:
        return [*out, f"owner: not reachable ({e})"]
    lease = got.get("lease") or {}
    holder = lease.get("holder") or {}
    out.append(f"owner: pid {(got.get('owner') or {}).get('pid')}, {len(got.get('clients') or [])} clients")
    if holder:
        out.append(f"root-turn lease: session {holder.get('session')}, run {holder.get('run')}")
    for name, p in (got.get("providers") or {}).items():
        out.append(provider_line(name, p))
    return out


async def _settings(s: AgentSession, arg: str) -> list[str]:
    try:
        return list((await asyncio.to_thread(resolve, s.cwd)).lines())
    except SettingsError as e:
        raise CommandError(str(e)) from None


async def _permissions(s: AgentSession, arg: str) -> list[str]:
    o = s.options
    try:
        return await asyncio.to_thread(permissions_in_force, s.cwd, None, o.sandbox, o.approval)
    except SettingsError as e:
        raise CommandError(str(e)) from None


async def _hooks(s: AgentSession, arg: str) -> list[str]:
    """The hooks in effect here, by event, and what was held back (`eukhe hooks list`)."""
    try:
        got = await asyncio.to_thread(load_hooks, s.cwd, os.environ)
    except SettingsError as e:
        raise CommandError(str(e)) from None
    return hooks_listing(got, s.cwd)


async def _open(s: AgentSession, arg: str) -> list[str]:
    results = s.view.results
    if not results:
        raise CommandError("no tool result yet")
    if arg and not arg.isdigit():
        raise CommandError("/open N: the number a tool line shows, [N]")
    n = int(arg) if arg else len(results)
    if not 1 <= n <= len(results):
        raise CommandError(f"/open N: N from 1 to {len(results)}")
    e = results[n - 1]
    size = int(e.data.get("chars") or len(e.text))
    more = f" (its first {len(e.text)} of {size} characters; eukhe session show has it whole)"
    head = f"result [{n}] of {e.data.get('name')}{more if size > len(e.text) else ''}:"
    return [head, *e.text.splitlines()]


async def _context(s: AgentSession, arg: str) -> list[str]:
    """What the system prompt holds besides the chat's view: the instruction files and their
    sizes (read once a session; a change enters at the next turn)."""
    if s.made is None:
        raise CommandError("the session is still opening")
    return s.made.instructions.lines()


async def _mcp(s: AgentSession, arg: str) -> list[str]:
    """The MCP servers in effect here, each started, listed and closed (`eukhe mcp list`);
    `/mcp reconnect NAME` (or `/mcp NAME`) tries one again. A run starts its own."""
    try:
        found, said = await asyncio.to_thread(mcp_servers, s.cwd, os.environ)
    except SettingsError as e:
        raise CommandError(str(e)) from None
    name = arg.removeprefix("reconnect").strip()
    chosen = [c for c in found if c.name == name] if name else list(found)
    if name and not chosen:
        raise CommandError(
            f"/mcp: no server {name} here; the servers: {', '.join(c.name for c in found) or 'none'}"
        )
    if not chosen:
        return [*said, "no MCP servers are configured here (eukhe mcp add NAME -- COMMAND)"]
    rows = await check.check(chosen)
    return [*said, *(check.tested(rows[0]) if name else check.listing(rows))]


async def _agents(s: AgentSession, arg: str) -> list[str]:
    """The subagents users define, read again (the session's next runs take them), and each
    definition that did not load, with why."""
    if s.made is None:
        raise CommandError("the session is still opening")
    got = await asyncio.to_thread(load_agents, home(), s.cwd)
    snap = s.made.snapshot
    s.made = dataclasses.replace(
        s.made,
        snapshot=dataclasses.replace(
            snap, agents=got.agents, diagnostics={**snap.diagnostics, "agents": got.diagnostics}
        ),
    )
    return agents_listing(got.agents, got.diagnostics)


async def _plugins(s: AgentSession, arg: str) -> list[str]:
    """The plugins added (`eukhe plugin list`): each marketplace, each plugin, and whether it is
    in effect here. Adding and switching them is `eukhe plugin`'s, a person's act."""
    lines = await asyncio.to_thread(plugins_listing, home(), s.cwd)
    return [
        *lines,
        "(eukhe plugin add|remove|enable|disable changes them; the session's next runs take them)",
    ]


async def _usage(s: AgentSession, arg: str) -> list[str]:
    """Tokens and cost: the run at work (or the last), the session's, the context's fill."""
    return s.view.usage_lines()


async def _jobs(s: AgentSession, arg: str) -> list[str]:
    """`/jobs`: this session's background jobs (command, age, state); `/jobs kill ID` stops one
    (its whole tree: SIGTERM, then SIGKILL after the grace)."""
    if s.durable is None or not s.id:
        return ["background jobs: none (the session is not open yet)"]
    jobs = Scope(s.durable.process.jobs, s.id, s.id, "")
    words = arg.split()
    if words[:1] == ["kill"] and len(words) == 2:
        try:
            return [await jobs.kill(words[1], asyncio.Event())]
        except JobError as e:
            raise CommandError(str(e)) from None
    if words:
        raise CommandError(f"/jobs {arg}: {JOBS_USE}")
    lines = jobs.listing()
    return lines or ["background jobs: none in this session"]


JOBS_USE = "/jobs lists this session's background jobs; /jobs kill ID stops one"


async def _quit(s: AgentSession, arg: str) -> list[str]:
    return []  # the app leaves (a run at work is left to the owner)


COMMANDS: dict[str, Command] = {
    c.name: c
    for c in (
        Command("help", "", "this list, and the keys", _help),
        Command("model", "[provider/model]", "the model, or switch it for the next runs", _model),
        Command(
            "effort", "[low|medium|high|off]", "the reasoning effort, or set it for the next runs", _effort
        ),
        Command("sessions", "", "the sessions of this home", _sessions),
        Command(
            "session", "[ID]", "this session, or open another (its transcript, then its next runs)", _session
        ),
        Command(
            "fork", "[RUN]", "a new session from this one's runs up to RUN (the last), then its own", _fork
        ),
        Command(
            "rewind",
            "[N [files|conversation|both] [yes]]",
            "go back before run N: the files, the transcript or both (the plan first)",
            _rewind,
        ),
        Command("memory", "", "the chat memory: messages, lines built and pending, the view", _memory),
        Command("zoom", "ID N", "open a line of the chat's view (N = 1: the message whole)", _zoom),
        Command("status", "", "the run, its wait and budgets; the owner, the lease, the providers", _status),
        Command("settings", "", "the settings in effect and where each came from", _settings),
        Command("permissions", "", "each rule in force and its source; the mode, the policy", _permissions),
        Command("hooks", "", "the hooks in effect: by event, each one's command and source", _hooks),
        Command("open", "[N]", "a tool result whole (the last one without N)", _open),
        Command(
            "context", "", "the instruction files (AGENTS.md, CLAUDE.md) loaded, and their sizes", _context
        ),
        Command("usage", "", "tokens and cost: this run, this session, the context's fill", _usage),
        Command("mcp", "[reconnect NAME]", "the MCP servers: each one's state, tools and last error", _mcp),
        Command("agents", "", "the subagents you defined (read again): tools, model, where from", _agents),
        Command(
            "plugins", "", "the plugins you added: marketplaces, plugins, which are in effect here", _plugins
        ),
        Command(
            "jobs", "[kill ID]", "this session's background jobs: command, age, state; or stop one", _jobs
        ),
        Command("quit", "", "leave (a run at work is left to the owner)", _quit),
    )
}


def models(s: AgentSession) -> list[str]:
    """The models the settings name: the model, the auxiliary model, `models` and
    `allowedModels`, and each configured provider as `provider/`."""
    settings = s.made.settings if s.made else {}
    found: list[str] = []
    for m in (settings.get("model"), settings.get("auxiliaryModel"), s.options.model):
        if isinstance(m, str) and m:
            found.append(m)
    found += [k for k in (settings.get("models") or {}) if isinstance(k, str)]
    found += [k for k in (settings.get("allowedModels") or []) if isinstance(k, str)]
    found += [f"{p}/" for p in (settings.get("providers") or {}) if isinstance(p, str)]
    return list(dict.fromkeys(found))


def command_of(text: str, s: AgentSession) -> tuple[Command | None, str]:
    """The command a line names and its argument; (None, why) for a `/word` that names
    no command, template or skill; (None, "") for a message."""
    if not text.startswith("/") or text.startswith("//"):
        return None, ""
    word, _, arg = text[1:].partition(" ")
    if word in COMMANDS:
        return COMMANDS[word], arg.strip()
    if "/" in word:  # a path, such as /etc/hosts: a message
        return None, ""
    templates = [t.name for t in (s.made.snapshot.prompts if s.made else [])]
    skills = [k.name for k in (s.made.snapshot.skills if s.made else [])]
    if word in templates or (word.startswith("skill:") and word[len("skill:") :] in skills):
        return None, ""
    if word.startswith("skill:"):
        return None, f"no skill {word[len('skill:') :]!r}: the skills are {', '.join(skills) or 'none'}"
    return None, f"unknown command /{word}: /help lists the commands and templates"


async def run_command(cmd: Command, s: AgentSession, arg: str) -> None:
    """Run a command; its lines (or the one line that says why it failed) to the view."""
    try:
        lines = await cmd.run(s, arg)
    except CommandError as e:
        lines = [f"/{cmd.name}: {e}"]
    except Exception as e:  # a command never takes the prompt down: its cause, in one line
        lines = [f"/{cmd.name} failed: {type(e).__name__}: {e}"]
    for line in lines:
        s.add(event("say", line))


def completions(text: str, s: AgentSession, sessions_known: Iterable[str] = ()) -> list[tuple[str, str]]:
    """What `text` (the prompt so far) completes to: (the completed text, what it is)."""
    if not text.startswith("/"):
        return []
    word, space, arg = text[1:].partition(" ")
    if not space:
        out = [(f"/{c.name}", c.says) for c in COMMANDS.values()]
        if s.made is not None:
            out += [(f"/{t.name}", t.description) for t in s.made.snapshot.prompts]
            out += [(f"/skill:{k.name}", k.description) for k in s.made.snapshot.skills]
        return [(c, m) for c, m in out if c.startswith(f"/{word}")]
    if word == "model":
        return [(f"/model {m}", "model") for m in models(s) if m.startswith(arg)]
    if word == "session":
        return [(f"/session {i}", "session") for i in sessions_known if i.startswith(arg)]
    return []


def history_path(home: Path) -> Path:
    """The prompt's history, shared by every session of the home."""
    return home / "history"
