"""A process of another user listening where the owner's socket is: the client asks
the kernel who listens (SO_PEERCRED) and refuses it before it sends a byte, so no
request, and no API key, reaches it."""

from __future__ import annotations

import asyncio
import os
import socket
from pathlib import Path

import pytest

from eukhe.client import handoff, protocol
from eukhe.client.client import Client, OwnerError
from eukhe.home import open_home

OTHER = 65534  # nobody


def listen_as_another_user(path: Path) -> tuple[int, int]:
    """A child process that listens on `path` as uid OTHER (bound as root, then
    setuid: SO_PEERCRED names the uid of the process that called listen), accepts
    one connection and writes how many bytes it received to the pipe it returns."""
    ready_r, ready_w = os.pipe()
    got_r, got_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the other user's process
        try:
            os.close(ready_r)
            os.close(got_r)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(str(path))
            os.setgid(OTHER)
            os.setuid(OTHER)
            s.listen(1)
            os.write(ready_w, b"1")
            s.settimeout(20)
            conn, _ = s.accept()
            conn.settimeout(2)
            heard = b""
            try:
                while chunk := conn.recv(1 << 16):
                    heard += chunk
            except TimeoutError:
                pass
            os.write(got_w, str(len(heard)).encode())
        finally:
            os._exit(0)
    os.close(ready_w)
    os.close(got_w)
    assert os.read(ready_r, 1) == b"1"
    os.close(ready_r)
    return pid, got_r


def test_a_listener_of_another_uid_is_refused_before_anything_is_sent(tmp_path: Path) -> None:
    home = open_home(tmp_path / "home")
    path = protocol.socket_path(home)
    pid, got = listen_as_another_user(path)
    try:

        async def go() -> None:
            with pytest.raises(OwnerError, match=f"listening on {path} .* runs as uid {OTHER}, not as you"):
                await asyncio.wait_for(Client.connect(home, spawn=False), 10)

        asyncio.run(go())
        heard = os.read(got, 64)
    finally:
        os.waitpid(pid, 0)
        os.close(got)
    assert heard == b"0"  # not the hello, not a byte


def test_a_warm_template_of_another_uid_is_sent_nothing_and_the_run_goes_on_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same at the warm template's socket: the hand-off would send the user's whole
    environment (API keys among it) and three descriptors; it connects, asks the kernel
    who listens, sends nothing, and returns: the run is this process's."""
    home = open_home(tmp_path / "home")
    monkeypatch.setenv("EUKHE_HOME", str(home))
    monkeypatch.setenv("EUKHE_WARM", "1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-sent")
    pid, got = listen_as_another_user(protocol.warm_path(home))

    def no_owner(_where: Path) -> None:
        # the home's own owner would start a template that displaces the stranger's socket and
        # takes the run, ending this process with it: not this test's matter
        raise OSError("no owner in this test")

    monkeypatch.setattr(handoff, "spawn_owner", no_owner)
    try:
        handoff.hand_off(["run", "hi"])  # returns: nothing was handed over
        heard = os.read(got, 64)
    finally:
        os.waitpid(pid, 0)
        os.close(got)
    assert heard == b"0"
