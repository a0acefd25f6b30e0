"""The model a summarizer pass runs on (H7.1, H7.2): `auxiliaryModel`, or the
session model with one row that says why.

`AuxiliaryRoute` belongs to one session. For each pass (compaction, branch
summary) it makes the checks of `rules.aux_fallback.CHECKS`, in that order,
stopping at the first that fails (a check not made passes), and asks
`rules.aux_fallback.decide` which model runs the pass and whether the row is
shown now. It decides nothing itself. The rows shown live in the session's
`AuxiliaryNotices`: once per purpose, selector and reason; a reopened session
is a new route and shows a row once again.

A row holds the selector, the purpose and the reason, never credentials: it is
made of the rule's fixed texts and the selector, and every API key the
settings point to is removed from it (`eukhe.ai.errors.redact`).
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from eukhe.ai.errors import redact
from eukhe.ai.models import BUILTIN, ModelError, parse_name, route
from eukhe.json_types import JsonMapping
from eukhe.rules import aux_fallback
from eukhe.rules.aux_fallback import CHECKS, NONE_SHOWN, Ask, Purpose, Reason, Shown

Available = Callable[[], Mapping[str, int | None]]
"""The available-models list: each model's provider/model name and its context window
in tokens (None: not known). Raises (OSError, ValueError) when it cannot be read."""


def notice_row(selector: str, purpose: Purpose, reason: Reason, session_model: str) -> str:
    """The row a session shows when the session model runs a pass instead (H7.1)."""
    return (
        f"auxiliaryModel {selector} is not used for {purpose.value}: {reason.value}. "
        f"The session model {session_model} runs it."
    )


@dataclass
class AuxiliaryNotices:
    """The rows one session has shown: the model's `Shown`, per purpose and selector."""

    shown: dict[tuple[Purpose, str], Shown] = field(default_factory=dict)

    def get(self, purpose: Purpose, selector: str) -> Shown:
        return self.shown.get((purpose, selector), NONE_SHOWN)


@dataclass(frozen=True)
class Choice:
    """The model that runs one pass (a provider/model name), whether it is the
    auxiliary one, why not, and the row shown now (None: no row)."""

    model: str
    auxiliary: bool
    reason: Reason
    notice: str | None


def declared_models(settings: JsonMapping, selectors: Iterable[str]) -> Available:
    """The available-models list from settings: the `models` object (name -> {"contextWindow":
    tokens}) when set; else every name of `selectors` whose provider is known (built in, or
    under `providers`), its context window unknown. A `models` value that is not such an
    object makes the list unreadable."""
    names = list(selectors)

    def available() -> Mapping[str, int | None]:
        models = settings.get("models")
        if models:
            if not isinstance(models, Mapping):
                raise ValueError(f"models: expected an object, got {type(models).__name__}")
            out: dict[str, int | None] = {}
            for name, spec in models.items():
                window = spec.get("contextWindow") if isinstance(spec, Mapping) else None
                if not isinstance(spec, Mapping) or not (
                    window is None or (isinstance(window, int) and not isinstance(window, bool))
                ):
                    raise ValueError(f"models.{name}: expected an object with a whole contextWindow")
                out[str(name)] = window
            return out
        providers = settings.get("providers") or {}
        known = {*BUILTIN, *(providers if isinstance(providers, Mapping) else {})}
        out = {}
        for n in names:
            try:
                provider, _ = parse_name(n)
            except ModelError:
                continue
            if provider in known:
                out[n] = None
        return out

    return available


def secrets(settings: JsonMapping, env: Mapping[str, str]) -> list[str]:
    """Every API key the settings point to: the environment variables named by each
    provider's `apiKeyEnv` (built in or set), and any `apiKey` written in settings."""
    providers = settings.get("providers")
    given = providers if isinstance(providers, Mapping) else {}
    out: list[str] = []
    for name in {*BUILTIN, *given}:
        mine = given.get(name)
        cfg = {**BUILTIN.get(name, {}), **(mine if isinstance(mine, Mapping) else {})}
        var = cfg.get("apiKeyEnv")
        if isinstance(var, str) and env.get(var):
            out.append(env[var])
        key = cfg.get("apiKey")
        if isinstance(key, str) and key:
            out.append(key)
    return out


