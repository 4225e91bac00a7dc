"""Which ranks of a worker group are inside a collective, as the ranks themselves report it.

A rank about to wait for its peers (the data-parallel rendezvous, an all-reduce) writes one
key into Ray's internal key-value store (kept by the cluster's control store, so it needs
no extra actor and survives the rank's own hang); it deletes the key when the wait ends.
When a call times out the driver reads the keys of the ranks that did not answer: a rank
with a key is blocked waiting for its peers, a rank without one is the one that hangs.

The worker group puts the group's key prefix in each actor's environment
(`PRESENCE_ENV`); without it (a worker constructed in-process, or outside Ray) reporting
is a no-op. Both sides import this module; it imports Ray only when it reports or reads.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Generator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

PRESENCE_ENV = "NEMO_RL_PRESENCE_KEY"
RANK_ENV = "NEMO_RL_PRESENCE_RANK"
NAMESPACE = "nemo_rl_presence"


def presence_env(prefix: str) -> dict[str, str]:
    """The environment variables that make a group's ranks report (the rank is added per actor)."""
    return {PRESENCE_ENV: prefix}


def _key(prefix: str, rank: int) -> bytes:
    return f"{prefix}/{rank}".encode()


def _kv() -> Any:
    """Ray's internal KV module when this process is connected to a cluster, else None."""
    try:
        import ray
        from ray.experimental import internal_kv
    except ImportError:
        return None
    return internal_kv if ray.is_initialized() else None


@contextmanager
def waiting_for_peers(what: str, environ: Mapping[str, str] | None = None) -> Generator[None]:
    """Report this rank as inside `what` (e.g. "the data-parallel all-reduce") while the block
    runs. Reporting never fails the block: a store that cannot be written is skipped."""
    env = os.environ if environ is None else environ
    prefix, rank = env.get(PRESENCE_ENV), env.get(RANK_ENV)
    kv = _kv() if prefix and rank else None
    if kv is None or prefix is None or rank is None:
        yield
        return
    key = _key(prefix, int(rank))
    entered = False
    try:
        value = json.dumps({"what": what, "since": time.time()}).encode()
        kv._internal_kv_put(key, value, overwrite=True, namespace=NAMESPACE)
        entered = True
    except Exception:  # noqa: BLE001 - reporting is best effort; the collective must run
        pass
    try:
        yield
    finally:
        if entered:
            try:
                kv._internal_kv_del(key, namespace=NAMESPACE)
            except Exception:  # noqa: BLE001 - best effort, as above
                pass


def read_presence(prefix: str, ranks: Sequence[int]) -> dict[int, tuple[str, float]]:
    """{rank: (what it waits in, seconds so far)} for those of `ranks` inside a collective."""
    kv = _kv()
    if kv is None:
        return {}
    found: dict[int, tuple[str, float]] = {}
    now = time.time()
    for rank in ranks:
        try:
            raw = kv._internal_kv_get(_key(prefix, rank), namespace=NAMESPACE)
        except Exception:  # noqa: BLE001 - an unreadable store says nothing about the rank
            continue
        if not isinstance(raw, bytes):
            continue
        try:
            data = json.loads(raw)
            found[rank] = (str(data["what"]), max(0.0, now - float(data["since"])))
        except (ValueError, KeyError, TypeError):
            continue
    return found


def clear_presence(prefix: str) -> None:
    """Delete every key of a group (at shutdown: killed ranks cannot delete their own)."""
    kv = _kv()
    if kv is None:
        return
    try:
        kv._internal_kv_del(f"{prefix}/".encode(), del_by_prefix=True, namespace=NAMESPACE)
    except Exception:  # noqa: BLE001 - a cluster already gone holds nothing to delete
        pass
