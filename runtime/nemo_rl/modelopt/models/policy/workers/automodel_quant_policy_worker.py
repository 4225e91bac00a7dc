"""The ModelOpt-quantized Automodel policy worker (reference implementation; not NeMo Automodel)."""

from __future__ import annotations

from nemo_rl.modelopt.models.policy.workers.quant_policy_base import QuantizedPolicyWorkerBase
from nemo_rl.models.policy.workers.automodel_policy_worker import AutomodelPolicyWorker


class AutomodelQuantPolicyWorker(QuantizedPolicyWorkerBase, AutomodelPolicyWorker):
    """AutomodelPolicyWorker training through a ModelOpt fake-quantized model."""
