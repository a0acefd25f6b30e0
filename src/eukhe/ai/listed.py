"""Whether a local server knows the model by the name it was given.

llama.cpp's server answers with the model it loaded whatever name a request asks for,
so `--model llamacpp/nosuchmodel` runs, and the user never learns the name meant
nothing. A server that lists its models (`GET /models`: llama.cpp, vLLM, Ollama, LM
Studio) and lacks the name gets one line saying so, with what it lists.

Only servers on this machine or a private network are asked: a hosted API refuses an
unknown name with its own clear error, and a look there would cost its latency before
every run (and Anthropic's list lacks its aliases). The look is bounded by `LOOK`, and
a server that cannot be asked, or lists nothing, gets no line: it is a hint, never a
reason to stop.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import posixpath
import threading
import time
import urllib.parse
from collections.abc import Callable, Sequence

from eukhe.ai.errors import is_loopback, plain_url
from eukhe.ai.models import Route

LOOK = 0.5
"""Seconds the look at a server's list of models may take in all before a run it would
hold (`eukhe run`); past it, nothing is said."""
LOOK_BESIDE = 5.0
"""Seconds it may take where nothing waits for it (the agent says its line whenever it
comes): a busy machine's slow answer is still said."""
SHOWN = 5
"""Names of listed models a line shows at most."""
BODY = 1 << 20
"""Bytes of a list read at most."""
NAME = 100
"""Characters of a listed name shown at most."""


def local(url: str) -> bool:
    """Whether the URL's host is this machine or a private network's."""
    if is_loopback(url):
        return True
    try:
        ip = ipaddress.ip_address(urllib.parse.urlsplit(url).hostname or "")
    except ValueError:
        return False
    return ip.is_private or ip.is_link_local


def listed(url: str, key: str | None, timeout: float = LOOK) -> tuple[str, ...] | None:
    """The model ids `GET {url}/models` lists (OpenAI's shape: {"data": [{"id": ...}]}),
    or None when the server could not be asked, refused, or answered something else."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = kind(parts.hostname, parts.port, timeout=timeout)
    headers = {"Accept": "application/json"} | ({"Authorization": f"Bearer {key}"} if key else {})
    try:
        conn.request("GET", parts.path.rstrip("/") + "/models", headers=headers)
        resp = conn.getresponse()
        if resp.status != 200:
            return None
        body = json.loads(resp.read(BODY))
    except (OSError, http.client.HTTPException, ValueError):  # a timeout is an OSError
        return None
    finally:
        conn.close()
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        return None
    ids = [m.get("id") for m in data if isinstance(m, dict)]
    return tuple(shown for i in ids if isinstance(i, str) and (shown := _printable(i)))


def _printable(name: str) -> str:
    """A listed name as a line may show it: no control characters (a server's escape
    sequences never reach the terminal), at most NAME characters."""
    text = "".join(ch for ch in name if ch.isprintable())
    return text if len(text) <= NAME else text[: NAME - 1] + "…"


def known(name: str, ids: Sequence[str]) -> bool:
    """Whether `name` is one of `ids` as servers spell them: itself, Ollama's `name:latest`,
    or llama.cpp's path of the loaded file (its base name, with or without `.gguf`)."""
    for i in ids:
        base = posixpath.basename(i.replace("\\", "/"))
        if name in (i, base, base.removesuffix(".gguf")) or i == f"{name}:latest":
            return True
    return False


def unlisted(r: Route, ids: Sequence[str] | None) -> str | None:
    """The line for a model its server does not list; None when it does, or lists nothing."""
    if not ids or known(r.model, ids):
        return None
    shown = ", ".join(ids[:SHOWN]) + (f" and {len(ids) - SHOWN} more" if len(ids) > SHOWN else "")
    url = plain_url(r.base_url or "")
    return (
        f"the server at {url} does not list the model {r.model!r}; it lists: {shown}. "
        "llama.cpp answers with the model it loaded whatever the name; other servers refuse it"
    )


def look(r: Route, timeout: float = LOOK) -> str | None:
    """`unlisted` for a local server that speaks OpenAI's API; None elsewhere."""
    if r.api == "anthropic" or not r.base_url or not local(r.base_url):
        return None
    return unlisted(r, listed(r.base_url, r.api_key, timeout))


def looking(r: Route, timeout: float = LOOK) -> Callable[[], str | None]:
    """`look` begun in a thread of its own (the first line never waits for it); the
    callable returned waits for its line, at most until `timeout` after the start."""
    got: list[str | None] = []
    thread = threading.Thread(target=lambda: got.append(look(r, timeout)), daemon=True, name="model-look")
    thread.start()
    end = time.monotonic() + timeout

    def line() -> str | None:
        thread.join(max(0.0, end - time.monotonic()))
        return got[0] if got else None

    return line
