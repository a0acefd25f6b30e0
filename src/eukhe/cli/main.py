"""The `eukhe` command line."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from eukhe.ai.image import ImageError
from eukhe.ai.models import ModelError
from eukhe.ai.request import Message
from eukhe.cli import lazy
from eukhe.cli import owner as owner_commands
from eukhe.cli.chat import chat_app
from eukhe.cli.folder_settings import notices, settings_here
from eukhe.cli.hooks import hooks_app
from eukhe.cli.mcp import mcp_app
from eukhe.cli.options import flag, valueless_help
from eukhe.cli.output import echo, echo_json, width
from eukhe.cli.plugin import plugin_app
from eukhe.cli.printer import Printer, RunView, Stream
from eukhe.cli.prompt import Prompt, PromptError, prompt_of
from eukhe.cli.rewind import kept_branches, rewind
from eukhe.cli.store import store_app
from eukhe.cli.trust import trust_command
from eukhe.humanize import clipped, counted
from eukhe.ids import new_session, run_id, run_line, valid_session
from eukhe.json_types import JsonObject
from eukhe.process_exit import leave
from eukhe.run import instructed
from eukhe.run.deadline import Deadline, DurationError, duration
from eukhe.run.spec import NoModel, RunSpec, SessionSetup, ToolsError, chosen_tools, setup
from eukhe.settings import SettingsError, loaded, resolve
from eukhe.settings.permissions import choice
from eukhe.skills import SkillError, get_resource_snapshot

# markdown: a docstring's lines join into paragraphs (rich kept each line break, mid-sentence)
app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode="markdown")


@app.callback()
def _root() -> None:
    """eukhe: a coding agent harness whose liveness is law. With no arguments, or only the
    agent's options (--model, --base-url, --api, --session, -c or --continue, --sandbox,
    --approval, --permission-mode, --effort), eukhe opens the interactive agent on this
    project (docs/agent.md)."""


@app.command()
def laws(
    area: Annotated[
        list[str] | None,
        typer.Option(
            "--area",
            help="Check only this area (run, recovery, classify, wait, lease, admission, aux_fallback, "
            "skill_load, compactor, queue, child_watch, progress, child, child_take, permission, "
            "permission_ask, confine, mcp, retry, hook, acp, drive, agent, fetch, plan, pinned, instructed); "
            "repeatable.",
        ),
    ] = None,
    as_json: Annotated[bool, flag("--json", help="Print one JSON object instead of the table.")] = False,
    no_proofs: Annotated[
        bool, flag("--no-proofs", help="Skip the CrossHair proofs (exhaustive and sampled only).")
    ] = False,
    examples: Annotated[
        int | None, typer.Option("--examples", min=1, help="Hypothesis examples a law (default: the area's).")
    ] = None,
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs",
            min=1,
            help="Processes the walks, samples and mutants are dealt to (default 2; 1: this process).",
        ),
    ] = 2,
) -> None:
    """Check every law of the rules against its model, and kill every mutant.

    Exit code 1 when a law fails or a mutant survives."""
    raise typer.Exit(lazy.lawbook().check(area, as_json, no_proofs, examples, jobs))


def _printer(as_json: bool, events: bool = False) -> Printer | Stream:
    return Stream() if events else Printer(as_json)


@app.command("run")
def run_command(
    prompt: Annotated[
        str | None,
        typer.Argument(
            metavar="PROMPT",
            help="What to do; `-` reads it from standard input (which is read only then, or with --stdin).",
        ),
    ] = None,
    model: Annotated[str | None, typer.Option("--model", help="provider/model, e.g. openai/gpt-4.1")] = None,
    base_url: Annotated[str | None, typer.Option("--base-url", help="The provider's base URL.")] = None,
    api: Annotated[
        str | None, typer.Option("--api", help="openai-chat, openai-responses or anthropic")
    ] = None,
    max_tool_rounds: Annotated[
        int | None, typer.Option("--max-tool-rounds", min=0, help="Round cap (0: the default, 250).")
    ] = None,
    tools: Annotated[
        str | None,
        typer.Option(
            "--tools",
            help="Offer only these tools, by name, comma-separated (read,grep,glob; an MCP server's "
            "as mcp__<server>__<tool>); empty: none. Its subagents too.",
        ),
    ] = None,
    as_json: Annotated[bool, flag("--json", help="End with one JSON object on the last line.")] = False,
    events: Annotated[
        bool,
        flag(
            "--events",
            help="Print every event of the session as one JSON object a line (docs/events.md), "
            "the outcome last.",
        ),
    ] = False,
    session: Annotated[
        str | None, typer.Option("--session", help="Continue this session (default: a new one).")
    ] = None,
    deferred: Annotated[
        str | None,
        typer.Option(
            "--deferred",
            help="Ask for a deferred answer (a background job, --api openai-responses), "
            "polled until its window ends: 15m, 1h or 24h.",
        ),
    ] = None,
    poll_interval: Annotated[float, typer.Option("--poll-interval", hidden=True, min=0.01)] = 5.0,
    sandbox: Annotated[
        str | None,
        typer.Option("--sandbox", help="read-only, workspace-write or danger-full-access (over settings)."),
    ] = None,
    approval: Annotated[
        str | None,
        typer.Option("--approval", help="When to ask: untrusted, on-request or never (over settings)."),
    ] = None,
    permission_mode: Annotated[
        str | None,
        typer.Option(
            "--permission-mode",
            help="plan: nothing writes or runs; the model's plan (exit_plan) is the answer. "
            "default: the sandbox mode as it is (over permissions.defaultMode).",
        ),
    ] = None,
    effort: Annotated[
        str | None,
        typer.Option(
            "--effort",
            help="Reasoning effort: low, medium, high or the provider's own name; off: the model's own "
            "(over models.<m>.reasoningEffort).",
        ),
    ] = None,
    timeout: Annotated[
        str | None,
        typer.Option(
            "--timeout",
            metavar="DURATION",
            help="End by then (90s, 5m, 1h30m): a run still at work is aborted and fails, kind "
            "timeout, exit code 124; its subagents and follow-up runs too.",
        ),
    ] = None,
    from_stdin: Annotated[
        bool,
        flag(
            "--stdin",
            help="Read the prompt from standard input, after PROMPT when one is given "
            "(cat log | eukhe run --stdin 'explain').",
        ),
    ] = False,
    control: Annotated[
        bool,
        flag(
            "--control",
            help="Take requests on standard input, one JSON object a line (prompt, steer, follow_up, "
            "abort, state), and print the events as --events does (docs/run.md).",
        ),
    ] = False,
    image: Annotated[
        list[str] | None,
        typer.Option(
            "--image",
            help="Attach an image (PNG, JPEG, GIF or WebP) to the prompt; repeatable. OpenAI's and "
            'Anthropic\'s models take images, others when models.<m>.input is ["text", "image"].',
        ),
    ] = None,
) -> None:
    """Run one turn against a model, with the built-in tools, until it ends. The run is
    durable: if the process dies, the next `eukhe run` or `eukhe resume` finishes it."""
    if as_json and (events or control):
        other = "--control" if control else "--events"
        echo(f"eukhe run: --json and {other} both print to stdout: choose one", err=True)
        raise typer.Exit(2)
    if control and (prompt is not None or from_stdin or image):
        asked = "PROMPT, --stdin or --image"
        echo(
            f"eukhe run: --control takes its prompts as requests on standard input: give no {asked}", err=True
        )
        raise typer.Exit(2)
    try:  # before the prompt is read: a wrong flag costs no typing
        for option, given in (
            ("--sandbox", sandbox),
            ("--approval", approval),
            ("--permission-mode", permission_mode),
        ):
            if given is not None:
                choice(option, given)
        offered = None if tools is None else chosen_tools(tools)
        # absolute from now: the whole invocation (the store's opening too) ends by then
        deadline = None if timeout is None else Deadline.after(duration(timeout), time.time())
    except (SettingsError, ToolsError, DurationError) as e:
        echo(f"eukhe run: {e}", err=True)
        raise typer.Exit(2) from None
    try:
        entered = Prompt("", "") if control else prompt_of(prompt, sys.stdin.buffer, from_stdin)
    except PromptError as e:
        echo(f"eukhe run: {e}", err=True)
        raise typer.Exit(2) from None
    if model is None and session is not None:  # a session continued runs where it ran
        _session_id(session)
        ran = lazy.stored().route(session)
        model = ran.get("model") or None
        base_url = base_url if base_url is not None else ran.get("baseUrl")
        api = api if api is not None else ran.get("api")
    try:
        made = setup(
            Path.cwd(), model, base_url, api, sandbox, approval, effort, permission_mode
        )  # a model that cannot be used fails here, before any run
        notices(made.notices)
        unlisted = made.unlisted()  # begun now; said before the run (a local server ignores a wrong name)
        printer = _printer(as_json, events or control)
        for kind, line in made.diagnostics():  # each skill and template that failed, with its cause (H7.3)
            printer.show("diagnostic", f"{kind} {line}")
        _changed_instructions(printer)  # each a run's model changed, said before the first run
        if not control:  # a control session's prompts are expanded as each comes
            attached = made.attach(  # @path: the file after the prompt; piped text's, inside the project only
                made.expand(entered.text), entered.typed, image or (), given=entered.piped
            )
            for line in attached.said:
                printer.say(line)
            prompt = attached.prompt
    except (SettingsError, ModelError, NoModel, SkillError, ImageError) as e:
        with contextlib.suppress(SettingsError):  # what the folder's settings held back may be why
            notices(loaded(Path.cwd()).notices)
        echo(f"eukhe run: {e}", err=True)
        raise typer.Exit(2) from None
    _session_id(session)
    rounds = (
        made.run
        if max_tool_rounds is None
        else dataclasses.replace(made.run, max_tool_rounds=max_tool_rounds)
    )
    made = dataclasses.replace(
        made, run=rounds, deferred=deferred, poll_seconds=poll_interval, tools=offered, deadline=deadline
    )
    if control:
        _controlled(made, printer, session, unlisted)
    # its SessionStart hooks' source: a new session, or one continued
    spec = dataclasses.replace(
        made.spec(prompt, attached), session_start="startup" if session is None else "resume"
    )
    settings = made.settings
    announced = None
    if session is None:  # a new session's first run: its line before the store loads (half a second)
        session = new_session()
        announced = run_line(session, run_id(session, 1))
        printer.say(announced)
    notices([said] if (said := unlisted()) else [])
    _durable(settings, RunView(printer, session, as_json, announced), spec, session)


def _changed_instructions(printer: Printer | Stream) -> None:
    """Each instruction file a run's model changed, still as it left it, in one line
    (`run.instructed`): on stderr, or as a `notice` event with --events and --control. It
    loads as it is; the record waits for a person's answer (the interactive agent asks)."""
    found = instructed.at_start(Path.cwd(), person=False)
    for line in (*found.lines, *((found.problem,) if found.problem else ())):
        if isinstance(printer, Stream):
            printer.show("notice", line)
        else:
            echo(f"eukhe: {line}", err=True)


