"""`@path` in a prompt: the file attached after the prompt, numbered and cut as `read` shows it,
so the model has it without a call. A mention that names no file (an address, a decorator, a
handle) is left as it is; one that names a file that cannot be attached (binary, too large, a
folder) is attached as why not, so the model and the person both see it.

An image (`@shot.png`, or a pasted path to one: `run.images`) is attached as an image, its mark
`[image: name, WxH]` after the prompt; one that cannot be is said, and left out.

Each file is opened as `read` opens it, and decided on by where it really is (`ownfiles`,
within `images.bound_for`): a mention written inside the project never follows a link out of
it (a stranger's `notes.txt -> ~/.ssh/id_rsa`); one the person writes outside it is attached
from where it is, but nothing is ever attached from /proc, /sys, /dev, a process's folder, a
secret place or eukhe's home. The model sees why a file was not attached, never where its
link led; the person sees both.

Only what the person typed attaches from outside the project. Text they pass on without typing
it (piped input, an editor's resource, a file's own text) may hold anyone's `@/other/prod.env`:
its mentions attach only when written inside the project, where `read` needs no ask; one
outside is left in the text, unattached, and both the model and the person are told why (the
model's `read` of it asks, as any read outside the project does). An attached file's own text
is never searched for more.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from eukhe.ai.image import Image, ImageError, image_of
from eukhe.ownfiles import Refused, decide
from eukhe.rules.confine import Act
from eukhe.run.images import bound_for, is_image_path, pasted, read_image, written_inside
from eukhe.tools.base import Limits
from eukhe.tools.files import resolve
from eukhe.tools.read import read_whole

__all__ = ["MAX_MENTIONS", "Attached", "attach", "mentioned", "with_images"]

MENTION = re.compile(r"(?<![\w@/])@([^\s@]+)")
"""`@` at a word's start, then a path: no space (a word before the `@` makes it an address)."""

MAX_MENTIONS = 10
"""Files one prompt attaches at most; the rest are said, not attached."""

TRAILING = ".,;:!?)]}'\""
"""What ends a sentence after a path, taken off when the path with it names no file."""

UNTYPED = (
    "not attached: the person did not type this mention (it came in text they passed on) and it "
    "is outside the project; the read tool asks them before reading it"
)
"""What the model is told of a mention outside the project in text the person did not type."""

UNTYPED_SAID = (
    "not attached: you did not type it (it came in piped input or an editor's resource) and it is "
    "outside the project; the model's read of it asks you, as any read outside the project does"
)
"""What the person is told of it."""


@dataclass(frozen=True)
class Attached:
    """The prompt with its files after it, and one line a file for the person; the images it
    attaches, with their bytes by SHA-256."""

    prompt: str
    said: tuple[str, ...] = ()
    images: tuple[Image, ...] = ()
    image_data: Mapping[str, bytes] = field(default_factory=dict)


def mentioned(prompt: str, cwd: Path) -> list[str]:
    """The paths the prompt's `@` mentions name that exist, in order, each once."""
    out: list[str] = []
    for m in MENTION.finditer(prompt):
        raw = m.group(1)
        for shown in (raw, raw.rstrip(TRAILING)):
            if shown and resolve(shown, cwd).exists():
                if shown not in out:
                    out.append(shown)
                break
    return out


