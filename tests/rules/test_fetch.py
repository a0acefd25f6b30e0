"""The web fetch's pure rules: the model's texts as its results say them, the host a URL
names and the hosts a `WebFetch` rule matches (as rules are written in settings), the
addresses refused, and what the permission rule decides for a fetch."""

from __future__ import annotations

import pytest

from eukhe.rules import address
from eukhe.rules import fetch as f
from eukhe.rules.permission import (
    Answer,
    Call,
    Cfg,
    Kind,
    Mode,
    Policy,
    Rule,
    Source,
    Verdict,
    Why,
    decide,
    granted,
)
from eukhe.settings.rule_syntax import Parsed, parse

CFG = f.Cfg(connect_ms=100, first_byte_ms=200, total_ms=1000, max_bytes=50, max_redirects=1)


def ended(*inputs: f.In) -> f.Fetch:
    s = f.start()
    for x in inputs:
        s = f.step(CFG, s, x)
    return s


def test_each_end_by_a_bound_says_the_bound_by_its_key_and_value() -> None:
    k = f.Kind
    said = {
        "connect": ended(f.In(k.TICK, 100)),
        "first": ended(f.In(k.CONNECTED, 10), f.In(k.TICK, 210)),
        "total": ended(f.In(k.CONNECTED, 10), f.In(k.ANSWERED, 20), f.In(k.BYTES, 30, 7), f.In(k.TICK, 1000)),
        "bytes": ended(f.In(k.CONNECTED, 10), f.In(k.ANSWERED, 20), f.In(k.BYTES, 30, 70)),
        "redirects": ended(
            f.In(k.CONNECTED, 1), f.In(k.REDIRECT, 2), f.In(k.CONNECTED, 3), f.In(k.REDIRECT, 4)
        ),
        "aborted": ended(f.In(k.ABORT, 5)),
    }
    assert {name: f.said(CFG, s) for name, s in said.items()} == {
        "connect": "no connection within webFetch.connectTimeoutMs = 100 ms",
        "first": "connected, but no answer within webFetch.firstByteTimeoutMs = 200 ms",
        "total": "not done within webFetch.totalTimeoutMs = 1000 ms (7 bytes of the body read)",
        "bytes": "cut at webFetch.maxBytes = 50 bytes: the rest was not read",
        "redirects": "redirected more than webFetch.maxRedirects = 1 times",
        "aborted": "the run was aborted",
    }
    assert said["bytes"].read == 50 and said["redirects"].hops == 1


def test_a_redirect_gives_the_new_hop_its_own_connect_bound_and_the_total_still_counts_from_the_start() -> (
    None
):
    k = f.Kind
    s = ended(f.In(k.CONNECTED, 50), f.In(k.REDIRECT, 60))
    assert (s.phase, s.hops, f.due(CFG, s)) == (f.Phase.CONNECT, 1, 160)
    slow = f.Cfg(connect_ms=900, first_byte_ms=900, total_ms=1000)
    s = f.step(slow, f.step(slow, f.start(), f.In(k.CONNECTED, 50)), f.In(k.REDIRECT, 200))
    assert f.due(slow, s) == 1000  # its connect bound would be 1100: the total comes first
    assert f.step(slow, s, f.In(k.TICK, 1000)).end is f.End.TOTAL


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://Docs.Python.org./3/library/", "docs.python.org"),
        ("http://[::1]:8000/x", "::1"),
        ("http://user:pw@example.com:80/", "example.com"),
        ("HTTP://127.0.0.1/", "127.0.0.1"),
        ("ftp://example.com/", None),
        ("file:///etc/passwd", None),
        ("http:///nohost", None),
        ("http://example.com:99999999/", None),
        ("example.com", None),
    ],
)
def test_the_host_a_url_names(url: str, host: str | None) -> None:
    assert address.host_of(url) == host


def test_a_domain_rule_matches_its_host_exactly_and_a_wildcard_the_names_below_it() -> None:
    assert address.domain_matches("domain:docs.python.org", "docs.python.org")
    assert not address.domain_matches("domain:docs.python.org", "evil.docs.python.org")
    assert not address.domain_matches("domain:python.org", "evilpython.org")
    assert address.domain_matches("domain:*.python.org", "docs.python.org")
    assert not address.domain_matches("domain:*.python.org", "python.org")
    assert not address.domain_matches("domain:*.python.org", "evilpython.org")


@pytest.mark.parametrize(
    ("text", "got"),
    [
        ("WebFetch(domain:Docs.Python.org.)", Parsed("WebFetch", "domain:docs.python.org")),
        ("WebFetch(domain:*.Example.com)", Parsed("WebFetch", "domain:*.example.com")),
        ("WebFetch(domain:[::1])", Parsed("WebFetch", "domain:::1")),
        ("WebFetch(domain:127.0.0.1)", Parsed("WebFetch", "domain:127.0.0.1")),
        ("WebFetch", Parsed("WebFetch", None)),
        (
            "WebFetch(example.com)",
            "a WebFetch rule names a host as domain:HOST, e.g. WebFetch(domain:example.com)",
        ),
        (
            "WebFetch(domain:a.com/docs)",
            "domain:a.com/docs is not a host (no scheme, port, path or wildcard but a leading *.)",
        ),
    ],
)
def test_a_webfetch_rule_as_settings_write_it(text: str, got: Parsed | str) -> None:
    assert parse(text) == got


