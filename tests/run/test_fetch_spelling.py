"""A host spelled another way is the same host to the permission rule: the resolver looks
up `ｅｘａｍｐｌｅ.com`, `example。com` and `exam\\u00adple.com` as example.com (IDNA), so a rule
that denies example.com denies each of them, and one that names it allows them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from eukhe.ai.reply import ToolCall
from eukhe.rules.permission import Cfg, Kind, Mode, PermissionState, Policy, Rule, Source
from eukhe.run.permit import Gate

SPELLINGS = [
    "http://ｅｖｉｌ.example.com/x",  # fullwidth letters
    "http://evil.example。com/x",  # an ideographic full stop
    "http://evil.exam\u00adple.com/x",  # a soft hyphen, which IDNA drops
    "http://EVIL.Example.COM./x",  # capitals and a trailing dot, for the record
]


def permit(tmp_path: Path, rules: tuple[Rule, ...], url: str) -> bool:
    gate = Gate(
        PermissionState(Cfg(Mode.WORKSPACE_WRITE, Policy.ON_REQUEST, False, True, rules)),
        tmp_path,
        tmp_path / "h",
    )
    args = {"url": url}
    return asyncio.run(gate.permit(ToolCall("c1", "web_fetch", json.dumps(args), args))).runs


@pytest.mark.parametrize("url", SPELLINGS)
def test_a_host_spelled_another_way_is_denied_by_the_rule_that_denies_it(tmp_path: Path, url: str) -> None:
    rules = (
        Rule(Kind.ALLOW, "WebFetch", None, Source.HOME),  # every host, but
        Rule(Kind.DENY, "WebFetch", "domain:evil.example.com", Source.HOME),  # this one
    )
    assert not permit(tmp_path, rules, url)
    assert permit(tmp_path, rules, "http://good.example.com/x")


def test_a_rule_written_beyond_ascii_names_the_host_the_resolver_looks_up(tmp_path: Path) -> None:
    rules = (Rule(Kind.ALLOW, "WebFetch", "domain:bücher.example", Source.HOME),)
    assert permit(tmp_path, rules, "http://xn--bcher-kva.example/")
    assert permit(tmp_path, rules, "http://BÜCHER.example/")
