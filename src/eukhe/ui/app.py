"""`eukhe` with no arguments: the interactive agent on the current project.

The terminal keeps its scrollback: finished lines (the answer, as it streams, a
line at a time; each tool call and its result; notes, retries, waits that ended)
print above a live area at the bottom, which holds the line being streamed, the
subagents, the queued messages, the status line (what the run waits for now and
its exit, its budgets) and the prompt. The prompt is editable at once; the store
opens behind it (`AgentSession.boot`).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import shutil
import sys
import time
from collections.abc import Callable, Coroutine, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from prompt_toolkit.application import Application, run_in_terminal
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.input.typeahead import store_typeahead
from prompt_toolkit.input.vt100_parser import Vt100Parser
from prompt_toolkit.key_binding import KeyBindings, KeyPress, KeyPressEvent
from prompt_toolkit.layout import ConditionalContainer, FloatContainer, HSplit, Layout, Window
from prompt_toolkit.layout.containers import Float
from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
from prompt_toolkit.layout.dimension import Dimension
from prompt_toolkit.layout.menus import CompletionsMenu
from prompt_toolkit.styles import Style

from eukhe.display.lines import marked, printable
from eukhe.display.view import Line, View
from eukhe.home import HomeError, home, open_home, private_file
from eukhe.process_exit import leave
from eukhe.rules.permission import Answer
from eukhe.settings import SettingsError
from eukhe.settings.permissions import choice
from eukhe.terminal import neutralized
from eukhe.ui import PROMPT, commands
from eukhe.ui.instructed import ask_changed
from eukhe.ui.paths import Files
from eukhe.ui.session import AgentSession, Options
from eukhe.ui.trust import ask_once
from eukhe.ui.typeahead import TypeAhead

if TYPE_CHECKING:  # rich loads with the first lines printed, behind the prompt
    from rich.console import Console

EXIT_PRESS = 3.0
"""Seconds within which a second Ctrl-C at an idle, empty prompt exits."""

FLUSH = 0.05
"""Seconds between two flushes of finished lines to the scrollback."""

USAGE = """usage: eukhe [--model provider/model] [--base-url URL] [--api API] [--session ID]
             [--sandbox read-only|workspace-write|danger-full-access] [--approval untrusted|on-request|never]
             [--permission-mode plan|default] [--effort low|medium|high|off] [-c|--continue]

