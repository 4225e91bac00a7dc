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
