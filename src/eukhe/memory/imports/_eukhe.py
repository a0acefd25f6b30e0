"""eukhe's own sessions, as `eukhe session show --json ID` exports them: one JSON
document (on one line, or pretty-printed),
`{"session": ID, "runs": [{"run", "outcome", "messages": [{"role", "content",
"calls", "callId", "isError"}]}]}`.

What is taken: the messages of role `user` (a run's prompt) as the user's
words, and the last message of role `assistant` with text before the user's
next words (a run's answer) as the final reply. Skipped: tool results (`tool`),
an assistant message's calls, and a failed reply (`isError` on an assistant
message: the harness's account of the failure, not the model's words). The
export has no timestamps, so items have no date.

Keys are `eukhe:<run id>:<message index>` (a run's id is `<session>/<n>`), the
run's id and the message's place in it.
"""

from __future__ import annotations

from eukhe.json_types import JsonObject, JsonValue
from eukhe.memory.imports._common import Diagnostics, Taken, Transcript, text_of

MAX_BYTES = 64 << 20
"""An export larger than this (64 MiB) is refused: it is read whole."""


def is_export(value: JsonValue) -> bool:
    return isinstance(value, dict) and "session" in value and isinstance(value.get("runs"), list)


def read(doc: JsonObject, ident: str, diags: Diagnostics) -> Taken:
    session = doc.get("session") if isinstance(doc.get("session"), str) and doc.get("session") else None
    if session is None:
        diags.add("session is not a string: keys use the file's path instead")
    who = session or ident
    transcript = Transcript()
    for r, run in enumerate(doc["runs"]):
        where = f"runs[{r}]"
        if not isinstance(run, dict) or not isinstance(run.get("messages"), list):
            diags.add(f"{where} is not a run with a list of messages; skipped")
            continue
        rid = run.get("run") if isinstance(run.get("run"), str) and run.get("run") else f"{who}/{r + 1:04d}"
        for m, message in enumerate(run["messages"]):
            at = f"{where}.messages[{m}]"
            if not isinstance(message, dict) or not isinstance(message.get("role"), str):
                diags.add(f"{at} is not a message with a role; skipped")
                continue
            role = message["role"]
            if role not in ("user", "assistant", "tool", "system"):
                diags.add(f"{at} has an unknown role {role!r}; skipped")
                continue
            text = text_of(message.get("content"))
            if role not in ("user", "assistant") or text is None:
                continue
            key = f"eukhe:{rid}:{m}"
            if role == "user":
                transcript.user(text, key, None, None)
            elif message.get("isError") is not True:
                transcript.reply(text, key, None, None)
    return Taken(session, transcript.finish())