def _controlled(
    made: SessionSetup, printer: Printer | Stream, session: str | None, unlisted: Callable[[], str | None]
) -> NoReturn:
    """`eukhe run --control`: the session's runs as requests on standard input ask for them
    (`cli/control.py`), through the store's half; the process ends with the last run's code."""
    made = dataclasses.replace(
        made, steers=True
    )  # a steer request reaches the run at work, at its next round end
    given = session is not None
    session = session or new_session()
    notices([said] if (said := unlisted()) else [])
    lazy.stored().control_here(made, RunView(printer, session), session, given)


def _durable(settings: JsonObject, view: RunView, spec: RunSpec | None, session: str | None) -> NoReturn:
    """Run `spec` (if any) and what dead processes left, through the store's half, and
    end the process with its exit code."""
    lazy.stored().run_here(settings, view, spec, session)
    raise AssertionError("not reached: run_here ends the process")


def _session_id(session: str | None) -> None:
    if session is not None and not valid_session(session):
        echo(f"eukhe: session id {session!r}: use letters, digits, '-', '_' or '.'", err=True)
        raise typer.Exit(2)


@app.command("acp")
def acp_command() -> None:
    """Serve an editor (Zed, JetBrains, Neovim) over the Agent Client Protocol on stdio."""
    lazy.editor().main()


