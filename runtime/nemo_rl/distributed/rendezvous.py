"""How the driver tells the actors of one worker group where to meet (standard library only).

The driver picks the address and passes it to every actor of a group as environment
variables (`MASTER_ADDR`/`MASTER_PORT`, as NeMo-RL does), so the worker constructor
contract `(config, *, rank, world_size)` stays unchanged. Both sides import these names:
the driver (which may lack torch) and the workers (`nemo_rl.distributed.data_parallel`).
"""

from __future__ import annotations

MASTER_ADDR_ENV = "MASTER_ADDR"
MASTER_PORT_ENV = "MASTER_PORT"
# Seconds a rank waits for its peers, at rendezvous and in every collective.
TIMEOUT_ENV = "NEMO_RL_DIST_TIMEOUT_S"
DEFAULT_TIMEOUT_S = 60.0


def rendezvous_env(addr: str, port: int, timeout_s: float | None = None) -> dict[str, str]:
    """The environment variables each actor of a data-parallel group gets."""
    env = {MASTER_ADDR_ENV: addr, MASTER_PORT_ENV: str(port)}
    if timeout_s is not None:
        env[TIMEOUT_ENV] = str(timeout_s)
    return env


class DataParallelError(RuntimeError):
    """Another rank failed the step, or did not join it in time; no rank updated its weights.

    Defined here, without torch, so a driver without torch can unpickle it. `waited_in`
    names the collective the rank waited in; `gave_up_after_s` is set when that wait timed
    out (the peers never came), None when a peer failed or went away. The driver reads
    both: such a rank failed because of its peers, which the call's error names instead.
    """

    def __init__(
        self, message: str, *, waited_in: str | None = None, gave_up_after_s: float | None = None
    ) -> None:
        super().__init__(message)
        self.waited_in = waited_in
        self.gave_up_after_s = gave_up_after_s