class AuxiliaryRoute:
    """Which model runs each summarizer pass of one session, with its rows.

    session_model: the session's provider/model. settings: the merged settings
    (`auxiliaryModel`, `allowedModels`, `providers`, `models`). session_models: the
    models the session may switch between (None: any). available: the
    available-models list (default: `declared_models`). show: called with
    ("notice", row) for each row shown.
    """

    def __init__(
        self,
        session_model: str,
        settings: JsonMapping,
        *,
        env: Mapping[str, str] | None = None,
        session_models: Sequence[str] | None = None,
        available: Available | None = None,
        show: Callable[[str, str], None] | None = None,
    ) -> None:
        self.session_model = session_model
        self.settings = settings
        self.env = os.environ if env is None else env
        self.session_models = session_models
        selector = settings.get("auxiliaryModel")
        self.selector = selector.strip() if isinstance(selector, str) and selector.strip() else None
        wanted = [n for n in (self.selector, session_model) if n]
        self.available = available or declared_models(settings, wanted)
        self.show = show
        self.notices = AuxiliaryNotices()

    def choose(self, purpose: Purpose, request_tokens: int) -> Choice:
        """The model for one pass whose request holds `request_tokens` tokens."""
        selector = self.selector
        if selector is None:
            ask = Ask(False, False, True, True, True, True, True, True)
        elif selector == self.session_model:
            ask = Ask(True, True, True, True, True, True, True, True)
        else:
            ask = self._ask(selector, request_tokens)
        key = (purpose, selector or "")
        r = aux_fallback.decide(self.notices.get(*key), ask)
        if selector is not None:
            self.notices.shown[key] = r.shown
        if r.auxiliary and selector is not None:
            return Choice(selector, True, r.reason, None)
        row = None
        if r.notice and selector is not None:
            row = redact(
                notice_row(selector, purpose, r.reason, self.session_model), secrets(self.settings, self.env)
            )
            if self.show is not None:
                self.show("notice", row)
        return Choice(self.session_model, False, r.reason, row)

    def _ask(self, selector: str, request_tokens: int) -> Ask:
        """Each check in the rule's order, up to the first that fails."""
        passed: dict[Reason, bool] = {}
        listed: dict[str, int | None] = {}
        probes: dict[Reason, Callable[[], bool]] = {
            Reason.NOT_ALLOWED: lambda: self._allowed(selector),
            Reason.LIST_UNREADABLE: lambda: self._listed(listed),
            Reason.NO_MODEL: lambda: selector in listed,
            Reason.NO_KEY: lambda: self._keyed(selector),
            Reason.NOT_IN_SESSION: lambda: self.session_models is None or selector in self.session_models,
            Reason.TOO_SMALL: lambda: self._fits(listed.get(selector), request_tokens),
        }
        for reason in CHECKS:
            passed[reason] = probes[reason]()
            if not passed[reason]:
                break

        def ok(r: Reason) -> bool:
            return passed.get(r, True)

        return Ask(
            given=True,
            same=False,
            allowed=ok(Reason.NOT_ALLOWED),
            listed=ok(Reason.LIST_UNREADABLE),
            named=ok(Reason.NO_MODEL),
            keyed=ok(Reason.NO_KEY),
            offered=ok(Reason.NOT_IN_SESSION),
            fits=ok(Reason.TOO_SMALL),
        )

    def _allowed(self, selector: str) -> bool:
        allowed = self.settings.get("allowedModels")
        if not allowed:
            return True
        if not isinstance(allowed, list):
            return False
        return any(isinstance(p, str) and fnmatch.fnmatchcase(selector, p) for p in allowed)

    def _listed(self, into: dict[str, int | None]) -> bool:
        try:
            into.update(self.available())
        except (OSError, ValueError):
            return False
        return True

    @staticmethod
    def _fits(window: int | None, request_tokens: int) -> bool:
        return window is None or window >= request_tokens

    def _keyed(self, selector: str) -> bool:
        providers = self.settings.get("providers")
        try:
            route(selector, providers if isinstance(providers, Mapping) else {}, self.env)
        except ModelError:
            return False
        return True