@app.command("resume")
def resume() -> None:
    """Finish every run a dead eukhe process left in flight."""
    try:
        settings = settings_here()
    except SettingsError as e:
        echo(f"eukhe resume: {e}", err=True)
        raise typer.Exit(2) from None
    _durable(settings, RunView(_printer(False), None), None, None)


@app.command("sessions")
def sessions_command(
    as_json: Annotated[bool, flag("--json", help="One JSON object.")] = False,
) -> None:
    """List the sessions: id, started, runs, last prompt, outcome."""
    rows = lazy.stored().rows()
    if as_json:
        echo_json({"sessions": [
            {"id": r.session, "started": r.started.isoformat() if r.started else None, "runs": r.runs,
             "lastPrompt": r.last_prompt, "outcome": r.outcome} for r in rows]})  # fmt: skip
        return
    if not rows:
        echo("no sessions yet: eukhe run 'your task' starts one")
    for r in rows:
        started = r.started.strftime("%Y-%m-%d %H:%M") if r.started else "?"
        prompt = clipped(r.last_prompt, 60)
        echo(clipped(f"{r.session}  {started}  {counted(r.runs, 'run')}  {r.outcome}  {prompt}", width()))


session_app = typer.Typer(
    add_completion=False, no_args_is_help=True, help="One session.", rich_markup_mode="markdown"
)
app.add_typer(session_app, name="session")


