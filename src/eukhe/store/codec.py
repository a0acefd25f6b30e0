"""How eukhe writes its runs' data into the store: tagged JSON, never pickle.

DBOS stores every workflow input and output, step output, message and event through a
serializer, and by default that is pickle: a row read back runs whatever code it names.
`Codec` is eukhe's own: JSON, where what JSON cannot say (a tuple, an enum, one of the
dataclasses eukhe's steps return, an exception, bytes, a dict with keys other than
strings) is an object tagged with `$eukhe`. Reading builds only the types registered
here, from their fields; an unknown tag or type is an error, never an import.

Rows carry the name of the serializer that wrote them, and DBOS decodes each row by
that name whatever serializer it was given: `guard` checks a store's rows before DBOS
reads it.

Every string a row holds passes the process's redaction first (`Codec.redact`: the secret
values the process knows, `run.secrets.redaction`), whatever put it there: a run's input
(its prompt, its system prompt), a step's output (a reply, a call's arguments, a tool's
result, a decision), a message. So no row a process writes holds a secret value it knows;
the value the step returns to the running code is its own, unchanged.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from enum import Enum
from typing import Any

from dbos import Serializer

from eukhe.ai.image import Image
from eukhe.ai.jobs import Job, PollFailed
from eukhe.ai.reply import Failure, FailureKind, Reply, Stop, Thinking, ToolCall, Usage
from eukhe.ai.request import Message, Request, Tool
from eukhe.errors import Code, EukheError
from eukhe.json_types import JsonValue
from eukhe.settings.secrets import NO_SECRETS, Redaction
from eukhe.store.session_runs import Carried

NAME = "eukhe_json"
"""The serializer's name, as DBOS records it beside each row."""

TAG = "$eukhe"

TYPES: dict[str, type] = {
    t.__name__: t
    for t in (
        Job,
        PollFailed,
        Failure,
        Reply,
        Thinking,
        ToolCall,
        Usage,
        Message,
        Image,
        Request,
        Tool,
        Carried,
        FailureKind,
        Stop,
    )
}
"""Every type a row may hold besides plain JSON: the dataclasses and enums eukhe's steps return."""
TYPES["Kind"] = FailureKind  # its name in the rows eukhe 0.2.0 wrote before the rename


class CodecError(EukheError, ValueError):
    """A value eukhe's codec cannot write, or a row it will not read: says which and why."""

    code = Code.STORE


class StoredError(EukheError):
    """An exception as the store keeps it: its kind's name and its message."""

    code = Code.STORE

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind

    def __repr__(self) -> str:
        return f"StoredError({self.kind!r}, {str(self)!r})"


def encode(v: Any, redact: Redaction = NO_SECRETS) -> JsonValue:  # any value this store keeps
    """`v` as JSON values, tagged where JSON cannot say it; each of its strings `redact`ed
    (a dict's keys too), before JSON escapes them."""
    if isinstance(v, str):
        return redact(v)
    if v is None or isinstance(v, (bool, int, float)):
        return v
    if isinstance(v, list):
        return [encode(x, redact) for x in v]
    if isinstance(v, dict):
        if all(isinstance(k, str) for k in v) and TAG not in v:
            return {redact(k): encode(x, redact) for k, x in v.items()}
        return {TAG: "dict", "v": [[encode(k, redact), encode(x, redact)] for k, x in v.items()]}
    if isinstance(v, tuple):
        return {TAG: "tuple", "v": [encode(x, redact) for x in v]}
    if isinstance(v, Enum) and TYPES.get(type(v).__name__) is type(v):
        return {TAG: "enum", "type": type(v).__name__, "v": v.value}
    if dataclasses.is_dataclass(v) and not isinstance(v, type) and TYPES.get(type(v).__name__) is type(v):
        # a field marked not stored (a request's image bytes: the image table has them) is left out
        kept = [f for f in dataclasses.fields(v) if f.metadata.get("stored", True)]
        fields = {f.name: encode(getattr(v, f.name), redact) for f in kept}
        return {TAG: "data", "type": type(v).__name__, "v": fields}
    if isinstance(v, BaseException):
        kind = v.kind if isinstance(v, StoredError) else type(v).__name__
        return {TAG: "error", "type": kind, "v": redact(str(v))}
    if isinstance(v, (bytes, bytearray)):
        return {TAG: "bytes", "v": base64.b64encode(bytes(v)).decode("ascii")}
    if isinstance(v, (set, frozenset)):
        return {TAG: "set", "v": [encode(x, redact) for x in v]}
    raise CodecError(
        f"eukhe's store cannot write a {type(v).__module__}.{type(v).__qualname__}: "
        "only JSON values and the types registered in eukhe.store.codec"
    )


def decode(v: JsonValue) -> Any:
    """The value `encode` gave `v` from; a tag or type not registered is a CodecError."""
    if isinstance(v, list):
        return [decode(x) for x in v]
    if not isinstance(v, dict):
        return v
    if TAG not in v:
        return {k: decode(x) for k, x in v.items()}
    tag, got = v[TAG], v.get("v")
    if tag == "tuple" and isinstance(got, list):
        return tuple(decode(x) for x in got)
    if tag == "dict" and isinstance(got, list):
        return {_hashable(decode(k)): decode(x) for k, x in got}
    if tag == "set" and isinstance(got, list):
        return {_hashable(decode(x)) for x in got}
    if tag == "bytes" and isinstance(got, str):
        return base64.b64decode(got)
    if tag == "error" and isinstance(got, str):
        return StoredError(str(v.get("type") or "Exception"), got)
    t = TYPES.get(str(v.get("type")))
    if tag == "enum" and isinstance(t, type) and issubclass(t, Enum):
        try:
            return t(got)
        except ValueError as e:
            raise CodecError(f"a row holds {got!r}, which is no {t.__name__}") from e
    if tag == "data" and t is not None and dataclasses.is_dataclass(t) and isinstance(got, dict):
        names = {f.name for f in dataclasses.fields(t)}
        if not set(got) <= names:
            raise CodecError(f"a row's {t.__name__} has fields it does not: {sorted(set(got) - names)}")
        return t(**{k: decode(x) for k, x in got.items()})
    raise CodecError(
        f"a row holds a value tagged {tag!r} of type {v.get('type')!r}, which eukhe does not read"
    )


def _hashable(k: JsonValue) -> Any:
    if isinstance(k, (list, dict, set)):
        raise CodecError(f"a row holds a key that cannot be one: {type(k).__name__}")
    return k


class Codec(Serializer):
    """DBOS's serializer for eukhe's store: tagged JSON (`encode`, `decode`). `redact`: the
    secret values this process knows, taken out of every row it writes (made once, at the
    store's launch: `store.durable.open_store`)."""

    def __init__(self, redact: Redaction = NO_SECRETS) -> None:
        self.redact = redact

    def name(self) -> str:
        return NAME

    def serialize(self, data: Any) -> str:
        return json.dumps(encode(data, self.redact), ensure_ascii=False, separators=(",", ":"))

    def deserialize(self, serialized_data: str) -> Any:
        try:
            return decode(json.loads(serialized_data))
        except (ValueError, TypeError, RecursionError) as e:
            if isinstance(e, CodecError):
                raise
            raise CodecError(f"a row is not eukhe's JSON: {type(e).__name__}: {e}") from e
