"""`initialize` answers as the ACP registry's check expects (issue 55, finding 8): the check
(agentclientprotocol/registry, `.github/workflows/client.py`) sends its own initialize, reads
`authMethods` raw, takes a method's type from `type`, else from `_meta`'s `agent-auth` or
`terminal-auth`, else `agent`, and fails with "No authMethods in response" unless one is of type
`agent` or `terminal`. eukhe's one method says where its key is: the provider key its settings
name; `authenticate` with it answers, with another is refused naming eukhe's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.acp.test_by_hand import Hand
from tests.proc import start

REGISTRY_INITIALIZE = {
    "protocolVersion": 1,
    "clientInfo": {"name": "ACP Registry Validator", "version": "1.0.0"},
    "clientCapabilities": {
        "terminal": True,
        "fs": {"readTextFile": True, "writeTextFile": True},
        "_meta": {"terminal_output": True, "terminal-auth": True},
    },
}


def method_type(m: dict[str, Any]) -> str:
    """The registry's reading of a method's type."""
    meta = m.get("_meta") or {}
    return str(m.get("type") or ("terminal" if "terminal-auth" in meta else "agent"))


def test_initialize_offers_an_auth_method_the_registrys_check_accepts(tmp_path: Path) -> None:
    home = tmp_path / "fresh-home"  # as the check runs it: a new HOME, nothing configured
    p = start("acp", cwd=tmp_path, home=home, extra={"HOME": str(tmp_path)}, stdin=True)
    try:
        hand = Hand(p)
        hand.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": REGISTRY_INITIALIZE})
        [answer] = hand.until_answer(0)
        methods = answer["result"].get("authMethods") or []
        assert methods, "No authMethods in response"
        assert [method_type(m) for m in methods] == ["agent"]
        [m] = methods
        assert m["id"] == "eukhe-settings" and m["name"]
        assert "apiKeyEnv" in m["description"] and "settings.json" in m["description"]
        hand.send({"jsonrpc": "2.0", "id": 1, "method": "authenticate", "params": {"methodId": m["id"]}})
        assert hand.until_answer(1)[-1]["result"] == {}
        hand.send({"jsonrpc": "2.0", "id": 2, "method": "authenticate", "params": {"methodId": "oauth"}})
        error = hand.until_answer(2)[-1]["error"]
        assert "no auth method 'oauth'; eukhe's is 'eukhe-settings'" in str(error)
    finally:
        p.stdin.close()  # type: ignore[union-attr]
        assert p.wait(timeout=60) == 0
