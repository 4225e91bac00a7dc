"""Every rank's outcome of one worker call, read from Ray: results, errors, deaths, silence.

`collect` waits for the ranks' answers up to the call's deadline; once one rank fails, the
others get `settle_s` more to answer (their peers may fail with it, or be blocked waiting
for it), so a fault ends the call in bounded time even without a call timeout. A dead
actor's cause comes from Ray's control store (the actor table keeps it, no dashboard).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import ray
from ray.exceptions import (
    GetTimeoutError,
    RayActorError,
    RayError,
    RayTaskError,
    TaskCancelledError,
)

from nemo_rl.distributed.call_errors import RankOutcome, RankState, clean_text
from nemo_rl.distributed.presence import read_presence
from nemo_rl.distributed.rendezvous import DataParallelError

# Ray's reason for an actor's death (ActorDiedErrorContext.Reason), in words.
DEATH_REASONS: Mapping[str, str] = {
    "RAY_KILL": "killed by ray.kill",
    "WORKER_DIED": "its process exited unexpectedly: a crash, os._exit, or the OOM killer",
    "NODE_DIED": "its node was lost",
    "OWNER_DIED": "its owner (the driver) went away",
    "OUT_OF_SCOPE": "its handle went out of scope",
    "REF_DELETED": "its handle was deleted",
}
# The other kinds of death cause Ray records (ActorDeathCause's context), in words.
DEATH_CONTEXTS: Mapping[str, str] = {
    "oom_context": "out of memory: Ray's memory monitor killed it",
    "creation_task_failure_context": "its constructor raised",
    "runtime_env_failed_context": "its runtime environment failed to set up",
    "actor_unschedulable_context": "it could not be scheduled",
}
# How often a call with no deadline wakes, so Ctrl-C is seen promptly.
POLL_S = 1.0


@dataclass
class CallResult:
    """The results by position of the ranks that answered, and every rank's outcome."""

    values: list[Any]
    outcomes: list[RankOutcome]

    @property
    def failed(self) -> bool:
        return any(not o.ok for o in self.outcomes)


def death_cause(actor_id: str | None, fallback: str) -> str:
    """Ray's recorded cause of an actor's death, in words; `fallback` (Ray's text) if none."""
    if actor_id:
        try:
            from ray._private import state  # the GCS actor table; keeps dead actors

            info: dict[str, Any] = state.actors(actor_id=actor_id)
            cause = info.get("DeathCause")
            for descriptor, value in cause.ListFields() if cause is not None else ():
                words = DEATH_CONTEXTS.get(descriptor.name)
                if words is not None:
                    return words
                if descriptor.name == "actor_died_error_context":
                    reason = value.DESCRIPTOR.fields_by_name["reason"].enum_type
                    name = reason.values_by_number[value.reason].name
                    if name in DEATH_REASONS:
                        return DEATH_REASONS[name]
        except Exception:  # noqa: BLE001 - the table is a courtesy; Ray's own text remains
            pass
    text = clean_text(fallback).splitlines()
    line = next((ln for ln in reversed(text) if "dead because" in ln), text[0] if text else "")
    return line.strip() or "cause unknown"


def _raised(rank: int, node: str | None, err: RayTaskError) -> RankOutcome:
    cause: BaseException | None = getattr(err, "cause", None)
    # The dual `RayTaskError(X)` Ray raises keeps the remote traceback only in its text.
    remote = clean_text(str(getattr(err, "traceback_str", "") or err))
    if cause is None or isinstance(cause, RayTaskError):
        return RankOutcome(rank, "raised", node, error_type=type(err).__name__,
                           message=clean_text(str(err)), traceback=remote)
    outcome = RankOutcome(rank, "raised", node, error_type=type(cause).__name__,
                          message=str(cause), traceback=remote)
    if isinstance(cause, DataParallelError):
        return RankOutcome(rank, "raised", node, error_type=type(cause).__name__,
                           message=str(cause), traceback=remote, consequence=True,
                           waiting_in=cause.waited_in, gave_up_after_s=cause.gave_up_after_s)
    return outcome