@session_app.command("show")
def session_show(
    session: Annotated[str, typer.Argument(metavar="SESSION", help="The session id (see eukhe sessions).")],
    as_json: Annotated[bool, flag("--json", help="One JSON object.")] = False,
) -> None:
    """Print a session's transcript, run by run (a fork's: its parent's runs up to the fork first)."""
    found = lazy.stored().transcript(session)
    if not found.runs and not found.notes:
        echo(f"eukhe: no session {session!r} (eukhe sessions lists them)", err=True)
        raise typer.Exit(1)
    if as_json:
        echo_json({"session": session, "runs": [
            {"run": r.run, "outcome": r.outcome, "messages": [_message_json(m) for m in r.messages]}
            for r in found.runs], "rewinds": found.notes})  # fmt: skip
        return
    for note in found.notes:
        echo(f"── {note}")
    for r in found.runs:
        rid, msgs = r.run, r.messages
        echo(f"── run {rid} ({r.outcome})")
        for m in msgs:
            head = f"{m.role}{' (failed)' if m.is_error and m.role == 'assistant' else ''}"
            echo(f"{head}: {m.content}")
            for c in m.calls:
                echo(f"  → {c.name} {c.raw or json.dumps(c.arguments)}")


@session_app.command("fork")
def session_fork(
    session: Annotated[str, typer.Argument(metavar="SESSION", help="The session to fork (eukhe sessions).")],
    at: Annotated[
        int | None, typer.Option("--at", metavar="RUN", help="The fork's transcript ends with this run.")
    ] = None,
) -> None:
    """Start a new session from a run of another: its transcript up to that run, its own runs after."""
    if not valid_session(session):
        echo(f"eukhe session fork: session id {session!r}: use letters, digits, '-', '_' or '.'", err=True)
        raise typer.Exit(2)
    new, upto = lazy.stored().fork(session, at)
    echo(f"forked session {session} after its run {upto}: session {new}")
    kept_branches(session, 1, f"the fork shares them with session {session}; its reports name them")
    echo(f"· eukhe --session {new} opens it; eukhe run --session {new} PROMPT continues it")


def _message_json(m: Message) -> JsonObject:
    return {
        "role": m.role,
        "content": m.content,
        "calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in m.calls],
        "callId": m.call_id,
        "isError": m.is_error,
    }


@app.command("demo")
def demo(
    as_json: Annotated[bool, flag("--json", help="End with one JSON object on the last line.")] = False,
) -> None:
    """A misbehaving model on loopback HTTP, and a real task run as `eukhe run` runs one (the
    store, the home's owner, the permission gate, the sandbox) in a temporary home: every
    recovery shows as it happens, the run ends answered, and `eukhe sessions` lists it there."""
    script = lazy.demo()
    with script.staged(as_json) as staged:  # the faux model serves until the run has ended
        code = lazy.stored().ran_here(staged.settings, staged.view, staged.spec, staged.session)
    script.said_after(staged, as_json)
    leave(code)  # as `eukhe run` ends: DBOS's threads are not joined


