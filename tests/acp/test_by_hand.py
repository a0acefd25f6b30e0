"""`eukhe acp` spoken to by hand, one JSON line at a time, as an editor's own client does
without the SDK: requests out of order and garbage each get their JSON-RPC answer, nothing
but the protocol reaches stdout, a new session's updates come after the answer that names
it, and a prompt's chunks come before its answer."""

from __future__ import annotations

import json
import queue
import threading
from pathlib import Path
from typing import Any

from eukhe.ai.faux import FauxServer, parse
from tests.proc import start

WAIT = 30.0


def test_an_editor_speaking_by_hand_gets_every_answer_in_order(tmp_path: Path) -> None:
    script = [{"results": 0, "text": "Hi there.", "chunks": 3}]
    with FauxServer(parse(script)) as server:
        home = tmp_path / "home"
        home.mkdir()
        (home / "settings.json").write_text(
            json.dumps({"model": "vllm/m", "providers": {"vllm": {"baseUrl": server.url}}})
        )
        p = start("acp", cwd=tmp_path, home=home, stdin=True)
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=lambda: [lines.put(line) for line in p.stdout], daemon=True).start()  # type: ignore[union-attr]

        def send(*messages: Any) -> None:
            for m in messages:
                p.stdin.write((m if isinstance(m, str) else json.dumps(m)) + "\n")  # type: ignore[union-attr]
            p.stdin.flush()  # type: ignore[union-attr]

        def until_answer(n: int) -> list[dict[str, Any]]:
            """Every message up to the answer to request `n`, parsed (stdout holds only JSON)."""
            got = []
            while True:
                m = json.loads(lines.get(timeout=WAIT))
                got.append(m)
                if m.get("id") == n and "method" not in m:
                    return got

        try:
            send(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "session/prompt",
                    "params": {"sessionId": "x", "prompt": []},
                },
                "{not json",
                {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"protocolVersion": 1}},
                {"jsonrpc": "2.0", "id": 3, "method": "no/such/method", "params": {}},
            )
            got = until_answer(3)
            by_id = {m.get("id"): m for m in got}
            assert by_id[None]["error"]["code"] == -32700  # the garbage, answered
            assert "no session 'x'" in by_id[1]["error"]["message"]
            assert by_id[2]["result"]["agentCapabilities"]["loadSession"] is True
            assert by_id[3]["error"]["code"] == -32601
            new = {"cwd": str(tmp_path), "mcpServers": []}
            send({"jsonrpc": "2.0", "id": 4, "method": "session/new", "params": new})
            [answer] = until_answer(4)  # nothing of the session before the answer that names it
            sid = answer["result"]["sessionId"]
            prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "hello"}]}
            send({"jsonrpc": "2.0", "id": 5, "method": "session/prompt", "params": prompt})
            got = until_answer(5)
            updates = [m["params"]["update"] for m in got if m.get("method") == "session/update"]
            assert updates[0]["sessionUpdate"] == "available_commands_update"
            chunks = [u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk"]
            assert "".join(chunks) == "Hi there."
            assert got[-1]["result"] == {"stopReason": "end_turn"}
            assert all(m["params"]["sessionId"] == sid for m in got if m.get("method") == "session/update")
        finally:
            p.stdin.close()  # type: ignore[union-attr]
            assert p.wait(timeout=WAIT) == 0
