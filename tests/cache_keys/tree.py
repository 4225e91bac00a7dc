"""A small NeMo-RL-shaped tree and an extension package beside it, written for the cache
key tests: a vLLM generation driver calling its workers' `generate` by name (upstream's
idiom), the worker, the extension vLLM is handed, a caller, and `pyproject.toml`."""

from __future__ import annotations

import textwrap
from pathlib import Path

WORKER = "nemo_rl/models/generation/vllm/vllm_worker.py"
GENERATION = "nemo_rl/models/generation/vllm/vllm_generation.py"
EXTENSION = "myext.gen.MyGenerationWorker"

TREE = {
    "nemo_rl/__init__.py": "",
    "nemo_rl/distributed/__init__.py": "",
    "nemo_rl/distributed/worker_groups.py": '''
        from typing import Any


        class RayWorkerBuilder:
            def __init__(self, ray_actor_class_fqn: str, *args: Any, **kwargs: Any) -> None:
                self.ray_actor_class_fqn = ray_actor_class_fqn


        class RayWorkerGroup:
            def __init__(self, cluster: Any, remote_worker_builder: RayWorkerBuilder) -> None:
                self.workers: list[Any] = []

            def run_all_workers_single_data(self, method_name: str, *args: Any,
                                            **kwargs: Any) -> Any:
                return [getattr(w, method_name).remote(*args, **kwargs) for w in self.workers]
        ''',
    "nemo_rl/models/__init__.py": "",
    "nemo_rl/models/generation/__init__.py": "",
    "nemo_rl/models/generation/vllm/__init__.py": "",
    "nemo_rl/models/generation/vllm/vllm_backend.py": '''
        class VllmInternalWorkerExtension:
            def update_weights_from_ipc(self) -> bool:
                return True
        ''',
    WORKER: '''
        from typing import Any

        import ray


        class VllmGenerationWorkerImpl:
            def __init__(self, config: dict[str, Any]) -> None:
                self.cfg = config
                self.llm: Any = None

            def _load_model(self) -> None:
                from vllm import LLM

                self.llm = LLM(
                    model=self.cfg["model_name"],
                    worker_extension_cls="nemo_rl.models.generation.vllm.vllm_backend."
                    "VllmInternalWorkerExtension",
                )

            def generate(self, data: Any, greedy: bool = False) -> Any:
                return data


        @ray.remote
        class VllmGenerationWorker(VllmGenerationWorkerImpl):
            pass
        ''',
    GENERATION: '''
        from typing import Any

        from nemo_rl.distributed.worker_groups import RayWorkerBuilder, RayWorkerGroup


        class VllmGeneration:
            def __init__(self, cluster: Any, config: dict[str, Any]) -> None:
                worker_cls = "nemo_rl.models.generation.vllm.vllm_worker.VllmGenerationWorker"
                self.worker_group = RayWorkerGroup(cluster, RayWorkerBuilder(worker_cls, config))

            def generate(self, data: Any, greedy: bool = False) -> Any:
                return self.worker_group.run_all_workers_single_data(
                    "generate", data=data, greedy=greedy)
        ''',
    "nemo_rl/algorithms/__init__.py": "",
    "nemo_rl/algorithms/grpo.py": '''
        def train(generation, batch):
            return generation.generate(batch, greedy=True)
        ''',
    "pyproject.toml": '''
        [project]
        name = "nemo-rl"
        dependencies = ["vllm==0.33.0"]
        ''',
}

# The extension package, an import root of its own (`--path ext`): one generation worker
# that takes what the driver sends, and its method in a mixin module of the package.
MIXIN = "myext/mixin.py"
GOOD_GENERATE = "def generate(self, data: Any, greedy: bool = False) -> Any:"
BROKEN_GENERATE = "def generate(self, data: Any) -> Any:"  # the driver sends greedy=
EXT = {
    "myext/__init__.py": "",
    "myext/gen.py": '''
        from typing import Any

        import ray
        from myext.mixin import GenerateMixin
        from nemo_rl.models.generation.vllm.vllm_worker import VllmGenerationWorkerImpl


        @ray.remote  # as the tree's own worker is (audit: extension-not-actor)
        class MyGenerationWorker(VllmGenerationWorkerImpl):
            def generate(self, data: Any, greedy: bool = False) -> Any:
                return super().generate(data)


        @ray.remote
        class MixedGenerationWorker(GenerateMixin, VllmGenerationWorkerImpl):
            pass


        @ray.remote
        class OtherGenerationWorker(VllmGenerationWorkerImpl):
            def generate(self, data: Any) -> Any:
                return super().generate(data)
        ''',
    MIXIN: '''
        from typing import Any


        class GenerateMixin:
            def generate(self, data: Any, greedy: bool = False) -> Any:
                return data
        ''',
}


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


def edit(path: Path, old: str, new: str) -> None:
    """Replace the first `old` (which must be there) by `new` in `path`."""
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{path}: {old!r} is not there to edit"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")

