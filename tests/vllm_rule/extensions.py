"""vLLM worker extensions written for the clash rule: each clashing one a fault injected on
purpose (named so), each passing one a case vLLM's rule lets through.

vLLM 0.33's rule (stubs/manifest.json `extension_rule`): every name of `dir(extension)` not
starting with `__` must not exist on vllm.v1.worker.gpu_worker.Worker as a class.
"""

from __future__ import annotations

from typing import ClassVar

from nemo_rl.models.generation.vllm.vllm_backend import VllmInternalWorkerExtension
from nemo_rl.models.generation.vllm.vllm_worker import VllmGenerationWorker


class ClashingSynchronizeExtension(VllmInternalWorkerExtension):
    """Fault on purpose: `synchronize_device` is WorkerBase's (as upstream's extension has it)."""

    def synchronize_device(self) -> None:
        return None


class _ClashingMixin:
    """Fault on purpose, inherited: `_maybe_get_memory_pool_context` is Worker's helper."""

    def _maybe_get_memory_pool_context(self) -> None:
        return None


class ClashingInheritedExtension(_ClashingMixin, VllmInternalWorkerExtension):
    """Fault on purpose: the clash comes from a base; a class attribute clashes too."""

    sleep_mode_backend: ClassVar[str] = "ours"  # a property of vLLM's Worker


class ClashingMroExtension(VllmInternalWorkerExtension):
    """Fault on purpose: `hasattr(Worker, "mro")` is true through Worker's metaclass."""

    def mro(self) -> list[str]:
        return []


class PassingExtension(VllmInternalWorkerExtension):
    """No clash: dunder names are skipped, a mangled private name is `_PassingExtension__x`,
    and `rank` / `model_runner` are instance attributes of vLLM's worker, not class ones."""

    __slots__ = ()
    __private_counter = 0

    def __repr__(self) -> str:
        return "PassingExtension"

    def rank(self) -> int:
        return self.__private_counter

    def nemo_rl_model_runner(self) -> None:
        return None


class ClashingGenerationWorker(VllmGenerationWorker):
    """Fault on purpose: a generation worker handing vLLM a clashing extension."""

    extension_fqn = f"{__name__}.ClashingSynchronizeExtension"


class PassingGenerationWorker(VllmGenerationWorker):
    extension_fqn = f"{__name__}.PassingExtension"
