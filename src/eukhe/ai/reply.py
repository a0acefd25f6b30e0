"""What a provider yields: stream events, and exactly one reply at the end.

A reply is data the harness decides on (`rules.run`, `rules.recovery`): its
text blocks, thinking, tool calls (raw argument text, and the parsed object or
the parse error), stop reason, usage, and for a failure its classified cause.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from eukhe.json_types import JsonObject


class Stop(Enum):
    STOP = "stop"
    LENGTH = "length"
    TOOL_USE = "toolUse"
    ERROR = "error"


class FailureKind(Enum):
    """The cause of a failed reply; `RETRYABLE` says which a retry may cure."""

    RATE_LIMITED = "rate_limited"  # 429
    OVERLOADED = "overloaded"  # 529, an overloaded error event
    SERVER = "server"  # 5xx
    CONNECTION = "connection"  # dropped, reset or refused connection
    TIMEOUT = "timeout"  # the HTTP client's own timeout
    STALL = "stall"  # no event within the stream idle deadline
    REPEATING = "repeating"  # the repetition guard cut the stream
    BAD_REQUEST = "bad_request"  # 400
    AUTH = "auth"  # 401, 403
    NOT_FOUND = "not_found"  # 404
    UNPROCESSABLE = "unprocessable"  # 422
    REFUSED = "refused"  # another 4xx
    MALFORMED = "malformed"  # the server sent what the wire format does not allow
    STREAM_ERROR = "stream_error"  # an error the server reported inside the stream
    REJECTED = "rejected"  # the server's tool-call parser rejected the model's output (llama.cpp)
    OVERFLOW = "overflow"  # the request's context is larger than the model's window (never resent as is)


RETRYABLE = frozenset(
    {
        FailureKind.RATE_LIMITED,
        FailureKind.OVERLOADED,
        FailureKind.SERVER,
        FailureKind.CONNECTION,
        FailureKind.TIMEOUT,
    }
)


@dataclass(frozen=True)
class Failure:
    """Why a reply failed. `retry_after`: the server's wait in seconds, if it gave one.
    `message` names the provider, the status and an excerpt of the body, never a key."""

    kind: FailureKind
    retryable: bool
    message: str
    status: int | None = None
    retry_after: float | None = None
    waited: float | None = None  # STALL: the seconds waited with no event
    line: str | None = None  # REPEATING: the last line of the repeated cycle
    cycle: int | None = None  # REPEATING: the cycle's length in lines
    local_refusal: bool = False  # CONNECTION: a loopback address refused it (`rules.retry`)


@dataclass(frozen=True)
class ToolCall:
    """One call: `arguments` is the parsed JSON object, or None with `error` saying why."""

    id: str
    name: str
    raw: str
    arguments: JsonObject | None
    error: str | None = None


@dataclass(frozen=True)
class Usage:
    input: int = 0
    output: int = 0
    reasoning: int = 0
    cache_read: int = 0


@dataclass(frozen=True)
class Thinking:
    text: str
    signature: str | None = None


@dataclass(frozen=True)
class Reply:
    text: tuple[str, ...] = ()
    thinking: tuple[Thinking, ...] = ()
    calls: tuple[ToolCall, ...] = ()
    stop: Stop = Stop.STOP
    usage: Usage = field(default_factory=Usage)
    failure: Failure | None = None

    @property
    def all_text(self) -> str:
        return "".join(self.text)

    @property
    def has_text(self) -> bool:
        """Whitespace-only text is no text (H4.7)."""
        return bool(self.all_text.strip())


# ---------------------------------------------------------------- stream events


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ThinkingDelta:
    text: str


@dataclass(frozen=True)
class CallDelta:
    index: int
    id: str | None
    name: str | None
    arguments: str


@dataclass(frozen=True)
class UsageEvent:
    usage: Usage


@dataclass(frozen=True)
class Done:
    """The last event of every stream: the one reply."""

    reply: Reply


Event = TextDelta | ThinkingDelta | CallDelta | UsageEvent | Done