app.add_typer(chat_app, name="chat")
owner_commands.register(app)
app.command("trust")(trust_command)
app.command("rewind")(rewind)
app.add_typer(store_app, name="store")
app.add_typer(mcp_app, name="mcp")
app.add_typer(plugin_app, name="plugin")
app.add_typer(hooks_app, name="hooks")

faux_app = typer.Typer(
    add_completion=False, no_args_is_help=True, help="The scripted faux model.", rich_markup_mode="markdown"
)
app.add_typer(faux_app, name="faux")


@faux_app.command("serve")
def faux_serve(
    script: Annotated[str, typer.Option("--script", help="The JSON script (see docs/faux.md).")],
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="Port on 127.0.0.1 (0: any free one).")
    ] = 0,
) -> None:
    """Serve the faux model on loopback: OpenAI Chat Completions, Responses and
    Anthropic Messages wire formats, until interrupted."""
    lazy.demo().serve(script, port)


def _printable(text: str) -> str:
    """A path or message as a terminal prints it: names that are not UTF-8 escaped."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


@app.command("settings")
def settings_command(
    as_json: Annotated[bool, flag("--json", help="Print one JSON object: settings, sources, files.")] = False,
) -> None:
    """Print the settings in effect and where each value came from: the default,
    ~/.eukhe/settings.json ($EUKHE_HOME) or .eukhe/settings.json here. Files are only read."""
    try:
        resolved = resolve(Path.cwd())
    except SettingsError as e:
        echo(f"eukhe settings: {e}", err=True)
        raise typer.Exit(2) from None
    if as_json:
        echo_json(resolved.json(), indent=2)
        return
    notices(resolved.notices)
    for line in resolved.lines():
        echo(_printable(line))


def _resources(kind: str, paths: list[str] | None, as_json: bool) -> None:
    """`eukhe skills` and `eukhe prompts`: what loaded, then every diagnostic."""
    try:
        if kind == "skills":
            snapshot = get_resource_snapshot(Path.cwd(), skill_paths=paths or ())
        else:
            snapshot = get_resource_snapshot(Path.cwd(), prompt_paths=paths or ())
    except SettingsError as e:
        echo(f"eukhe {kind}: {e}", err=True)
        raise typer.Exit(2) from None
    loaded = snapshot.skills if kind == "skills" else snapshot.prompts
    diagnostics = snapshot.diagnostics[kind]
    if as_json:
        out = {kind: [r.json() for r in loaded], "diagnostics": [d.json() for d in diagnostics]}
        echo_json(out, indent=2)
        return
    noun = "skill" if kind == "skills" else "prompt template"
    echo(f"{counted(len(loaded), noun)} loaded")
    for r in loaded:
        echo(_printable(f"  {r.name}: {r.description} ({r.path})"))
    if diagnostics:
        echo(counted(len(diagnostics), "diagnostic"))
        for d in diagnostics:
            echo(_printable(f"  {d.path}: {d.error}"))


@app.command("skills")
def skills_command(
    path: Annotated[
        list[str] | None,
        typer.Option("--skill", help="A skill file or folder besides the usual; repeatable."),
    ] = None,
    as_json: Annotated[bool, flag("--json", help='Print {"skills": [...], "diagnostics": [...]}.')] = False,
) -> None:
    """List the skills that load (~/.eukhe/skills, .eukhe/skills, the setting `skills`) and
    every skill file, folder or ignore rule that fails, with its path and error."""
    _resources("skills", path, as_json)


@app.command("prompts")
def prompts_command(
    path: Annotated[
        list[str] | None,
        typer.Option("--prompt", help="A template file or folder besides the usual; repeatable."),
    ] = None,
    as_json: Annotated[bool, flag("--json", help='Print {"prompts": [...], "diagnostics": [...]}.')] = False,
) -> None:
    """List the prompt templates that load (~/.eukhe/prompts, .eukhe/prompts, the setting
    `prompts`) and every template that fails, with its path and error."""
    _resources("prompts", path, as_json)


@functools.cache
def command() -> typer._click.Command:
    """The command line as click runs it, built once a process: the warm template builds it
    before it forks a run (typer's build of every command's parameters was about 5% of a
    short run's CPU)."""
    built: typer._click.Command = valueless_help(typer.main.get_command(app))
    return built


def main(argv: list[str] | None = None) -> None:
    command()(args=argv, prog_name="eukhe")


if __name__ == "__main__":
    main()
