"""The owner's socket, when the home's path is too long for one, lives in a folder of
the temp dir, which every user may write: another user who made that folder first
(or a symlink there, or a folder anyone may enter) would receive the client's
requests, API keys among them. The client refuses it before it connects, and the
owner refuses to listen there."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from eukhe.client import protocol
from eukhe.client.client import Client, OwnerError
from eukhe.owner.server import Owner

OTHER = 65534  # nobody


@pytest.fixture
def long_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A home whose socket does not fit in it, and a temp dir of the test's own, short
    (pytest's own folders, under two workers, are too long for a socket's path)."""
    tmp = Path(tempfile.mkdtemp(prefix="eukhe-t-", dir="/tmp"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    home = tmp_path / ("h" * protocol.SUN_PATH)
    assert protocol.socket_path(home).parent == tmp / f"eukhe-{os.getuid()}"
    try:
        yield home
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def premade(home: Path, how: str) -> tuple[Path, str]:
    """The socket's folder as an attacker leaves it; what eukhe must say of it."""
    folder = protocol.socket_path(home).parent
    if how == "another user's":
        folder.mkdir(mode=0o700)
        os.chown(folder, OTHER, OTHER)
        return folder, f"belongs to uid {OTHER}, not to you"
    if how == "a symlink":
        theirs = folder.parent / "theirs"
        theirs.mkdir(mode=0o700)
        folder.symlink_to(theirs)
        return folder, "is a symlink"
    folder.mkdir()
    os.chmod(folder, 0o777)
    return folder, r"is open to other users \(mode 0777, not 0700\)"


HOW = ["another user's", "a symlink", "open to all"]


@pytest.mark.parametrize("how", HOW)
def test_a_client_sends_nothing_into_a_socket_folder_that_is_not_its_own(long_home: Path, how: str) -> None:
    folder, why = premade(long_home, how)
    heard: list[bytes] = []

    async def listen(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        heard.append(await reader.read(1 << 16))  # what the attacker's listener receives
        writer.close()

    async def go() -> None:
        server = await asyncio.start_unix_server(listen, path=str(protocol.socket_path(long_home)))
        try:
            with pytest.raises(OwnerError, match=f"the owner's socket folder {folder} {why}.*fix: remove it"):
                await asyncio.wait_for(Client.connect(long_home, spawn=False), 10)
            await asyncio.sleep(0.1)
        finally:
            server.close()

    asyncio.run(go())
    assert heard == []


@pytest.mark.parametrize("how", HOW)
def test_the_owner_does_not_listen_in_a_socket_folder_that_is_not_its_own(long_home: Path, how: str) -> None:
    folder, why = premade(long_home, how)

    async def go() -> None:
        owner = Owner(long_home, idle=3600)
        try:
            with pytest.raises(protocol.UnsafeSocket, match=f"{folder} {why}.*set a shorter EUKHE_HOME"):
                await asyncio.wait_for(owner.serve(), 10)
        finally:
            owner.stop()
            await owner.close()

    asyncio.run(go())
    assert not protocol.socket_path(long_home).exists()


def test_a_missing_socket_folder_is_made_the_users_alone_and_serves(long_home: Path) -> None:
    async def go() -> None:
        owner = Owner(long_home, idle=3600)
        task = asyncio.ensure_future(owner.serve())
        try:
            while not protocol.socket_path(long_home).exists():
                await asyncio.sleep(0.01)
            client = await Client.connect(long_home, spawn=False)
            await client.close()
        finally:
            owner.stop()
            await asyncio.wait_for(task, 5)

    asyncio.run(go())
    folder = protocol.socket_path(long_home).parent
    assert oct(os.lstat(folder).st_mode & 0o7777) == "0o700"


def test_the_warm_templates_socket_fits_wherever_the_owners_does() -> None:
    """The template's socket is the owner's neighbour, no longer: where the owner's fits
    (in the home, or in the temp dir's folder), so does the template's."""
    for n in range(60, 120):
        home = Path("/" + "h" * n) / "home"
        owner, warm = protocol.socket_path(home), protocol.warm_path(home)
        assert warm.parent == owner.parent and warm != owner, n
        assert len(os.fsencode(warm)) <= len(os.fsencode(owner)) <= protocol.SUN_PATH, n
