"""A person's "always" for a host opens its public addresses only (issue 51). The attack: the
model asks to fetch a name; the person, asked, answers "always" (for this session, or for
this project); the name then resolves to the metadata service (169.254.169.254) or to the
user's own machine (a server on 127.0.0.1: DNS rebinding after one "always"). The fetch runs
through the run's permission gate (`run.permit.Gate`, whose `names_host` the tool asks), and
is refused before any connection, its cause said; the same rule written in the settings (the
home's, a project's, the command line's) opens the host's refused addresses, as before. The
resolver is the test's where a name must lead to the metadata address (`_addresses`, the
fetch's one lookup); `localhost` is resolved for real."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from eukhe.ai.reply import ToolCall
from eukhe.rules import fetch as rule
from eukhe.rules.permission import Answer, Cfg, Kind, Mode, PermissionState, Policy, Rule, Source
from eukhe.run.permit import Asked, Gate
from eukhe.tools import Context, Result
from eukhe.tools.web import WebFetch
from eukhe.tools.web import fetch as web
from tests.tools.web_servers import WATCH, Served, page, serving

BOUNDS = rule.Cfg(connect_ms=300, first_byte_ms=500, total_ms=1500, max_bytes=100_000)
PAGE = b"the user's own server: /admin"
REBOUND = {
    "rebind.example": ["127.0.0.1"],
    "metadata.example": ["169.254.169.254"],
    "docs.example": ["93.184.216.34"],
}
"""Names the test's resolver answers: one a DNS answer rebound to loopback, one to the metadata
service, one to a public address."""


class Person:
    """Answers every ask with `answer`, and keeps what it was asked."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.asked: list[Asked] = []

    async def ask(self, q: Asked) -> tuple[Answer, str]:
        self.asked.append(q)
        return self.answer, ""


async def own(served: Served, path: str, writer: asyncio.StreamWriter) -> None:
    await page(served, PAGE, "text/plain", writer)


@pytest.fixture(autouse=True)
def resolver(monkeypatch: pytest.MonkeyPatch) -> None:
    real = web._addresses

    async def addresses(name: str, port: int) -> list[str]:
        return REBOUND[name] if name in REBOUND else await real(name, port)

    monkeypatch.setattr(web, "_addresses", addresses)


def through_the_gate(gate: Gate, url: str) -> tuple[bool, Result | None]:
    """The call as a run makes it: the gate's word (a person may be asked), then the tool,
    which asks the gate whether a rule names the host."""
    tool = WebFetch(BOUNDS, gate.names_host)

    async def go() -> tuple[bool, Result | None]:
        args = {"url": url}
        permit = await gate.permit(ToolCall("c1", "web_fetch", json.dumps(args), args))
        if not permit.runs:
            return False, None
        return True, await tool.run(args, Context(Path(".")))

    return asyncio.run(go())


def gate(tmp_path: Path, rules: tuple[Rule, ...] = (), person: Person | None = None) -> Gate:
    cfg = Cfg(Mode.WORKSPACE_WRITE, Policy.ON_REQUEST, person is not None, True, rules)
    kept: list[Rule] = []
    return Gate(PermissionState(cfg), tmp_path, tmp_path / "home", ask=person, approve=kept.extend)


@pytest.mark.parametrize("answer", [Answer.SESSION, Answer.PROJECT])
@pytest.mark.parametrize(
    ("url", "where"),
    [
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a link-local address"),
        ("http://metadata.example/latest/meta-data/", "metadata.example (169.254.169.254) is a link-local"),
        ("http://rebind.example:{port}/admin", "rebind.example (127.0.0.1) is a loopback address"),
        ("http://localhost:{port}/admin", "is a loopback address"),
    ],
)
def test_a_persons_always_for_a_host_never_opens_its_refused_addresses(
    tmp_path: Path, answer: Answer, url: str, where: str
) -> None:
    person = Person(answer)

    async def serve() -> tuple[Gate, bool, Result | None, Served]:
        async with serving(own) as s:
            g = gate(tmp_path, person=person)
            runs, r = await asyncio.to_thread(through_the_gate, g, url.format(port=s.port))
            return g, runs, r, s

    with WATCH.watching() as tried:
        g, runs, r, s = asyncio.run(serve())
    source = Source.SESSION if answer is Answer.SESSION else Source.APPROVED
    host = url.split("/")[2].split(":")[0]
    assert len(person.asked) == 1 and runs  # the person said "always"
    assert g.session.cfg.rules == (Rule(Kind.ALLOW, "WebFetch", f"domain:{host}", source),)
    assert r is not None and r.is_error, r
    assert where in r.content and "which a fetch reaches only when a rule in the settings names the host" in (
        r.content
    )
    assert 'a person\'s "always" opens only its public addresses' in r.content
    assert f"allow it with WebFetch(domain:{host}) in permissions.allow of your settings" in r.content
    assert PAGE.decode() not in r.content and s.paths == [] and tried == []  # nothing was connected to


@pytest.mark.parametrize("source", [Source.HOME, Source.PROJECT, Source.FLAG])
@pytest.mark.parametrize("url", ["http://rebind.example:{port}/admin", "http://localhost:{port}/admin"])
def test_the_same_rule_in_the_settings_opens_them_as_before(tmp_path: Path, source: Source, url: str) -> None:
    async def serve() -> tuple[bool, Result | None, Served]:
        async with serving(own) as s:
            at = url.format(port=s.port)
            rules = (Rule(Kind.ALLOW, "WebFetch", f"domain:{at.split('/')[2].split(':')[0]}", source),)
            runs, r = await asyncio.to_thread(through_the_gate, gate(tmp_path, rules), at)
            return runs, r, s

    with WATCH.watching():
        runs, r, s = asyncio.run(serve())
    assert runs and r is not None and not r.is_error, r
    assert PAGE.decode() in r.content and s.paths == ["/admin"]


def test_a_persons_always_still_opens_the_hosts_public_addresses(tmp_path: Path) -> None:
    """What the "always" is for: the next fetch of the host runs unasked, and its public
    addresses are not refused (the test's resolver answers one; the watch keeps the
    connection on the machine, so it fails to connect, not to be allowed)."""
    person = Person(Answer.SESSION)
    g = gate(tmp_path, person=person)
    with WATCH.watching() as tried:
        first = through_the_gate(g, "http://docs.example/a")
        second = through_the_gate(g, "http://docs.example/b")
    assert len(person.asked) == 1 and first[0] and second[0]
    for _, r in (first, second):
        assert (
            r is not None
            and "not fetched" not in r.content
            and "could not connect to docs.example" in r.content
        )
    assert tried == ["93.184.216.34", "93.184.216.34"]  # tried, and stopped by the test's watch
