"""The ModelOpt-quantized Megatron policy worker (reference implementation; not Megatron-LM)."""

from __future__ import annotations

from nemo_rl.modelopt.models.policy.workers.quant_policy_base import QuantizedPolicyWorkerBase
from nemo_rl.models.policy.workers.megatron_policy_worker import MegatronPolicyWorker


class MegatronQuantPolicyWorker(QuantizedPolicyWorkerBase, MegatronPolicyWorker):
    """MegatronPolicyWorker training through a ModelOpt fake-quantized model."""
