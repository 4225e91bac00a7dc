"""NeMo-RL-shaped trees for the revision model's tests, one per schema generation and way
of registering workers, written into a tmp folder (never imported)."""

from __future__ import annotations

import textwrap
from pathlib import Path

WORKER_GROUPS = '''
class RayWorkerBuilder:
    def __init__(self, fqn, *args, **kwargs): ...

class RayWorkerGroup:
    def __init__(self, builder): ...
    def run_all_workers_single_data(self, method_name, *args, **kwargs): ...
'''

# Upstream before the rename: dtensor_cfg with _v2 (default false: DTensor v1), the
# quantized class through an override map, the extension only as a constructor argument,
# environments in ACTOR_ENVIRONMENT_REGISTRY, ModelOpt's registry merged into it.
OLD_POLICY = '''
from nemo_rl.distributed.worker_groups import RayWorkerBuilder, RayWorkerGroup
from nemo_rl.models.policy.utils import resolve_policy_worker_cls


class Policy:
    def __init__(self, config, worker_extension_cls_fqn=None):
        megatron_enable = bool(config.get("megatron_cfg", {}).get("enabled", False))
        if megatron_enable:
            fqn = resolve_policy_worker_cls(
                "nemo_rl.models.policy.workers.megatron.MegatronPolicyWorker", config)
        else:
            use_v2 = config.get("dtensor_cfg", {}).get("_v2", False)
            if use_v2:
                fqn = resolve_policy_worker_cls(
                    "nemo_rl.models.policy.workers.dtensor_v2.DTensorPolicyWorkerV2", config)
            else:
                fqn = resolve_policy_worker_cls(
                    "nemo_rl.models.policy.workers.dtensor.DTensorPolicyWorker", config)
        if worker_extension_cls_fqn is not None:
            fqn = worker_extension_cls_fqn
        self.worker_group = RayWorkerGroup(RayWorkerBuilder(fqn, config))

    def train(self, data):
        return self.worker_group.run_all_workers_single_data("train", data=data)
'''

OLD_OVERRIDES = '''
POLICY_WORKER_OVERRIDES = {
    "nemo_rl.models.policy.workers.megatron.MegatronPolicyWorker":
        "nemo_rl.modelopt.workers.MegatronQuantPolicyWorker",
    "nemo_rl.models.policy.workers.dtensor.DTensorPolicyWorker":
        "nemo_rl.modelopt.workers.DTensorQuantPolicyWorker",
}


def resolve_policy_worker_cls(default_cls, config):
    if config.get("quant_cfg") is None:
        return default_cls
    return POLICY_WORKER_OVERRIDES.get(default_cls, default_cls)
'''

GENERATION = '''
from nemo_rl.distributed.worker_groups import RayWorkerBuilder, RayWorkerGroup


class VllmGeneration:
    def __init__(self, cfg):
        self.cfg = cfg
        if self.cfg["vllm_cfg"]["async_engine"]:
            worker_cls = "nemo_rl.models.generation.workers.VllmAsyncGenerationWorker"
        else:
            worker_cls = "nemo_rl.models.generation.workers.VllmGenerationWorker"
        self.worker_group = RayWorkerGroup(RayWorkerBuilder(worker_cls, cfg))

    def generate(self, data):
        return self.worker_group.run_all_workers_single_data("generate", data=data)
'''

OLD_REGISTRY = '''
ACTOR_ENVIRONMENT_REGISTRY = {
    "nemo_rl.models.policy.workers.megatron.MegatronPolicyWorker": "MCORE",
    "nemo_rl.models.policy.workers.dtensor.DTensorPolicyWorker": "FSDP",
    "nemo_rl.models.policy.workers.dtensor_v2.DTensorPolicyWorkerV2": "AUTOMODEL",
    "nemo_rl.models.generation.workers.VllmGenerationWorker": "VLLM",
    "nemo_rl.models.generation.workers.VllmAsyncGenerationWorker": "VLLM",
}

from nemo_rl.modelopt.registry import MODELOPT_ACTOR_REGISTRY

ACTOR_ENVIRONMENT_REGISTRY.update(MODELOPT_ACTOR_REGISTRY)
'''

MODELOPT_REGISTRY = '''
MODELOPT_ACTOR_REGISTRY = {
    "nemo_rl.modelopt.workers.MegatronQuantPolicyWorker": "MODELOPT_MCORE",
    "nemo_rl.modelopt.workers.DTensorQuantPolicyWorker": "MODELOPT_FSDP",
}
'''



def worker(name: str, base: str = "", method: str = "train") -> str:
    """A worker class's module text."""
    head = f"from {base.rpartition('.')[0]} import {base.rpartition('.')[2]}\n\n" if base else ""
    parent = f"({base.rpartition('.')[2]})" if base else ""
    return f"{head}class {name}{parent}:\n    def {method}(self, data): ...\n"


