"""H7.1, H7.2: a summarizer pass runs on `auxiliaryModel`, or on the session model
with the reason shown.

Summarizer passes (compaction, branch summary) run on the model the setting
`auxiliaryModel` names. Unset, or naming the session model: the session model
runs the pass and nothing is shown. Another model that cannot be used: the
session model runs the pass, and the session shows one row (selector, purpose,
reason) for the first check that fails, in the spec's order (`CHECKS`).

A session shows each row once per purpose, selector and reason: `Shown` is
what one session has shown for one purpose and selector, and `decide` answers
the route of one pass and whether its row is shown now. A new reason is a new
row; a reopened session starts from `NONE_SHOWN` and shows it once again.

Pure: standard library only, frozen data, total functions.
"""

from __future__ import annotations

from dataclasses import dataclass

from eukhe.rules.states import Choice


class Purpose(Choice):
    """What a summarizer pass is for."""

    COMPACTION = "compaction"
    BRANCH_SUMMARY = "branch summary"


class Reason(Choice):
    """Why the auxiliary model does not run a pass (NONE: it does, or nothing is set)."""

    NONE = "none"
    NOT_ALLOWED = "allowedModels does not include it"
    LIST_UNREADABLE = "the available-models list is unreadable"
    NO_MODEL = "no model with a configured key has this name"
    NO_KEY = "API key not found"
    NOT_IN_SESSION = "the session model list does not include it"
    TOO_SMALL = "its context window is too small for the request"


CHECKS: tuple[Reason, ...] = (
    Reason.NOT_ALLOWED,
    Reason.LIST_UNREADABLE,
    Reason.NO_MODEL,
    Reason.NO_KEY,
    Reason.NOT_IN_SESSION,
    Reason.TOO_SMALL,
)
"""The checks of an auxiliary model, in the order the spec makes them (H7.1)."""


@dataclass(frozen=True)
class Ask:
    """One summarizer pass asks which model runs it.

    given: `auxiliaryModel` is set; same: it names the session model.
    Each check after those is True when it passes: allowed (`allowedModels`
    includes it), listed (the available-models list was read), named (a model
    there has this name), keyed (its API key was found), offered (the session
    model list includes it), fits (its context window holds the request). A
    check that was not made, because an earlier one failed, passes.
    """

    given: bool
    same: bool
    allowed: bool
    listed: bool
    named: bool
    keyed: bool
    offered: bool
    fits: bool


@dataclass(frozen=True)
class Shown:
    """The rows one session has shown for one purpose and selector: one flag a reason."""

    not_allowed: bool
    list_unreadable: bool
    no_model: bool
    no_key: bool
    not_in_session: bool
    too_small: bool


NONE_SHOWN = Shown(False, False, False, False, False, False)
"""A new (or reopened) session has shown nothing."""


@dataclass(frozen=True)
class Route:
    """The answer for one pass.

    auxiliary: the auxiliary model runs it (else the session model does);
    reason: why not (NONE when it does, or when nothing asked for it);
    notice: the session shows the row (selector, purpose, reason) now;
    shown: the rows shown after this pass.
    """

    auxiliary: bool
    reason: Reason
    notice: bool
    shown: Shown


def passes(a: Ask, r: Reason) -> bool:
    """Whether the check `r` passed (NONE always does)."""
    if r is Reason.NOT_ALLOWED:
        return a.allowed
    if r is Reason.LIST_UNREADABLE:
        return a.listed
    if r is Reason.NO_MODEL:
        return a.named
    if r is Reason.NO_KEY:
        return a.keyed
    if r is Reason.NOT_IN_SESSION:
        return a.offered
    if r is Reason.TOO_SMALL:
        return a.fits
    return True


def gate(a: Ask) -> Reason:
    """The first check that fails, in the order of `CHECKS`; NONE when all pass."""
    for r in CHECKS:
        if not passes(a, r):
            return r
    return Reason.NONE


def was_shown(s: Shown, r: Reason) -> bool:
    if r is Reason.NOT_ALLOWED:
        return s.not_allowed
    if r is Reason.LIST_UNREADABLE:
        return s.list_unreadable
    if r is Reason.NO_MODEL:
        return s.no_model
    if r is Reason.NO_KEY:
        return s.no_key
    if r is Reason.NOT_IN_SESSION:
        return s.not_in_session
    if r is Reason.TOO_SMALL:
        return s.too_small
    return False


def mark(s: Shown, r: Reason) -> Shown:
    """`s` with the row of `r` shown (NONE marks nothing)."""
    return Shown(
        s.not_allowed | (r is Reason.NOT_ALLOWED),
        s.list_unreadable | (r is Reason.LIST_UNREADABLE),
        s.no_model | (r is Reason.NO_MODEL),
        s.no_key | (r is Reason.NO_KEY),
        s.not_in_session | (r is Reason.NOT_IN_SESSION),
        s.too_small | (r is Reason.TOO_SMALL),
    )


def decide(s: Shown, a: Ask) -> Route:
    """The route of one pass, and whether its row is shown now."""
    if (not a.given) | a.same:
        return Route(False, Reason.NONE, False, s)
    r = gate(a)
    if r is Reason.NONE:
        return Route(True, Reason.NONE, False, s)
    return Route(False, r, not was_shown(s, r), mark(s, r))
