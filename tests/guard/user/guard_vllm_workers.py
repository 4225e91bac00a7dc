"""The user's own vLLM generation workers on upstream's (the 2026-08 tree's
`VllmGenerationWorkerImpl`, the undecorated class upstream's actor wraps), for the guard's
own-code rules. Never imported by any test process: the guard refuses both from source,
before anything imports them (their module imports upstream's vLLM worker, which needs vLLM)."""

from typing import TYPE_CHECKING, Any

import ray

if TYPE_CHECKING:  # the reference runtime, which type checkers see as nemo_rl, has no such class

    class VllmGenerationWorkerImpl:
        def _create_engine(self, llm_kwargs: dict[str, Any]) -> None: ...
else:
    from nemo_rl.models.generation.vllm.vllm_worker import VllmGenerationWorkerImpl


@ray.remote(num_cpus=0)
class NoKwargsEngineWorker(VllmGenerationWorkerImpl):
    """Its override takes no `llm_kwargs`, which upstream's `__init__` passes."""

    def _create_engine(self) -> None:  # type: ignore[override]  # the mistake under test
        pass


@ray.remote(num_cpus=0)
class OwnExtensionWorker(VllmGenerationWorkerImpl):
    """Hands vLLM an extension of its own, whose `load_model` vLLM's worker already has."""

    def _create_engine(self, llm_kwargs: dict[str, Any]) -> None:
        llm_kwargs["worker_extension_cls"] = "guard_vllm_workers.ClashingExtension"
        super()._create_engine(llm_kwargs)


class ClashingExtension:
    def load_model(self) -> None:  # the mistake under test: vLLM's Worker has load_model
        pass

    def report_checksum(self) -> str:
        return "ok"