OLD_WORKERS = {
    "nemo_rl/models/policy/workers/__init__.py": "",
    "nemo_rl/models/policy/workers/megatron.py": worker("MegatronPolicyWorker"),
    "nemo_rl/models/policy/workers/dtensor.py": worker("DTensorPolicyWorker"),
    "nemo_rl/models/policy/workers/dtensor_v2.py": worker("DTensorPolicyWorkerV2"),
    "nemo_rl/modelopt/workers.py": (
        "from nemo_rl.models.policy.workers.megatron import MegatronPolicyWorker\n"
        "from nemo_rl.models.policy.workers.dtensor import DTensorPolicyWorker\n\n"
        "class MegatronQuantPolicyWorker(MegatronPolicyWorker): ...\n\n"
        "class DTensorQuantPolicyWorker(DTensorPolicyWorker): ...\n"),
    "nemo_rl/models/generation/workers.py": (
        worker("VllmGenerationWorker", method="generate") + "\n"
        + worker("VllmAsyncGenerationWorker", method="generate")),
}

# After the rename, not built on nemo_rl_workers: automodel_cfg switches, the extension
# read from the config section.
NEW_POLICY = '''
from nemo_rl.distributed.worker_groups import RayWorkerBuilder, RayWorkerGroup


class Policy:
    def __init__(self, config):
        if config.get("megatron_cfg", {}).get("enabled", False):
            fqn = "nemo_rl.models.policy.workers.megatron.MegatronPolicyWorker"
        elif config.get("automodel_cfg", {}).get("enabled", False):
            fqn = "nemo_rl.models.policy.workers.automodel.AutomodelPolicyWorker"
        else:
            raise ValueError("enable one backend")
        fqn = config.get("worker_extension_cls_fqn") or fqn
        self.worker_group = RayWorkerGroup(RayWorkerBuilder(fqn, config))

    def train(self, data):
        return self.worker_group.run_all_workers_single_data("train", data=data)
'''

NEW_REGISTRY = '''
ACTOR_ENVIRONMENT_REGISTRY = {
    "nemo_rl.models.policy.workers.megatron.MegatronPolicyWorker": "MCORE",
    "nemo_rl.models.policy.workers.automodel.AutomodelPolicyWorker": "AUTOMODEL",
    "research.ext.RegisteredWorker": "AUTOMODEL",
}
'''


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


OLD_FILES: dict[str, str] = {
    "nemo_rl/__init__.py": "",
    "nemo_rl/distributed/__init__.py": "",
    "nemo_rl/distributed/worker_groups.py": WORKER_GROUPS,
    "nemo_rl/distributed/ray_actor_environment_registry.py": OLD_REGISTRY,
    "nemo_rl/modelopt/__init__.py": "",
    "nemo_rl/modelopt/registry.py": MODELOPT_REGISTRY,
    "nemo_rl/models/__init__.py": "",
    "nemo_rl/models/policy/__init__.py": "",
    "nemo_rl/models/policy/lm_policy.py": OLD_POLICY,
    "nemo_rl/models/policy/utils.py": OLD_OVERRIDES,
    **OLD_WORKERS,
    "nemo_rl/models/generation/__init__.py": "",
    "nemo_rl/models/generation/vllm_generation.py": GENERATION,
    "pyproject.toml": '[project]\nname = "fork"\nversion = "0"\n'
                      'dependencies = ["vllm==0.20.1", "torch"]\n',
}


def old_tree(root: Path) -> Path:
    """Upstream's layout before the rename (see OLD_POLICY)."""
    return write(root, OLD_FILES)


def new_tree(root: Path) -> Path:
    """A tree after the rename that selects its workers itself (see NEW_POLICY)."""
    return write(root, {
        "nemo_rl/__init__.py": "",
        "nemo_rl/distributed/__init__.py": "",
        "nemo_rl/distributed/worker_groups.py": WORKER_GROUPS,
        "nemo_rl/distributed/ray_actor_environment_registry.py": NEW_REGISTRY,
        "nemo_rl/models/__init__.py": "",
        "nemo_rl/models/policy/__init__.py": "",
        "nemo_rl/models/policy/lm_policy.py": NEW_POLICY,
        "nemo_rl/models/policy/workers/__init__.py": "",
        "nemo_rl/models/policy/workers/megatron.py": worker("MegatronPolicyWorker"),
        "nemo_rl/models/policy/workers/automodel.py": worker("AutomodelPolicyWorker"),
        "nemo_rl/models/generation/workers.py": OLD_WORKERS["nemo_rl/models/generation/workers.py"],
        "nemo_rl/models/generation/__init__.py": "",
        "nemo_rl/models/generation/vllm_generation.py": GENERATION,
    })


def config(root: Path, name: str, text: str) -> str:
    """A config file inside the tree's examples/configs (so the tree is its checkout)."""
    path = root / "examples" / "configs" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return str(path)