def _outcome(
    rank: int, node: str | None, ref: Any
) -> tuple[Any, RankOutcome, BaseException | None]:
    """(value, outcome, the exception to chain) of one answered call."""
    try:
        return ray.get(ref), RankOutcome(rank, "ok", node), None
    except RayTaskError as err:
        cause = getattr(err, "cause", None)
        chained = cause if isinstance(cause, BaseException) else err
        return None, _raised(rank, node, err), chained
    except TaskCancelledError as err:
        return None, RankOutcome(rank, "cancelled", node, error_type=type(err).__name__,
                                 message=clean_text(str(err))), err
    except RayActorError as err:
        text = str(err)
        cause_words = death_cause(getattr(err, "actor_id", None), text)
        return None, RankOutcome(rank, "died", node, error_type=type(err).__name__,
                                 message=clean_text(text), cause=cause_words), err


def collect(
    refs: Sequence[Any],
    ranks: Sequence[int],
    nodes: Sequence[str | None],
    *,
    timeout_s: float | None,
    settle_s: float,
    presence_prefix: str | None,
) -> tuple[CallResult, dict[int, BaseException]]:
    """Wait for every rank's answer (see the module's docstring); (result, {rank: cause})."""
    start = time.monotonic()
    deadline = None if timeout_s is None else start + timeout_s
    # The common case first, at the cost of one `ray.get`: every rank answers quickly.
    first = POLL_S if deadline is None else min(POLL_S, timeout_s or 0.0)
    try:
        answered: list[Any] = ray.get(list(refs), timeout=first)
        return CallResult(answered, [RankOutcome(r, "ok", n) for r, n in zip(ranks, nodes,
                                                                             strict=True)]), {}
    except GetTimeoutError:
        pass  # some rank is still running: follow each one below
    except RayError:
        pass  # some rank failed: classify every rank's outcome below
    except KeyboardInterrupt:
        for ref in refs:  # queued calls do not run; running ones cannot be interrupted
            ray.cancel(ref)
        raise
    pending: dict[Any, int] = {ref: i for i, ref in enumerate(refs)}
    values: list[Any] = [None] * len(refs)
    outcomes: dict[int, RankOutcome] = {}
    causes: dict[int, BaseException] = {}
    settle_until: float | None = None
    timed_out = False
    try:
        while pending:
            now = time.monotonic()
            ends = [t for t in (deadline, settle_until) if t is not None]
            end = min(ends) if ends else None
            if end is not None and now >= end:
                timed_out = end == deadline
                break
            wait = POLL_S if end is None else min(POLL_S, end - now)
            done, _ = ray.wait(list(pending), num_returns=1, timeout=max(wait, 0.0))
            for ref in done:
                i = pending.pop(ref)
                value, outcome, cause = _outcome(ranks[i], nodes[i], ref)
                values[i] = value
                outcomes[i] = outcome
                if cause is not None:
                    causes[ranks[i]] = cause
                if not outcome.ok and settle_until is None:
                    settle_until = time.monotonic() + settle_s
    except KeyboardInterrupt:
        for ref in pending:  # queued calls do not run; running ones cannot be interrupted
            ray.cancel(ref)
        raise
    if pending:
        silent = {i: ranks[i] for i in pending.values()}
        inside = read_presence(presence_prefix, list(silent.values())) if presence_prefix else {}
        for i, rank in silent.items():
            if rank in inside:
                where, waited = inside[rank]
                outcomes[i] = RankOutcome(rank, "blocked", nodes[i], waiting_in=where,
                                          waited_s=waited)
            else:
                state: RankState = (
                    "hung" if timed_out or settle_until is None else "unanswered"
                )
                outcomes[i] = RankOutcome(rank, state, nodes[i])
    return CallResult(values, [outcomes[i] for i in range(len(refs))]), causes
