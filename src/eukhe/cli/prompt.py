"""Where `eukhe run` takes its prompt from: its argument, or standard input when the
argument is `-` or missing while standard input is not a terminal (a prompt is then
not bound by the system's limit on arguments). Otherwise standard input is never read."""

from __future__ import annotations

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


def prompt_of(arg: str | None, stdin: BinaryIO, is_terminal: bool) -> str:
    """The prompt: `arg`, or standard input's text for `-` or a missing argument off a terminal."""
    if arg is not None and arg != "-":
        return checked(arg, "argument")
    if arg is None and is_terminal:
        raise PromptError(
            'no prompt: give it as an argument (eukhe run "task"), or `-` to read it from standard input'
        )
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
    if not text.strip():
        raise PromptError("the prompt on standard input is empty")
    return text
