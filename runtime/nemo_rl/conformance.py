"""Every shipped worker class, asserted against its Protocol for mypy and pyrefly.

Nothing runs here: the assignments exist only for type checkers, so a worker
whose methods drift from `contracts.protocols` fails `make typecheck`, while
importing this module stays free of torch, vLLM and modelopt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from contracts.protocols import (
        AsyncGenerationWorker,
        GenerationWorker,
        PolicyWorker,
        QuantAsyncGenerationWorker,
        QuantGenerationWorker,
        QuantPolicyWorker,
    )
    from nemo_rl.modelopt.models.generation.vllm_quant_worker import (
        VllmQuantAsyncGenerationWorker,
        VllmQuantGenerationWorker,
    )
    from nemo_rl.modelopt.models.policy.workers.automodel_quant_policy_worker import (
        AutomodelQuantPolicyWorker,
    )
    from nemo_rl.modelopt.models.policy.workers.megatron_quant_policy_worker import (
        MegatronQuantPolicyWorker,
    )
    from nemo_rl.models.generation.vllm.vllm_worker import VllmGenerationWorker
    from nemo_rl.models.generation.vllm.vllm_worker_async import VllmAsyncGenerationWorker
    from nemo_rl.models.policy.workers.automodel_policy_worker import AutomodelPolicyWorker
    from nemo_rl.models.policy.workers.megatron_policy_worker import MegatronPolicyWorker

    _megatron: type[PolicyWorker] = MegatronPolicyWorker
    _automodel: type[PolicyWorker] = AutomodelPolicyWorker
    _megatron_quant: type[QuantPolicyWorker] = MegatronQuantPolicyWorker
    _automodel_quant: type[QuantPolicyWorker] = AutomodelQuantPolicyWorker
    _vllm: type[GenerationWorker] = VllmGenerationWorker
    _vllm_async: type[AsyncGenerationWorker] = VllmAsyncGenerationWorker
    _vllm_quant: type[QuantGenerationWorker] = VllmQuantGenerationWorker
    _vllm_quant_async: type[QuantAsyncGenerationWorker] = VllmQuantAsyncGenerationWorker
