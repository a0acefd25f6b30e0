"""Where a web fetch may go (issue 44): the host a URL names, the hosts a `WebFetch` rule
matches, and the addresses a fetch never connects to unless a rule names the host, so a
page cannot steer eukhe into the user's own network.

**Hosts.** `host_of` reads a URL's host as the permission rule and the fetch both judge it:
http or https only, lower case, without a trailing dot or an IPv6 literal's brackets, a name
beyond ASCII as its ASCII (IDNA) name, the one the resolver looks up. A rule
`WebFetch(domain:docs.python.org)` matches that host exactly (as Claude Code's does); a
subdomain only by a wildcard, `WebFetch(domain:*.python.org)`, which matches every name
below python.org and not python.org itself. A port is never part of it.

**Addresses.** `refused` says why an address is one a fetch does not connect to: loopback,
private, shared (carrier-grade NAT), link-local (169.254/16, where clouds serve their
metadata, and fe80::/10), unique-local and site-local IPv6, unspecified, multicast,
broadcast, reserved, benchmarking or documentation ranges. An IPv6 address that carries an
IPv4 one (IPv4-mapped `::ffff:127.0.0.1`, NAT64 `64:ff9b::`, 6to4 `2002::`) is judged as the
IPv4 address it carries. The table is written here, not read from the `ipaddress` module's
flags, whose meaning has changed between Python versions. The runtime resolves a name once,
asks `refused` of every address it got, and connects only to one it asked about: a name that
resolves again to another address (DNS rebinding) is never looked up again for that
connection.

**The exception.** `named` is whether an allow rule of the settings names the host itself
(not a wildcard, not a bare `WebFetch`): only then may a fetch reach a refused address, e.g.
`WebFetch(domain:localhost)` for a server of the user's own. The settings are the home's, a
project's and the command line's (`SETTINGS`): what the user wrote to open that host. A
person's "always" (`Source.SESSION`, `Source.APPROVED`: an answer to an ask about a URL the
model chose) opens the host's public addresses only: else one "always" for a name whose DNS
later answers 169.254.169.254 or 127.0.0.1 would take the fetch to the metadata service or
the user's own machine (DNS rebinding).

Pure: standard library only (`ipaddress` and `urllib.parse` compute, they do no I/O), total
functions.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from eukhe.rules.access import Kind, Rule, Source

TOOL = "WebFetch"
"""How rules name the web_fetch tool (Claude Code's name)."""

DOMAIN = "domain:"
"""The one specifier a WebFetch rule takes: `WebFetch(domain:HOST)`."""

SCHEMES = ("http", "https")
"""The schemes a fetch takes."""

_V4: tuple[tuple[str, str], ...] = (
    ("0.0.0.0/8", "an unspecified address (this network)"),
    ("10.0.0.0/8", "a private address"),
    ("100.64.0.0/10", "a shared address (carrier-grade NAT)"),
    ("127.0.0.0/8", "a loopback address"),
    ("169.254.0.0/16", "a link-local address (where clouds serve their metadata)"),
    ("172.16.0.0/12", "a private address"),
    ("192.0.0.0/24", "a reserved address (IETF protocol assignments)"),
    ("192.0.2.0/24", "a documentation address"),
    ("192.88.99.0/24", "a reserved address (6to4 relays)"),
    ("192.168.0.0/16", "a private address"),
    ("198.18.0.0/15", "a benchmarking address"),
    ("198.51.100.0/24", "a documentation address"),
    ("203.0.113.0/24", "a documentation address"),
    ("224.0.0.0/4", "a multicast address"),
    ("240.0.0.0/4", "a reserved or broadcast address"),
)
_V6: tuple[tuple[str, str], ...] = (
    ("::/128", "an unspecified address"),
    ("::1/128", "a loopback address"),
    ("::/96", "a reserved address (IPv4-compatible IPv6)"),
    ("64:ff9b:1::/48", "a private address (local NAT64)"),
    ("100::/64", "a reserved address (discard)"),
    ("2001:db8::/32", "a documentation address"),
    ("fc00::/7", "a unique-local address (private IPv6)"),
    ("fe80::/10", "a link-local address"),
    ("fec0::/10", "a site-local address (private IPv6)"),
    ("ff00::/8", "a multicast address"),
)
V4 = tuple((ipaddress.IPv4Network(n), why) for n, why in _V4)
V6 = tuple((ipaddress.IPv6Network(n), why) for n, why in _V6)
"""The ranges a fetch never connects to unless a rule names the host, with why."""

SETTINGS = frozenset({Source.HOME, Source.PROJECT, Source.FLAG})
"""The sources whose allow rule naming a host opens its refused addresses: the settings the
user wrote. A person's "always" (`Source.SESSION`, `Source.APPROVED`) is not one of them."""

NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
"""The well-known NAT64 prefix: its last 32 bits are the IPv4 address it reaches."""


def refused(address: str) -> str | None:
    """Why a fetch does not connect to `address` (a phrase: "a loopback address"), or None
    when it may. A text that is not an IP address is refused as such."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])  # a zone (fe80::1%eth0) is not the address
    except ValueError:
        return f"not an IP address ({address!r})"
    if isinstance(ip, ipaddress.IPv6Address):
        carried = ip.ipv4_mapped or ip.sixtofour
        if carried is None and ip in NAT64:
            carried = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if carried is not None:
            why = refused(str(carried))
            return f"{why}, carried in an IPv6 address" if why else None
        return next((why for net, why in V6 if ip in net), None)
    return next((why for net, why in V4 if ip in net), None)


def guarded(address: str, named: bool) -> str | None:
    """Why a fetch does not connect to `address`, one its host resolved to (None: it may):
    a refused address, unless an allow rule of the settings names the host itself (`named`)."""
    return None if named else refused(address)


def literal_refused(name: str) -> str | None:
    """Why a host written as an IP address is refused (None: allowed, or a name, which only
    its resolved addresses tell)."""
    return refused(name) if _is_ip(name) else None


def host(text: str) -> str:
    """A host as rules and fetches compare it: lower case, no trailing dot, no brackets, and
    a name beyond ASCII as the ASCII name the resolver looks up (IDNA). Every spelling of one
    name is one host: else `ｅｘａｍｐｌｅ.com` or `example。com`, which the resolver takes
    for example.com, would pass a rule that denies example.com. A name IDNA cannot write
    stays as it is (no resolver looks it up either)."""
    got = text.strip().lower().removeprefix("[").removesuffix("]").rstrip(".")
    if got.isascii():
        return got
    try:
        return got.encode("idna").decode("ascii").lower().rstrip(".")
    except UnicodeError:
        return got


def host_of(url: str) -> str | None:
    """The host `url` names, as `host` writes it; None when it is not an http or https URL
    with a host (or its port is not a number)."""
    try:
        parts = urlsplit(url.strip())
        name = parts.hostname
        _ = parts.port  # raises ValueError for a port that is not a number
    except ValueError:
        return None
    if parts.scheme.lower() not in SCHEMES or not name:
        return None
    got = host(name)
    return got or None


def domain_wrong(spec: str) -> str:
    """What is wrong with a WebFetch rule's specifier ("" when nothing): it is
    `domain:HOST` or `domain:*.HOST`, the host a name or an IP address, no scheme, port or path."""
    if not spec.startswith(DOMAIN):
        example = host_of(spec) or host(spec.split("/")[0]) or "example.com"
        return f"a WebFetch rule names a host as domain:HOST, e.g. WebFetch(domain:{example})"
    name = spec[len(DOMAIN) :]
    bare = name.removeprefix("*.")
    if not bare:
        return "domain: names no host; write WebFetch alone for every host"
    if any(c in bare for c in "/:@?#* \\") and not _is_ip(bare):
        return f"domain:{name} is not a host (no scheme, port, path or wildcard but a leading *.)"
    return ""


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(host(text))
    except ValueError:
        return False
    return True


def domain_matches(spec: str, name: str) -> bool:
    """Whether a WebFetch rule's specifier (`domain:HOST` or `domain:*.HOST`) matches the
    host `name` (as `host` writes it): the host exactly, or with `*.` any name below it."""
    if not spec.startswith(DOMAIN):
        return False
    want = spec[len(DOMAIN) :]
    if want.startswith("*."):
        below = host(want[2:])
        return bool(below) and name.endswith("." + below)
    return bool(want) and host(want) == name


def named(rules: tuple[Rule, ...], name: str) -> bool:
    """Whether an allow rule of the settings (`SETTINGS`) names the host `name` itself
    (`WebFetch(domain:localhost)`): what lets a fetch reach a refused address. A wildcard, a
    bare WebFetch rule or a person's "always" does not."""
    return any(
        r.kind is Kind.ALLOW
        and r.source in SETTINGS
        and r.tool == TOOL
        and r.pattern is not None
        and r.pattern.startswith(DOMAIN)
        and not r.pattern[len(DOMAIN) :].startswith("*.")
        and host(r.pattern[len(DOMAIN) :]) == name
        for r in rules
    )
