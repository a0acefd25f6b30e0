"""A run's `Sandbox`, made from its settings (`sandbox.mode`, `sandbox.writable`, `sandbox.network`)
when the run starts, and passed down to its tools (`Context.sandbox`) and its kernel: never read
from anything global while a command starts.

The session's `/tmp` is a folder of the home, `<home>/sandbox/<session hash>/tmp` (0700): one a
session, so what a call leaves in /tmp is there for the session's next call and next run, and
never in the host's /tmp, which every user shares.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from eukhe.home import HomeError, private_dir
from eukhe.json_types import JsonMapping
from eukhe.rules.confine import SECRET_PLACES, SYSTEM_SECRETS
from eukhe.sandbox.bwrap import WORKSPACE_WRITE, Sandbox, why_not
from eukhe.settings.keys import SANDBOX_MODES
from eukhe.settings.load import SettingsError, value

__all__ = ["for_run", "session_tmp"]


def session_tmp(home: Path, session: str) -> Path:
    """The host folder a session's sandboxes see as /tmp (made by `for_run`)."""
    name = hashlib.sha256(session.encode("utf-8", "surrogatepass")).hexdigest()[:20]
    return home / "sandbox" / name / "tmp"


def _writable(settings: JsonMapping, project: Path, user_home: Path) -> tuple[Path, ...]:
    paths = value(settings, "sandbox.writable", list, [])
    out = []
    for p in paths:
        if not isinstance(p, str) or not p.strip():
            raise SettingsError(f"setting sandbox.writable={paths!r}: expected a list of paths")
        if p == "~":
            full = user_home
        elif p.startswith("~/"):
            full = user_home / p[2:]
        else:
            full = Path(p)
        out.append(full if full.is_absolute() else project / full)
    return tuple(out)


def for_run(
    settings: JsonMapping,
    project: Path,
    home: Path,
    session: str,
    *,
    user_home: Path,
    temp: Path,
    flag: str | None = None,
    probe: Callable[[], str | None] = why_not,
    watched: tuple[Path, ...] = (),
) -> Sandbox:
    """The sandbox of a run of `session` in `project`: the mode of `flag` (`--sandbox`, the user's own:
    over the settings; None when not given), else the settings'; their writable paths and network;
    hidden: the eukhe `home`, the `user_home`, and eukhe's folders in the system `temp` dir (the owner's
    fallback socket is one: `eukhe.client.protocol.socket_path`). `probe` tells why bubblewrap cannot
    run here (blocking: call this off the event loop). `watched`: the folders the run's settings and
    git name for it to load (`run.registry`); masked: the user's secret places and the system's.
    SettingsError for a malformed setting; a session /tmp that cannot be made makes the sandbox
    unavailable, saying so."""
    mode = flag if flag is not None else value(settings, "sandbox.mode", str, WORKSPACE_WRITE)
    if mode not in SANDBOX_MODES:
        where = "--sandbox" if flag is not None else "setting sandbox.mode"
        raise SettingsError(f"{where}={mode!r}: expected one of {', '.join(SANDBOX_MODES)}")
    writable = _writable(settings, project, user_home)
    network = value(settings, "sandbox.network", bool, False)
    tmp = session_tmp(home, session)
    unavailable = probe()
    if unavailable is None:
        try:
            private_dir(tmp)
        except HomeError as e:
            unavailable = f"the session's /tmp folder cannot be made: {e}"
    return Sandbox(
        mode,
        project,
        tmp,
        writable=writable,
        network=network,
        hidden=(home, user_home),
        temp=temp,
        unavailable=unavailable,
        watched=watched,
        masked=(*(user_home / s for s in SECRET_PLACES), *map(Path, SYSTEM_SECRETS)),
    )
