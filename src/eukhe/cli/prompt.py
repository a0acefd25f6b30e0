"""Where `eukhe run` takes its prompt from: its argument, or standard input when the
argument is `-` or `--stdin` is given (a prompt is then not bound by the system's limit on
arguments; with both, standard input's text follows the argument). Otherwise standard input
is never read, whether or not it is a terminal: a script's inherited pipe that never closes
must not hold a run. What came on standard input is kept apart from what was typed: its `@path`
mentions attach only inside the project (`run.mentions.attach`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import BinaryIO

from eukhe.errors import Code, EukheError

PROMPT_MAX = 16 << 20
"""The longest prompt, in bytes: a run's spec crosses the owner's socket in one line of at most 16 MiB."""


class PromptError(EukheError, ValueError):
    """A prompt that cannot be run: says why and what to do."""

    code = Code.INPUT


def checked(text: str, where: str) -> str:
    """The prompt, if it is UTF-8 text (an argument's invalid bytes arrive as surrogates)
    with something in it: an empty prompt would run a turn the model can only guess at."""
    if not text.strip():
        raise PromptError("the prompt is empty")
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError as e:
        bad = ord(text[e.start])
        byte = f" 0x{bad - 0xDC00:02x}" if 0xDC80 <= bad <= 0xDCFF else ""
        raise PromptError(f"the prompt {where} is not valid UTF-8: byte{byte} at character {e.start}") from e
    if size > PROMPT_MAX:
        raise PromptError(
            f"the prompt {where} is {size:,} bytes; a prompt holds at most {PROMPT_MAX:,} (16 MiB)"
        )
    return text


@dataclass(frozen=True)
class Prompt:
    """The prompt `text`; what of it the person `typed` (the argument), and what was `piped`
    (standard input's text: a log, a file, anyone's words)."""

    text: str
    typed: str
    piped: str = ""


NO_PROMPT = (
    'no prompt: give it as an argument (eukhe run "task"), or `-` or --stdin to read it from standard input'
)


def prompt_of(arg: str | None, stdin: BinaryIO, from_stdin: bool = False) -> Prompt:
    """The prompt: `arg`; standard input's text for `-`, or with `--stdin` (`from_stdin`),
    after `arg` when there is one (`cat log | eukhe run --stdin "explain"`). Standard input
    is read only then: an inherited pipe that never closes never holds a run."""
    if arg == "-":
        arg, from_stdin = None, True
    if not from_stdin:
        if arg is None:
            raise PromptError(NO_PROMPT)
        return Prompt(checked(arg, "argument"), arg)
    if arg is not None:
        checked(arg, "argument")
    raw = stdin.read(PROMPT_MAX + 1)
    if len(raw) > PROMPT_MAX:
        raise PromptError(
            f"the prompt on standard input is over {PROMPT_MAX:,} bytes (16 MiB), the most a prompt holds"
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise PromptError(
            f"the prompt on standard input is not valid UTF-8: byte 0x{raw[e.start]:02x} at byte {e.start}"
        ) from e
    if arg is None:
        if not text.strip():
            raise PromptError("the prompt on standard input is empty")
        return Prompt(text, "", text)
    if not text.strip():  # an empty log after the argument: the argument alone
        return Prompt(arg, arg)
    return Prompt(checked(f"{arg}\n\n{text}", "argument with standard input after it"), arg, text)
