"""The PEP 678 note a failed call of a guarded worker group gains.

The exception keeps its type and object (Ray's `RayTaskError` subclass of the worker's
own exception type); `add_note` appends one sentence naming the method, the rank of the
total, the group, the class, the node and pid Ray reports, and the cause. It says only
what it read: the rank comes from the group's own list of actors (matched by actor id),
the node and pid from the error Ray raised; where a name matches no worker, that no
worker ran it. Python prints notes after the exception line, so an uncaught one ends
the output with that sentence.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from nemo_rl_workers.guard import PREFIX

_NOTED = "__nemo_rl_workers_guard_noted__"
# The first line Ray writes for a task error (ray 2.x): "ray::Class.method() (pid=P,
# ip=I, actor_id=A, repr=...)", in colour on a terminal. The error that `ray.get` raises
# (a subclass of the worker's own type) carries these only in its text.
_RAY_LINE = re.compile(
    r"ray::(?P<function>[\w.]+)\(\)\S*\s+\(pid=(?P<pid>\d+), ip=(?P<ip>[^,)]+)"
    r"(?:, actor_id=(?P<actor>[0-9a-f]+))?")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass(frozen=True)
class Member:
    """One worker of a guarded group."""

    rank: int
    world: int
    group: str
    fqn: str


class Members:
    """Actor id (hex) -> the worker it is, for every guarded group of this process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_actor: dict[str, Member] = {}

    def add_group(self, actor_ids: Sequence[str], group: str, fqn: str) -> None:
        with self._lock:
            for rank, actor in enumerate(actor_ids):
                self._by_actor[actor] = Member(rank, len(actor_ids), group, fqn)

    def get(self, actor: str) -> Member | None:
        with self._lock:
            return self._by_actor.get(actor)


MEMBERS = Members()


def actor_hex(handle: object) -> str | None:
    """The actor id of a Ray actor handle, as hex; None where it has none."""
    actor_id = getattr(handle, "_actor_id", None)
    hex_of = getattr(actor_id, "hex", None)
    return str(hex_of()) if callable(hex_of) else None


def _cause(error: BaseException) -> str:
    cause = getattr(error, "cause", None)
    shown = cause if isinstance(cause, BaseException) else error
    first = (str(shown).strip().splitlines() or [""])[0]
    return f"{type(shown).__name__}: {first}" if first else type(shown).__name__


def _shown_group(group: str) -> str:
    return f"worker group {group!r}" if group else "an unnamed worker group"


def note_task_error(error: BaseException) -> bool:
    """Add the sentence to a `RayTaskError` from a guarded group's actor; True if added."""
    if getattr(error, _NOTED, False):
        return False
    found = _RAY_LINE.search(_ANSI.sub("", str(error)[:2000]))
    if found is None or not found.group("actor"):
        return False
    member = MEMBERS.get(found.group("actor"))
    if member is None:
        return False
    method = found.group("function").rpartition(".")[2] or "a method"
    where = []
    ip, pid = found.group("ip"), found.group("pid")
    if ip:
        where.append(f"node {ip}")
    if pid:
        where.append(f"pid {pid}")
    shown = f", {', '.join(where)}" if where else ""
    error.add_note(
        f"{PREFIX}: worker call {method} failed on rank {member.rank} of {member.world} of "
        f"{_shown_group(member.group)} (class {member.fqn}{shown}): {_cause(error)}")
    setattr(error, _NOTED, True)
    return True


def note_no_worker(error: BaseException, method: str, group: str, fqn: str,
                   entry: str) -> bool:
    """A name no worker has: the group's `entry` (run_*) found no such method on its
    actor handles, so no worker ran it."""
    if getattr(error, _NOTED, False):
        return False
    error.add_note(
        f"{PREFIX}: {entry}({method!r}) of {_shown_group(group)}: no worker ran it; the "
        f"actors of class {fqn} have no method {method} (check the name, or add the method "
        "to the class)")
    setattr(error, _NOTED, True)
    return True
