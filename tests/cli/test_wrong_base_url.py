"""A wrong base URL, quick and clear (issue 29): a loopback address that refuses the connection
gets one short retry, and every line names the URL, the cause and the way out; a remote
address keeps its retries (`rules.retry`, laws `retry_*`)."""

from __future__ import annotations

import socket
from pathlib import Path

from eukhe.ai.errors import connection_failure, is_loopback
from tests.proc import eukhe


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_nothing_listening_on_loopback_fails_after_one_short_retry_naming_the_url(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    done = eukhe("run", "--model", "vllm/m", "--base-url", url, "hi", cwd=tmp_path)
    said = f"nothing listens at {url} (connection refused): is the server running? (--base-url)"
    assert done.returncode == 1, done.stderr
    retries = [line for line in (done.stdout + done.stderr).splitlines() if "retry:" in line]
    assert len(retries) == 1 and said in retries[0] and "waiting 1.0 s" in retries[0], done.stdout
    assert f"{said} (refused again after a retry), after 2 model calls: 1 retry" in done.stderr


def test_a_remote_refusal_keeps_its_retries_and_names_the_url() -> None:
    cause = OSError("All connection attempts failed")  # as the HTTP client raises it, the refusal its cause
    cause.__cause__ = ConnectionRefusedError(111, "Connection refused")
    remote = connection_failure("vllm", "http://10.1.2.3:8000/v1/", cause)
    local = connection_failure("vllm", "http://localhost:8000/v1", cause)
    assert not remote.local_refusal and local.local_refusal
    assert remote.message == (
        "vllm: nothing listens at http://10.1.2.3:8000/v1 (connection refused): "
        "is the server running? (--base-url)"
    )
    other = connection_failure("vllm", "http://127.0.0.1:8000/v1", OSError("Name or service not known"))
    assert not other.local_refusal and other.message.startswith(
        "vllm: cannot connect to http://127.0.0.1:8000/v1:"
    )
    assert [
        is_loopback(u) for u in ("http://127.0.0.5/v1", "http://[::1]:9/v1", "https://api.openai.com/v1")
    ] == [
        True,
        True,
        False,
    ]


def test_a_key_in_the_base_url_is_not_shown() -> None:
    cause = OSError("All connection attempts failed")
    cause.__cause__ = ConnectionRefusedError(111, "Connection refused")
    got = connection_failure("corp", "https://me:sk-in-the-url@10.0.0.9:8443/v1?key=sk-query#x", cause)
    assert "sk-in-the-url" not in got.message and "sk-query" not in got.message
    assert "nothing listens at https://10.0.0.9:8443/v1 (connection refused)" in got.message
