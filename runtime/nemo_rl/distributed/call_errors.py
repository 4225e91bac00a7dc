"""A failed worker call as one error: every rank's outcome, and one sentence naming the fault.

Pure (no Ray import): the worker group classifies what Ray returned into `RankOutcome`s
(`nemo_rl.distributed.call_outcomes`); this module decides which ranks are at fault and
words the sentence, so the wording is testable without a cluster.

A rank is *at fault* when it raised, died, was cancelled, or did not answer while not
waiting for anyone. A rank that is blocked in a collective (it reported entering one), or
that failed only because its peers did (`DataParallelError`), is a *consequence*: the
sentence names it after the faulty ranks, never instead of them, unless no rank is at fault.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from nemo_rl_workers.errors import one_line

CallFaultKind = Literal["refused", "raised", "died", "hung", "cancelled"]
RankState = Literal["ok", "raised", "died", "cancelled", "hung", "blocked", "unanswered"]

# Longest original message kept in the sentence (the full one is in the outcome).
MESSAGE_LIMIT = 300
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass(frozen=True)
class RankOutcome:
    """What one rank's call came to.

    `state`: ok; raised (the method raised); died (the actor died: `cause` says how, in
    words); cancelled; hung (no answer by the call's deadline, not inside a collective);
    blocked (no answer, inside the collective `waiting_in` for `waited_s` seconds);
    unanswered (still running `settle_s` after another rank's fault).
    `consequence`: it failed only because its peers did (a data-parallel peer error);
    `gave_up_after_s`: such a rank's wait for its peers timed out after that long.
    """

    rank: int
    state: RankState
    node: str | None = None
    error_type: str | None = None
    message: str | None = None
    traceback: str | None = None
    cause: str | None = None
    waiting_in: str | None = None
    waited_s: float | None = None
    consequence: bool = False
    gave_up_after_s: float | None = None

    @property
    def ok(self) -> bool:
        return self.state == "ok"

    @property
    def at_fault(self) -> bool:
        if self.state in ("ok", "blocked", "unanswered"):
            return False
        return not self.consequence


def short_node(node: str | None) -> str | None:
    """A Ray node ID as people read it: its first 8 hex digits and an ellipsis."""
    if not node:
        return None
    return node if len(node) <= 8 else f"{node[:8]}…"


def clean_text(text: str) -> str:
    """Ray's text without terminal colours (Ray colours actor reprs and tracebacks)."""
    return _ANSI.sub("", text)


def _first_line(text: str) -> str:
    line = next((ln for ln in clean_text(text).splitlines() if ln.strip()), "")
    line = one_line(line.strip())
    return line if len(line) <= MESSAGE_LIMIT else line[: MESSAGE_LIMIT - 1] + "…"


def ranks_text(ranks: Sequence[int]) -> str:
    listed = ", ".join(str(r) for r in ranks)
    return f"rank {listed}" if len(ranks) == 1 else f"ranks {listed}"


def _seconds(value: float | None) -> str:
    return "?" if value is None else f"{value:.3g} s"


def _describe(outcome: RankOutcome) -> str:
    """What went wrong on one faulty rank, without its rank number."""
    if outcome.state == "died":
        return f"the worker died ({outcome.cause or 'cause unknown'})"
    if outcome.state == "cancelled":
        return "the call was cancelled"
    if outcome.state == "hung":
        return "no answer"
    kind = outcome.error_type or "Exception"
    message = _first_line(outcome.message or "")
    return f"{kind}: {message}" if message else kind


def _where(fqn: str, outcomes: Sequence[RankOutcome]) -> str:
    nodes = list(dict.fromkeys(n for o in outcomes if (n := short_node(o.node))))
    if not nodes:
        return fqn
    return f"{fqn} on node{'s' if len(nodes) > 1 else ''} {', '.join(nodes)}"


def _it(ranks: Sequence[int]) -> str:
    return "it" if len(ranks) == 1 else "them"


def _consequences(
    faulty: Sequence[RankOutcome], others: Sequence[RankOutcome], settle_s: float | None
) -> list[str]:
    """Clauses for the ranks that are not at fault but did not succeed either."""
    it = _it([o.rank for o in faulty])
    clauses: list[str] = []
    blocked = [o for o in others if o.state == "blocked"]
    for where in dict.fromkeys(o.waiting_in or "a collective" for o in blocked):
        ranks = [o.rank for o in blocked if (o.waiting_in or "a collective") == where]
        verb = "is" if len(ranks) == 1 else "are"
        clauses.append(f"{ranks_text(ranks)} {verb} blocked in {where} waiting for {it}")
    gave_up = [o for o in others if o.consequence and o.gave_up_after_s is not None]
    for o in gave_up:
        where = o.waiting_in or "a collective"
        clauses.append(f"rank {o.rank} gave up waiting for {it} in {where} after "
                       f"{_seconds(o.gave_up_after_s)}")
    failed_too = [o.rank for o in others if o.consequence and o.gave_up_after_s is None]
    if failed_too:
        clauses.append(f"{ranks_text(failed_too)} failed because of {it}")
    unanswered = [o.rank for o in others if o.state == "unanswered"]
    if unanswered:
        clauses.append(f"{ranks_text(unanswered)} had not answered {_seconds(settle_s)} later")
    return clauses


def failure_sentence(
    method: str,
    fqn: str,
    world_size: int,
    outcomes: Sequence[RankOutcome],
    *,
    call_timeout_s: float | None = None,
    settle_s: float | None = None,
) -> tuple[CallFaultKind, list[RankOutcome], str]:
    """(kind, faulty ranks' outcomes, the one sentence) of a call some rank failed."""
    failed = [o for o in outcomes if not o.ok]
    if not failed:
        raise ValueError("failure_sentence needs at least one rank that did not succeed")
    faulty = [o for o in failed if o.at_fault]
    if not faulty:
        # Nobody raised, died or hung outright: the ranks that still run without waiting
        # for anyone are the ones the others gave up on; failing that, the consequences
        # are all we know.
        faulty = (
            [o for o in failed if o.state == "unanswered"]
            or [o for o in failed if o.state != "blocked"]
            or failed
        )
    others = [o for o in failed if o not in faulty]
    states = {o.state for o in faulty}
    kind: CallFaultKind
    if "died" in states:
        kind = "died"
    elif "raised" in states:
        kind = "raised"
    elif "cancelled" in states:
        kind = "cancelled"
    else:
        kind = "hung"
    ranks = [o.rank for o in faulty]
    verb = {"hung": "hung", "cancelled": "was cancelled"}.get(kind, "failed")
    head = f"{method} {verb} on {ranks_text(ranks)} of {world_size} ({_where(fqn, faulty)})"
    clauses = _consequences(faulty, others, settle_s)
    if kind == "hung":
        if all(o.state == "blocked" for o in faulty):
            wheres = ", ".join(dict.fromkeys(o.waiting_in or "a collective" for o in faulty))
            what = (f"no answer within {_seconds(call_timeout_s)} (call_timeout_s), blocked in "
                    f"{wheres} waiting for ranks not in this call")
            return kind, faulty, f"{head}: {what}"
        if any(o.state == "hung" for o in faulty):
            what = f"no answer within {_seconds(call_timeout_s)} (call_timeout_s)"
            return kind, faulty, "; ".join([f"{head}: {what}", *clauses])
        # Unanswered: the others' give-ups (or failures) are what says it hangs.
        return kind, faulty, f"{head}: " + "; ".join(clauses or ["no answer"])
    descriptions = {o.rank: _describe(o) for o in faulty}
    if len(set(descriptions.values())) == 1:
        what = next(iter(descriptions.values()))
    else:
        what = "; ".join(f"rank {r}: {d}" for r, d in descriptions.items())
    return kind, faulty, "; ".join([f"{head}: {what}", *clauses])


class WorkerCallError(RuntimeError):
    """A worker call failed: raised, died, hung or was cancelled on some rank(s).

    `str(err)` is one sentence naming the method, the faulty rank(s), their node and the
    worker class, and what happened; `outcomes` holds every rank's outcome, `remote_traceback`
    the first faulty rank's remote traceback (also on `__cause__`, the original exception).
    """

    def __init__(
        self,
        sentence: str,
        *,
        kind: CallFaultKind,
        method: str,
        fqn: str,
        world_size: int,
        outcomes: Sequence[RankOutcome] = (),
        faulty: Sequence[RankOutcome] = (),
    ) -> None:
        super().__init__(sentence)
        self.sentence = sentence
        self.kind: CallFaultKind = kind
        self.method = method
        self.fqn = fqn
        self.world_size = world_size
        self.outcomes: tuple[RankOutcome, ...] = tuple(outcomes)
        self.ranks: tuple[int, ...] = tuple(o.rank for o in faulty)
        self.nodes: tuple[str | None, ...] = tuple(o.node for o in faulty)
        first = faulty[0] if faulty else None
        self.error_type: str | None = first.error_type if first else None
        self.error_message: str | None = first.message if first else None
        self.remote_traceback: str | None = first.traceback if first else None
        self.death_cause: str | None = first.cause if first else None

    def __str__(self) -> str:
        return self.sentence

    @classmethod
    def from_outcomes(
        cls,
        method: str,
        fqn: str,
        world_size: int,
        outcomes: Sequence[RankOutcome],
        *,
        call_timeout_s: float | None = None,
        settle_s: float | None = None,
    ) -> WorkerCallError:
        kind, faulty, sentence = failure_sentence(
            method, fqn, world_size, outcomes, call_timeout_s=call_timeout_s, settle_s=settle_s
        )
        err = cls(sentence, kind=kind, method=method, fqn=fqn, world_size=world_size,
                  outcomes=outcomes, faulty=faulty)
        err.add_note("\n".join(_outcome_line(o) for o in outcomes))
        return err


def as_instance_of_cause(err: WorkerCallError, cause: BaseException) -> WorkerCallError:
    """`err` as an instance of both WorkerCallError and the class of the remote exception
    (as Ray's `RayTaskError(X)` is), so `except X` around a worker call still catches a
    remote X. `err` itself where that class cannot be combined (its layout, or `final`)."""
    cls = type(cause)
    if isinstance(err, cls) or not isinstance(cause, Exception):
        return err
    try:
        dual = type(f"WorkerCallError({cls.__name__})", (type(err), cls),
                    {"__str__": WorkerCallError.__str__, "__module__": __name__})
        combined: WorkerCallError = BaseException.__new__(dual, err.sentence)
    except TypeError:  # a layout conflict, or a class that refuses subclasses
        return err
    combined.__dict__.update(getattr(cause, "__dict__", {}))
    combined.__dict__.update(err.__dict__)
    combined.args = err.args
    return combined


def _outcome_line(o: RankOutcome) -> str:
    where = f" on node {short_node(o.node)}" if o.node else ""
    text = {
        "ok": "answered",
        "raised": f"raised {o.error_type}: {_first_line(o.message or '')}",
        "died": f"died ({o.cause})",
        "cancelled": "cancelled",
        "hung": "no answer",
        "blocked": f"blocked in {o.waiting_in} for {_seconds(o.waited_s)}",
        "unanswered": "no answer yet",
    }[o.state]
    return f"rank {o.rank}{where}: {text}"


class WorkerMethodError(WorkerCallError, TypeError):
    """A worker call names no method of the group's Protocol; nothing was sent to a worker."""

    def __init__(self, fqn: str, protocol: str, method: str) -> None:
        self.protocol = protocol
        super().__init__(
            f"{fqn} workers are called as {protocol}, which has no method {method!r}; "
            f"narrow the group to a Protocol that declares it (group.narrow(P)) first.",
            kind="refused", method=method, fqn=fqn, world_size=0,
        )