Opens the interactive agent on the current project. `eukhe --help` lists the commands
(`eukhe run "task"` runs one turn and exits)."""

STYLE = Style.from_dict(
    {
        "status": "reverse",
        "status.working": "reverse bold",
        "queued": "ansicyan",
        "child": "ansicyan",
        "todo": "ansicyan",
        "note": "ansiyellow",
        "prompt": "bold",
        "ask": "ansiyellow bold",
        "ask.keys": "ansiyellow",
        "ask.add": "ansigreen",
        "ask.del": "ansired",
    }
)


def parse(argv: Sequence[str]) -> Options | str:
    """The command line of the interactive agent; a string says what is wrong."""
    o = Options()
    flags = {
        "--model": "model",
        "--base-url": "base_url",
        "--api": "api",
        "--session": "session",
        "--effort": "effort",
    }
    # values checked here, as `eukhe run` does
    checked = {"--sandbox": "sandbox", "--approval": "approval", "--permission-mode": "permission_mode"}
    flags |= checked
    args = list(argv)
    while args:
        a = args.pop(0)
        if a in ("-c", "--continue"):  # no value: this folder's latest session
            o.latest = True
            continue
        name, eq, value = a.partition("=")
        if name not in flags:
            return f"eukhe: unknown option {a!r}\n{USAGE}"
        if not eq:
            if not args:
                return f"eukhe: {name} needs a value\n{USAGE}"
            value = args.pop(0)
        if name in checked:
            try:
                choice(name, value)
            except SettingsError as e:
                return f"eukhe: {e}\n{USAGE}"
        setattr(o, flags[name], value)
    return o


def _completing(buffer: Buffer) -> bool:
    """Whether to complete as one types: a command, or an `@` mention before the cursor."""
    word = buffer.document.text_before_cursor.rpartition(" ")[2].rpartition("\n")[2]
    return buffer.text.startswith("/") or word.startswith("@")


class _Complete(Completer):
    def __init__(self, agent: Agent) -> None:
        self.agent = agent

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        text = document.text_before_cursor
        word = text.rpartition(" ")[2].rpartition("\n")[2]
        if word.startswith("@"):  # a file to attach: the project's paths
            for path in self.agent.files.complete(word[1:]):
                yield Completion("@" + path, start_position=-len(word), display=path)
            return
        if "\n" in text:
            return
        for done, meta in commands.completions(text, self.agent.session, self.agent.session.known):
            yield Completion(done, start_position=-len(text), display=done, display_meta=meta)


class Agent:
    def __init__(self, options: Options, home: Path, history: History | None = None) -> None:
        self.view = View()
        self.home = home
        self.session = AgentSession(self.view, options, self._post)
        self.files = Files(self.session.cwd)  # for `@` completion
        self.session.restore = self._restore
        self.session.approvals.changed = self._asked
        self.reason = Buffer(multiline=False)  # a no's reason, while the ask on screen takes one
        self.loop: asyncio.AbstractEventLoop | None = None
        self.last_interrupt = 0.0
        self._console: tuple[Console, io.StringIO] | None = None  # rich, and the text it renders into
        self._tasks: set[asyncio.Task[None]] = set()
        self.buffer = Buffer(
            multiline=True,
            history=history or _history(home),
            completer=_Complete(self),
            complete_while_typing=Condition(lambda: _completing(self.buffer)),
        )
        self.app: Application[int] = Application(
            layout=self._layout(),
            key_bindings=self._keys(),
            style=STYLE,
            full_screen=False,
            refresh_interval=0.5,  # the status line's countdowns
            erase_when_done=False,
        )

    # ---------------------------------------------------------------- layout

    def _layout(self) -> Layout:
        view = self.view

        def partial() -> StyleAndTextTuples:
            return [("", printable(view.partial))]

        def children() -> StyleAndTextTuples:
            return [("class:child", "\n".join(view.children_lines()))]

        def todo() -> StyleAndTextTuples:  # a row an item, each within the terminal's width
            return [("class:todo", "\n".join(view.todo_lines(self.app.output.get_size().columns)))]

        def queued() -> StyleAndTextTuples:
            lines = [f"queued {q.kind}: {q.text.splitlines()[0] if q.text else ''}" for q in view.queued]
            return [("class:queued", "\n".join(lines))]

        def status() -> StyleAndTextTuples:
            style = "class:status.working" if view.run else "class:status"
            text = view.status()
            if view.run is None:
                opening = "" if self.session.ready.is_set() else " · opening the store…"
                spent = f" · {view.spent_line()}" if view.spent_line() else ""
                text = f"ready · session {self.session.id or '…'}{opening}{spent} · /help"
            return [(style, f" {text}{self.session.jobs_text()}{view.mode_text()} ")]

        def note() -> StyleAndTextTuples:
            return [("class:note", view.note)]

        def question() -> StyleAndTextTuples:
            out: StyleAndTextTuples = []
            for style, text in self.session.approvals.lines():
                out += [("", "\n"), (style, text)] if out else [(style, text)]
            return out

        def reason_mark(line: int, wrap: int) -> StyleAndTextTuples:
            return [("class:ask", "reason › " if line == 0 and wrap == 0 else "  ")]

        def prompt_mark(line: int, wrap: int) -> StyleAndTextTuples:
            return [("class:prompt", PROMPT if line == 0 and wrap == 0 else "  ")]

        body = HSplit(
            [
                ConditionalContainer(
                    Window(FormattedTextControl(partial), wrap_lines=True, dont_extend_height=True),
                    Condition(lambda: bool(view.partial)),
                ),
                ConditionalContainer(
                    Window(FormattedTextControl(children), dont_extend_height=True),
                    Condition(lambda: bool(view.children)),
                ),
                ConditionalContainer(
                    Window(FormattedTextControl(queued), dont_extend_height=True),
                    Condition(lambda: bool(view.queued)),
                ),
                ConditionalContainer(  # the session's task list, above the prompt: TODO_SHOWN rows at most
                    Window(FormattedTextControl(todo), wrap_lines=False, dont_extend_height=True),
                    Condition(lambda: bool(view.todo)),
                ),
                ConditionalContainer(
                    Window(FormattedTextControl(question), wrap_lines=True, dont_extend_height=True),
                    Condition(lambda: self.session.approvals.current is not None),
                ),
                ConditionalContainer(
                    Window(BufferControl(self.reason), height=1, get_line_prefix=reason_mark),
                    Condition(lambda: self.session.approvals.reasoning),
                ),
                Window(FormattedTextControl(status), wrap_lines=True, dont_extend_height=True),
                Window(
                    BufferControl(self.buffer),
                    height=Dimension(min=1, max=12),
                    wrap_lines=True,
                    get_line_prefix=prompt_mark,
                    dont_extend_height=True,
                ),
                ConditionalContainer(
                    Window(FormattedTextControl(note), height=1),
                    Condition(lambda: bool(view.note)),
                ),
            ]
        )
        menu = Float(xcursor=True, ycursor=True, content=CompletionsMenu(max_height=8, scroll_offset=1))
        return Layout(FloatContainer(body, floats=[menu]), focused_element=self.buffer)

    # ---------------------------------------------------------------- keys

    def _keys(self) -> KeyBindings:
        kb = KeyBindings()
        session = self.session

        @kb.add("enter")
        def _(e: KeyPressEvent) -> None:
            if self.buffer.complete_state is not None and self.buffer.complete_state.current_completion:
                before = self.buffer.text
                self.buffer.apply_completion(self.buffer.complete_state.current_completion)
                if self.buffer.text != before:  # Enter took the completion; one already taken (Tab) sends
                    return
            self._send(after=False)

        @kb.add("escape", "enter")
        def _(e: KeyPressEvent) -> None:
            if session.working and self.buffer.text.strip():
                self._send(after=True)
            else:
                self.buffer.insert_text("\n")

        @kb.add("c-j")
        def _(e: KeyPressEvent) -> None:
            self.buffer.insert_text("\n")

        @kb.add("c-c")
        def _(e: KeyPressEvent) -> None:
            if session.working:
                self.view.note = "aborting the run…"
                session.abort()
                return
            if self.buffer.text:
                self.buffer.reset()
                return
            now = time.monotonic()
            if now - self.last_interrupt <= EXIT_PRESS:
                self.app.exit(result=0)
                return
            self.last_interrupt = now
            self.view.note = "Ctrl-C again to exit"

        @kb.add("c-d")
        def _(e: KeyPressEvent) -> None:
            if not self.buffer.text and not session.working:
                self.app.exit(result=0)
            else:
                self.buffer.delete()

        @kb.add("c-o")
        def _(e: KeyPressEvent) -> None:
            self._command("/open")

        # Claude Code's key: plan mode on or off (never a wider mode); in a completion menu, back
        @kb.add("s-tab", filter=Condition(lambda: self.buffer.complete_state is None))
        def _(e: KeyPressEvent) -> None:
            session.plan_mode()

        self._ask_keys(kb)
        return kb

    def _ask_keys(self, kb: KeyBindings) -> None:
        """While an ask is on screen its keys answer it (added last: over the prompt's own)."""
        approvals = self.session.approvals
        asking = Condition(lambda: approvals.current is not None and not approvals.reasoning)
        reasoning = Condition(lambda: approvals.current is not None and approvals.reasoning)
        for key, answer in (("y", Answer.ONCE), ("a", Answer.SESSION), ("p", Answer.PROJECT)):

            @kb.add(key, filter=asking)
            def _(e: KeyPressEvent, answer: Answer = answer) -> None:
                approvals.answer(answer)

        @kb.add("n", filter=asking)
        def _(e: KeyPressEvent) -> None:
            self.reason.reset()
            approvals.reason()

        @kb.add("escape", filter=asking | reasoning)
        def _(e: KeyPressEvent) -> None:
            approvals.answer(Answer.NO)

        @kb.add("enter", filter=reasoning)
        def _(e: KeyPressEvent) -> None:
            approvals.answer(Answer.NO, self.reason.text.strip())

        @kb.add("escape", "enter", filter=reasoning)
        @kb.add("c-j", filter=reasoning)
        def _(e: KeyPressEvent) -> None:
            pass  # the reason is one line: not a newline, nor a follow-up

    def _asked(self) -> None:
        """The ask on screen changed: the reason line has the keys while it is open."""
        approvals = self.session.approvals
        layout = self.app.layout
        if approvals.reasoning and not layout.has_focus(self.reason):
            layout.focus(self.reason)
        elif not approvals.reasoning and not layout.has_focus(self.buffer):
            self.reason.reset()
            layout.focus(self.buffer)
        self.app.invalidate()

    def _send(self, after: bool) -> None:
        text = self.buffer.text
        if not text.strip():
            return
        self.buffer.append_to_history()
        self.buffer.reset()
        self.view.note = ""
        self.last_interrupt = 0.0
        if self._command(text):
            return
        if self.session.working and self.session.aborting:
            self.session.hold(text)
            return
        if self.session.working:
            self._spawn(self.session.steer(text, after=after))
            return
        self.view.lines.append(Line(f"{PROMPT}{text}", "bold"))
        self.session.ask(text)

    def _command(self, text: str) -> bool:
        """Run the slash command `text` names; whether it named one (or a wrong one)."""
        cmd, why = commands.command_of(text.strip(), self.session)
        if cmd is None and not why:
            return False
        self.view.lines.append(Line(f"{PROMPT}{text}", "bold"))
        if cmd is None:
            self.view.note = why
            return True
        if cmd.name == "quit":
            self.app.exit(result=0)
            return True
        self._spawn(self._run_command(cmd, text.strip()[len(cmd.name) + 1 :].strip()))
        return True

    def _spawn(self, work: Coroutine[object, object, None]) -> None:
        """A task of the app's, kept until it ends."""
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run_command(self, cmd: commands.Command, arg: str) -> None:
        if cmd.name in ("sessions", "session", "memory", "zoom"):
            await self.session.ready.wait()
        await commands.run_command(cmd, self.session, arg)

    def _restore(self, text: str) -> None:
        """A queued message that no run took goes back into the prompt."""
        joined = f"{self.buffer.text}\n{text}" if self.buffer.text else text
        self.buffer.set_document(Document(joined, len(joined)))

    # ---------------------------------------------------------------- the scrollback

    def _post(self, work: Callable[[], object]) -> None:
        loop = self.loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop has closed: the app is gone
                loop.call_soon_threadsafe(work)

    async def _flusher(self) -> None:
        """Finished lines to the scrollback, a batch at a time, above the live area."""
        while True:
            await asyncio.sleep(FLUSH)
            lines = self.view.take()
            if lines:
                text = self._render(lines)
                await run_in_terminal(lambda text=text: _write(text))  # type: ignore[misc]
            self.app.invalidate()

    def _render(self, lines: list[Line]) -> str:
        """Lines as the terminal shows them, rendered by rich (no markup is read)."""
        from rich.console import Console
        from rich.text import Text

        width = shutil.get_terminal_size((100, 24)).columns
        if self._console is None or self._console[0].width != width:
            out = io.StringIO()
            console = Console(file=out, force_terminal=True, width=width, highlight=False, soft_wrap=True)
            self._console = (console, out)
        console, out = self._console
        out.seek(0)
        out.truncate()
        for ln in lines:
            console.print(Text(ln.text, style=ln.style))
        return out.getvalue()

    # ---------------------------------------------------------------- running

    async def run(self, early: bool = False, held: TypeAhead | None = None) -> int:
        """The app until it exits; its code. `early`: the command drew the prompt's mark
        before its imports: that line is cleared, and the app draws its own. `held`: the
        terminal the command held since, whose keys the app takes first, in the order
        typed (an Enter among them sends), and gives back as it found it at the end."""
        self.loop = asyncio.get_running_loop()
        if early:
            _write("\r\x1b[2K")
        if held is not None:  # the app reads them before the terminal's next ones
            store_typeahead(self.app.input, _keys(held.take()))
        booting: list[asyncio.Task[None]] = []

        def drawn(_: object) -> None:
            """The prompt is on the screen: now the store opens behind it (its imports in
            a thread would slow the first drawing)."""
            if not booting:
                booting.append(asyncio.ensure_future(self.session.boot()))
                self._spawn(self._flusher())

        self.app.after_render += drawn
        try:
            code = await self.app.run_async()
        finally:
            if held is not None:  # before anything that may end the process (`AgentSession.close`)
                held.restore()
            for task in self._tasks:
                task.cancel()
        rest = self.view.take()  # what was still to print
        if rest:
            _write(self._render(rest))
        if self.session.ran:  # the session had a run: how to come back to it
            again = f"eukhe --session {self.session.id} opens this session again"
            _write(self._render([Line(*marked("say", again))]))
        if booting and not booting[0].done():
            booting[0].cancel()
            self.session.ready.set()
        await self.session.close()
        return code or 0


def _keys(typed: bytes) -> list[KeyPress]:
    """Bytes a terminal sent as the keys the prompt reads from them (as its own reader does)."""
    keys: list[KeyPress] = []
    parser = Vt100Parser(keys.append)
    parser.feed(typed.decode("utf-8", "surrogateescape"))
    parser.flush()  # nothing follows them: a lone Escape is one
    return keys


def _write(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def _history(home: Path) -> History:
    """The prompt's history across sessions (a home that cannot hold it: this process only)."""
    path = commands.history_path(home)
    try:
        open_home(home)
        private_file(path)  # every prompt typed: the user's alone (FileHistory would make it 0644)
        return FileHistory(str(path))
    except (OSError, HomeError):
        return InMemoryHistory()


def main(argv: Sequence[str], held: TypeAhead | None = None) -> None:
    """The agent on this terminal; `held`: the command drew the prompt's mark and holds
    the terminal since (`cli.entry`)."""
    parsed = parse(argv)
    if isinstance(parsed, str):
        print(parsed, file=sys.stderr)
        raise SystemExit(2)
    if not sys.stdin.isatty() or not sys.stdout.isatty():
        print(
            'eukhe: the interactive agent needs a terminal; eukhe run "task" runs one turn', file=sys.stderr
        )
        raise SystemExit(2)
    said: list[str] = []
    early = held is not None

    def say(line: str) -> None:
        if early and not said:  # below the prompt's mark, which the agent then draws again
            print(flush=True)
        said.append(line)
        print(neutralized(line), flush=True)

    read = held.ask if held is not None else input  # a question takes what is typed once it shows
    ask_once(Path.cwd(), read, say)  # the folder's trust, asked once (its settings hold keys that need it)
    parsed.withheld = ask_changed(Path.cwd(), read, say)  # instruction files a run's model changed
    agent = Agent(parsed, home())
    loop = asyncio.new_event_loop()
    try:
        code = loop.run_until_complete(agent.run(early and not said, held))
    except KeyboardInterrupt:
        code = 130
    finally:
        _drop(loop)
        if held is not None:  # given back already, unless the app never ran
            held.restore()
    leave(code)  # DBOS's threads are not waited for: the owner takes up what is left


def _drop(loop: asyncio.AbstractEventLoop) -> None:
    """Tasks left behind get a moment to end, and are then left: the exit never hangs."""
    pending = asyncio.all_tasks(loop)
    for task in pending:
        task.cancel()
    if pending:
        with contextlib.suppress(Exception):
            loop.run_until_complete(asyncio.wait(pending, timeout=1.0))
    loop.close()
