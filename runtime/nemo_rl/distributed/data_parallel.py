"""Data-parallel gradient averaging between the ranks of one worker group (gloo).

A worker builds a `DataParallelGroup` from the rendezvous variables the worker group
put in its actor's environment (`nemo_rl.distributed.rendezvous`); with
`world_size == 1` or without them (a worker constructed in-process) there is none and
the worker trains single-process.

The process group is joined lazily, on the first collective, not in the constructor:
constructors then never block on peers, so a rank whose constructor raises is reported
(and its peers killed) by the worker group at once instead of after a rendezvous timeout.

Imports torch: only worker environments import this module, never the driver.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Iterable, Mapping

import torch
import torch.distributed as dist
from torch import nn

from nemo_rl.distributed.presence import waiting_for_peers
from nemo_rl.distributed.rendezvous import (
    DEFAULT_TIMEOUT_S,
    MASTER_ADDR_ENV,
    MASTER_PORT_ENV,
    TIMEOUT_ENV,
    DataParallelError,
)

__all__ = ["DataParallelError", "DataParallelGroup"]

RENDEZVOUS = "the data-parallel rendezvous"
ALL_REDUCE = "the data-parallel all-reduce"


class DataParallelGroup:
    """One rank's view of its gloo process group, joined on the first collective."""

    def __init__(
        self, *, rank: int, world_size: int, addr: str, port: int, timeout_s: float
    ) -> None:
        self.rank = rank
        self.world_size = world_size
        self.init_method = f"tcp://{addr}:{port}"
        self.timeout_s = timeout_s
        self._joined = False
        self._owns_group = False

    @classmethod
    def from_env(
        cls, *, rank: int, world_size: int, environ: Mapping[str, str] | None = None
    ) -> DataParallelGroup | None:
        """The group described by `environ` (default: os.environ), or None when this rank
        trains alone (`world_size == 1` or no rendezvous variables)."""
        env = os.environ if environ is None else environ
        addr, port = env.get(MASTER_ADDR_ENV), env.get(MASTER_PORT_ENV)
        if world_size <= 1 or not addr or not port:
            return None
        timeout = env.get(TIMEOUT_ENV)
        return cls(
            rank=rank,
            world_size=world_size,
            addr=addr,
            port=int(port),
            timeout_s=float(timeout) if timeout else DEFAULT_TIMEOUT_S,
        )

    def _join(self) -> None:
        if self._joined:
            return
        if not dist.is_initialized():  # else a subclass or the host set one up: use it
            dist.init_process_group(
                "gloo",
                init_method=self.init_method,
                rank=self.rank,
                world_size=self.world_size,
                timeout=datetime.timedelta(seconds=self.timeout_s),
            )
            self._owns_group = True
        self._joined = True

    def sum_(self, tensor: torch.Tensor) -> torch.Tensor:
        """All-reduce `tensor` in place (sum over ranks) and return it."""
        # Each wait is reported (nemo_rl.distributed.presence), so a call that times out
        # tells the ranks blocked here from the rank they wait for.
        where = ALL_REDUCE if self._joined else RENDEZVOUS
        try:
            if not self._joined:
                with waiting_for_peers(RENDEZVOUS):
                    self._join()
            where = ALL_REDUCE
            with waiting_for_peers(ALL_REDUCE):
                dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
        except (RuntimeError, TimeoutError) as err:  # torch's DistError family included
            timed_out = isinstance(err, TimeoutError) or "timed out" in str(err).lower()
            raise DataParallelError(
                f"rank {self.rank} of {self.world_size} (group {self.init_method}): its peers "
                f"did not join the step within {self.timeout_s:g}s or failed ({err}); every "
                "rank must take part in every train step (Policy.train calls all of them).",
                waited_in=where,
                gave_up_after_s=self.timeout_s if timed_out else None,
            ) from err
        return tensor

    def agree(self, values: Iterable[float], *, failed: bool) -> tuple[list[float], bool]:
        """Sum `values` over ranks, and whether any rank `failed`: every rank learns it
        in the same collective, so all raise together instead of waiting on a dead peer."""
        packed = torch.tensor([*values, float(failed)], dtype=torch.float64)
        summed = _floats(self.sum_(packed))
        return summed[:-1], summed[-1] > 0

    def sum_gradients(
        self, parameters: Iterable[nn.Parameter], extra: Iterable[float], *, failed: bool
    ) -> tuple[list[float], bool]:
        """Sum every parameter's gradient over ranks in one flat all-reduce (a missing
        gradient counts as zeros, e.g. on a rank with no rows), together with `extra`
        scalars and the failure flag; gradients are written back in place."""
        params = list(parameters)
        grads = [
            p.grad if p.grad is not None else torch.zeros_like(p) for p in params
        ]
        flat = torch.cat(
            [
                *(g.detach().reshape(-1).to(torch.float32) for g in grads),
                torch.tensor([*extra, float(failed)], dtype=torch.float32),
            ]
        )
        self.sum_(flat)
        offset = 0
        for param, grad in zip(params, grads, strict=True):
            count = grad.numel()
            param.grad = flat[offset:offset + count].view_as(grad).to(grad.dtype).clone()
            offset += count
        tail = _floats(flat[offset:])
        return tail[:-1], tail[-1] > 0

    def close(self) -> None:
        """Leave the process group (idempotent); only one this object created."""
        if self._owns_group and dist.is_initialized():
            dist.destroy_process_group()
        self._joined = self._owns_group = False


def _floats(tensor: torch.Tensor) -> list[float]:
    """A 1-D tensor as Python floats (`tolist` is untyped)."""
    return [float(v) for v in tensor.tolist()]
