"""The constructor call a worker builder makes, as the verifier checks it.

Ray reports a constructor that cannot take the builder's arguments only when the
actor starts; binding the same call shape against the signature catches it first.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class InitCall:
    """Names of the positional and keyword arguments passed to `Worker(...)`."""

    positional: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()


# What nemo_rl's RayWorkerBuilder passes, per worker role.
POLICY_INIT = InitCall(positional=("config",), keywords=("rank", "world_size"))
GENERATION_INIT = InitCall(
    positional=("config",), keywords=("rank", "world_size", "defer_model_load")
)
INIT_CALLS: dict[str, InitCall] = {"policy": POLICY_INIT, "generation": GENERATION_INIT}
