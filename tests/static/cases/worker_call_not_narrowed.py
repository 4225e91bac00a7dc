"""A method of a wider Protocol needs a group narrowed to it: the quantizer statistics of
a QuantPolicyWorker, or an extension's own method (the template's WeightNormWorker)."""

from __future__ import annotations

from typing import Protocol

from contracts import PolicyWorker, QuantPolicyWorker
from nemo_rl.distributed.worker_groups import RayWorkerGroup


class WeightNormWorker(PolicyWorker, Protocol):
    """An extension's contract, as research/template_project declares it."""

    def get_weight_norm(self) -> float: ...


def stats(group: RayWorkerGroup[PolicyWorker]) -> None:
    group.run_all(QuantPolicyWorker.get_quantizer_stats)  # type: ignore[call-overload]  # pyrefly: ignore[no-matching-overload]  # not narrowed
    group.narrow(QuantPolicyWorker).run_all(QuantPolicyWorker.get_quantizer_stats)


def norms(group: RayWorkerGroup[PolicyWorker]) -> None:
    group.run_all(WeightNormWorker.get_weight_norm)  # type: ignore[call-overload]  # pyrefly: ignore[no-matching-overload]  # extension not narrowed
    group.narrow(WeightNormWorker).run_all(WeightNormWorker.get_weight_norm)


def widened(group: RayWorkerGroup[WeightNormWorker]) -> RayWorkerGroup[QuantPolicyWorker]:
    return group  # type: ignore[return-value]  # pyrefly: ignore[bad-return]  # a group is not typed wider than it is