def test_the_addresses_refused_and_why() -> None:
    assert address.refused("169.254.169.254") == "a link-local address (where clouds serve their metadata)"
    assert address.refused("::ffff:10.1.2.3") == "a private address, carried in an IPv6 address"
    assert address.refused("fd12::1") == "a unique-local address (private IPv6)"
    assert address.refused("1.1.1.1") is None and address.refused("2606:4700::1111") is None
    assert address.refused("nonsense") == "not an IP address ('nonsense')"
    assert address.literal_refused("localhost") is None and address.literal_refused("10.0.0.1") is not None


@pytest.mark.parametrize("source", list(Source))
def test_only_a_rule_of_the_settings_opens_a_hosts_refused_addresses(source: Source) -> None:
    """A person's "always" (this session's, this project's) for localhost keeps the host's
    own rule, but the rule the guard asks opens its refused addresses only when the settings
    wrote it; beside a settings rule for another host, a wildcard or a bare WebFetch too."""
    kept = granted(Call("web_fetch", hosts=("localhost",)), Answer.SESSION)[0]
    own = Rule(Kind.ALLOW, "WebFetch", "domain:localhost", source)
    beside = (
        Rule(Kind.ALLOW, "WebFetch", "domain:docs.python.org", Source.HOME),
        Rule(Kind.ALLOW, "WebFetch", "domain:*.localhost", Source.HOME),
        Rule(Kind.ALLOW, "WebFetch", None, Source.FLAG),
    )
    opens = source in (Source.HOME, Source.PROJECT, Source.FLAG)
    assert kept.pattern == own.pattern
    assert address.named((*beside, own), "localhost") is opens
    assert (address.guarded("127.0.0.1", address.named((own,), "localhost")) is None) is opens


FETCH = Call("web_fetch", hosts=("docs.python.org",))


@pytest.mark.parametrize(
    ("mode", "policy", "person", "rules", "verdict", "why"),
    [
        (Mode.WORKSPACE_WRITE, Policy.ON_REQUEST, True, (), Verdict.ASK, Why.NETWORK),
        (Mode.READ_ONLY, Policy.UNTRUSTED, True, (), Verdict.ASK, Why.NETWORK),
        (Mode.WORKSPACE_WRITE, Policy.ON_REQUEST, False, (), Verdict.DENY, Why.HEADLESS),
        (Mode.WORKSPACE_WRITE, Policy.NEVER, True, (), Verdict.DENY, Why.NEVER),
        (Mode.FULL, Policy.ON_REQUEST, False, (), Verdict.OUTSIDE, Why.FULL_ACCESS),
        (
            Mode.WORKSPACE_WRITE,
            Policy.ON_REQUEST,
            False,
            ("domain:docs.python.org",),
            Verdict.ALLOW,
            Why.ALLOW_RULE,
        ),
        (
            Mode.WORKSPACE_WRITE,
            Policy.ON_REQUEST,
            False,
            ("domain:*.python.org",),
            Verdict.ALLOW,
            Why.ALLOW_RULE,
        ),
        (Mode.WORKSPACE_WRITE, Policy.ON_REQUEST, False, (None,), Verdict.ALLOW, Why.ALLOW_RULE),
        (Mode.WORKSPACE_WRITE, Policy.ON_REQUEST, False, ("domain:python.org",), Verdict.DENY, Why.HEADLESS),
    ],
)
def test_what_the_permission_rule_decides_for_a_fetch(
    mode: Mode, policy: Policy, person: bool, rules: tuple[str | None, ...], verdict: Verdict, why: Why
) -> None:
    cfg = Cfg(mode, policy, person, True, tuple(Rule(Kind.ALLOW, "WebFetch", r, Source.HOME) for r in rules))
    d = decide(cfg, FETCH)
    assert (d.verdict, d.why) == (verdict, why)


def test_a_deny_rule_for_a_domain_wins_and_always_keeps_the_host_alone() -> None:
    rules = (
        Rule(Kind.ALLOW, "WebFetch", None, Source.HOME),
        Rule(Kind.DENY, "WebFetch", "domain:*.python.org", Source.PROJECT),
    )
    assert decide(Cfg(Mode.FULL, Policy.ON_REQUEST, True, True, rules), FETCH).verdict is Verdict.DENY
    assert granted(FETCH, Answer.PROJECT) == (
        Rule(Kind.ALLOW, "WebFetch", "domain:docs.python.org", Source.APPROVED),
    )
    assert granted(Call("web_fetch"), Answer.SESSION) == ()  # a URL with no host keeps no rule
