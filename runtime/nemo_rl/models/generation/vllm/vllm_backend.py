"""NeMo-RL's internal vLLM worker extension (`worker_extension_cls`).

vLLM mixes this class into each of its GPU worker processes, so its methods run
there and are reached from the generation worker through `collective_rpc(name)`.
`self` is then vLLM's worker: `model_runner.model` is the loaded torch model.
Importing this module imports neither vLLM nor torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, cast

from nemo_rl.modelopt.quantization import weight_snapshot

if TYPE_CHECKING:
    from torch import nn


class _ModelRunner(Protocol):
    model: nn.Module


class VllmWorkerHost(Protocol):
    """The part of vLLM's GPU worker the extensions use."""

    model_runner: _ModelRunner

    def execute_dummy_batch(self) -> None: ...


class VllmInternalWorkerExtension:
    """Methods NeMo-RL calls inside vLLM's GPU workers.

    vLLM refuses an extension whose attribute names clash with its worker's, hence
    the `nemo_rl_` prefix on the helper below.
    """

    def nemo_rl_host(self) -> VllmWorkerHost:
        """`self` as the vLLM worker it is mixed into."""
        return cast(VllmWorkerHost, self)

    def report_device_id(self) -> str:
        """The CUDA device this worker runs on, e.g. 'cuda:0'."""
        return str(next(self.nemo_rl_host().model_runner.model.parameters()).device)

    def weight_snapshot(self, name: str) -> list[float]:
        """Leading values of the loaded model's parameter `name` (to check refits)."""
        return weight_snapshot(self.nemo_rl_host().model_runner.model, name)