def attach(
    prompt: str, cwd: Path, limits: Limits | None = None, typed: str | None = None, given: str = ""
) -> Attached:
    """The prompt with each mentioned file after it, in a `<file path=...>` block. `typed`: what
    the person typed (None: the whole prompt), when a template or skill expanded it or it came
    with text they did not type: its mentions attach wherever they are. `given`: the text they
    passed on without typing it (piped input, an editor's resource): its mentions attach only
    when written inside the project; one outside is said, not attached. Any other mention (a
    template's own) attaches nothing: a stranger's template must not send `@~/.ssh/id_rsa`."""
    own = mentioned(prompt if typed is None else typed, cwd)
    passed = mentioned(given, cwd) if given else []
    names: list[str] = []
    outside: list[str] = []  # the mentions the person did not type, outside the project
    for n in mentioned(prompt, cwd):
        if n in own or (n in passed and written_inside(n, cwd)):
            names.append(n)
        elif n in passed:
            outside.append(n)
    names += [p for p in pasted(prompt if typed is None else typed, cwd) if p not in names]
    names += [p for p in pasted(given, cwd) if p not in names and written_inside(p, cwd)]
    if not names and not outside:
        return Attached(prompt)
    lim = limits or Limits()
    blocks: list[str] = []
    said: list[str] = []
    images: list[Image] = []
    data: dict[str, bytes] = {}
    for shown in names[:MAX_MENTIONS]:
        if is_image_path(shown):
            try:
                image, picture = read_image(shown, cwd)
            except ImageError as e:
                said.append(f"not attached: {e}")
                continue
            _add(image, picture, images, data, blocks)
            said.append(f"{shown} attached (an image, {image.width}x{image.height})")
            continue
        refused: list[Refused] = []
        got = read_whole(shown, cwd, lim, _boundary(shown, cwd, refused))
        if refused:  # the model sees why, not where the link led
            blocks.append(f'<file path="{shown}" attached="no">{refused[-1].why}</file>')
            said.append(f"@{shown} not attached: {refused[-1]}")
        elif got.is_error:
            blocks.append(f'<file path="{shown}" attached="no">{got.content}</file>')
            said.append(f"@{shown} not attached: {got.content}")
        else:
            blocks.append(f'<file path="{shown}">\n{got.content}\n</file>')
            said.append(f"@{shown} attached ({len(got.content):,} characters)")
    for shown in outside:  # left in the text; not read, so nothing of it is said but the why
        blocks.append(f'<file path="{shown}" attached="no">{UNTYPED}</file>')
        said.append(f"@{shown} {UNTYPED_SAID}")
    if len(names) > MAX_MENTIONS:
        rest = ", ".join(names[MAX_MENTIONS:])
        said.append(f"only {MAX_MENTIONS} files are attached to one prompt; not attached: {rest}")
    text = prompt + "\n\n" + "\n\n".join(blocks) if blocks else prompt
    return Attached(text, tuple(said), tuple(images), data)


def _boundary(shown: str, cwd: Path, refused: list[Refused]) -> Callable[[Act, str], str | None]:
    """`read`'s boundary for the mention `shown`: the object it opened, by its real path,
    within `images.bound_for`; a refusal is kept in `refused`, for its words."""
    path, bound = resolve(shown, cwd), bound_for(shown, cwd)

    def check(act: Act, real: str) -> str | None:
        try:
            decide(path, real, bound)
        except Refused as e:
            refused.append(e)
            return e.why
        return None

    return check


def with_images(
    a: Attached, paths: list[str], cwd: Path, pictures: Sequence[tuple[str, bytes]] = ()
) -> Attached:
    """`a` with the images `eukhe run --image` names, and the `pictures` given as bytes (an
    editor's prompt carries them inline), each with its name: one that cannot be read or
    attached is an ImageError (the person asked for it, so the run does not start without it)."""
    images, data = list(a.images), dict(a.image_data)
    marks: list[str] = []
    for shown in paths:
        image, got = read_image(shown, cwd)
        _add(image, got, images, data, marks)
    for name, picture in pictures:
        _add(image_of(picture, name), picture, images, data, marks)
    prompt = a.prompt + "\n\n" + "\n".join(marks) if marks else a.prompt
    return Attached(prompt, a.said, tuple(images), data)


def _add(image: Image, picture: bytes, images: list[Image], data: dict[str, bytes], marks: list[str]) -> None:
    """An image into what a prompt attaches: the same picture under two names goes once."""
    if image.sha256 not in data:
        images.append(image)
        marks.append(image.shown)
    data[image.sha256] = picture
