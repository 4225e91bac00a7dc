"""NeMo-RL-shaped trees holding rules upstream's own setup refused recipes with, written into a
tmp folder as text (never imported): each module keeps the shape of the corpus file it comes
from (the rule's statement and its message verbatim, the lines around it reduced to what the
rule reads). The recall tests (test_upstream_breaks.py) say which upstream file and line each
rule is, and which thread fixed the recipe it refused."""

from __future__ import annotations

from pathlib import Path

from tests.revision.trees import OLD_FILES, write

CLUSTER = '''
class RayVirtualCluster:
    def __init__(self, bundle_ct_per_node_list, use_gpus=True, name=""):
        self._world_size = sum(bundle_ct_per_node_list)

    def world_size(self):
        return self._world_size
'''

# nemo_rl/models/policy/lm_policy.py at the 2026-08 corpus (lines 130-240): the backend's
# parallel sizes, then the world-size rules on the cluster setup built the Policy on.
POLICY = '''
from nemo_rl.distributed.worker_groups import RayWorkerBuilder, RayWorkerGroup


class Policy:
    def __init__(self, cluster, config, name_prefix="lm_policy"):
        megatron_enable = bool(config.get("megatron_cfg", {}).get("enabled", False))
        if megatron_enable:
            fqn = "nemo_rl.models.policy.workers.megatron.MegatronPolicyWorker"
            tp_size = config["megatron_cfg"]["tensor_model_parallel_size"]
            pp_size = config["megatron_cfg"]["pipeline_model_parallel_size"]
            cp_size = config["megatron_cfg"]["context_parallel_size"]
        else:
            fqn = "nemo_rl.models.policy.workers.dtensor.DTensorPolicyWorker"
            tp_size = config["dtensor_cfg"]["tensor_parallel_size"]
            pp_size = 1
            cp_size = config["dtensor_cfg"]["context_parallel_size"]

        # Validate world_size compatibility with parallelism configuration
        model_parallel_size = pp_size * cp_size * tp_size
        actual_world_size = cluster.world_size()

        if actual_world_size < model_parallel_size:
            raise ValueError(
                f"World size ({actual_world_size}) is insufficient for the parallelism configuration. "
                f"Required minimum world size: PP({pp_size}) * CP({cp_size}) * TP({tp_size}) = {model_parallel_size}. "
                f"This would result in DP = {actual_world_size}/{model_parallel_size} = {actual_world_size / model_parallel_size:.3f}, but DP must be ≥ 1. "
                f"Please either increase the number of GPUs/nodes or reduce the parallelism parameters."
            )

        if actual_world_size % model_parallel_size != 0:
            dp_size_float = actual_world_size / model_parallel_size
            raise ValueError(
                f"World size ({actual_world_size}) must be divisible by PP * CP * TP ({model_parallel_size}). "
                f"The data parallel size (DP = world_size / (PP * CP * TP)) must be a positive integer. "
                f"Current DP would be {actual_world_size}/{model_parallel_size} = {dp_size_float:.6f}, which is not an integer. "
                f"Please adjust your cluster size or parallelism parameters."
            )

        self.worker_group = RayWorkerGroup(RayWorkerBuilder(fqn, config))

    def train(self, data):
        return self.worker_group.run_all_workers_single_data("train", data=data)

    def generate(self, data):
        return self.worker_group.run_all_workers_single_data("generate", data=data)
'''  # noqa: E501 (upstream's message lines, verbatim)

# nemo_rl/models/generation/vllm/vllm_generation.py at the 2026-08 corpus (lines 112-145):
# vLLM's parallel sizes and their rules, then the worker class by engine mode.
VLLM_DP_ASYNC_RULE = '''
            if self.ep_size != self.tp_size:
                # vLLM's EP = DP * TP, so here we need to use DP inside vLLM.
                assert not self.cfg["vllm_cfg"]["async_engine"], (
                    "vLLM async_engine has some issues when using DP inside vLLM. "
                    "Please update your configuration to set `policy.generation.vllm_cfg.async_engine=false`. "
                    "See https://github.com/NVIDIA-NeMo/RL/issues/1101 for more details."
                )
'''  # noqa: E501 (upstream's message lines, verbatim)

VLLM_GENERATION = '''
from nemo_rl.distributed.worker_groups import RayWorkerBuilder, RayWorkerGroup


class VllmGeneration:
    def __init__(self, cluster, config):
        # Store config
        self.cfg = config
        self.tp_size = self.cfg["vllm_cfg"]["tensor_parallel_size"]
        self.pp_size = self.cfg["vllm_cfg"]["pipeline_parallel_size"]
        self.ep_size = self.cfg["vllm_cfg"]["expert_parallel_size"]
        self.model_parallel_size = self.tp_size * self.pp_size

        assert cluster.world_size() % self.model_parallel_size == 0, (
            "World size must be a multiple of model parallel size. "
            f"Got world size {cluster.world_size()} and model parallel size (TP * PP) {self.model_parallel_size}."
        )

        if self.ep_size > 1:
            assert self.ep_size % self.tp_size == 0, (
                "When EP > 1, EP must be a multiple of TP since vLLM's EP = DP * TP. "
                "Please update your configuration to set expert_parallel_size to a multiple of tensor_parallel_size."
            )''' + VLLM_DP_ASYNC_RULE + '''
        if self.cfg["vllm_cfg"]["async_engine"]:
            worker_cls = "nemo_rl.models.generation.workers.VllmAsyncGenerationWorker"
        else:
            worker_cls = "nemo_rl.models.generation.workers.VllmGenerationWorker"
        self.worker_group = RayWorkerGroup(RayWorkerBuilder(worker_cls, config))

    def generate(self, data):
        return self.worker_group.run_all_workers_single_data("generate", data=data)
'''  # noqa: E501 (upstream's message lines, verbatim)

# nemo_rl/algorithms/grpo.py at the 2026-08 corpus: pydantic configs read by attribute;
# `Validate batch_multiplier` (lines 565-573) and the non-colocated split of the cluster
# (lines 860-1025: generation keeps `colocated.resources.num_nodes`, the policy the rest).
GRPO_2026 = '''
from typing import TypedDict
from pydantic import BaseModel
from nemo_rl.distributed.virtual_cluster import RayVirtualCluster
from nemo_rl.models.generation.vllm_generation import VllmGeneration
from nemo_rl.models.policy.lm_policy import Policy


class PolicyConfig(TypedDict):
    model_name: str


class ClusterConfig(TypedDict):
    gpus_per_node: int
    num_nodes: int


class GRPOConfig(BaseModel, extra="allow"):
    num_prompts_per_step: int
    use_dynamic_sampling: bool = False
    batch_multiplier: float = 1.0


class MasterConfig(BaseModel, extra="allow"):
    policy: PolicyConfig
    grpo: GRPOConfig
    cluster: ClusterConfig


def setup(master_config: MasterConfig, tokenizer):
    policy_config = master_config.policy
    generation_config = policy_config["generation"]
    grpo_config = master_config.grpo
    cluster_config = master_config.cluster

    num_prompts_per_step = grpo_config.num_prompts_per_step

    # Validate batch_multiplier
    batch_multiplier = grpo_config.batch_multiplier
    if grpo_config.use_dynamic_sampling:
        num_prompts_per_step = int(num_prompts_per_step * batch_multiplier)
    else:
        assert batch_multiplier == 1, (
            "batch_multiplier>1 can only be used if use_dynamic_sampling=True"
        )

    colocated_inference = generation_config["colocated"]["enabled"]
    if colocated_inference:
        cluster = RayVirtualCluster(
            bundle_ct_per_node_list=[cluster_config["gpus_per_node"]]
            * cluster_config["num_nodes"],
        )
        train_cluster = inference_cluster = cluster
    else:
        train_gpus_per_node = cluster_config["gpus_per_node"]
        train_nodes = cluster_config["num_nodes"]
        inference_nodes = generation_config["colocated"]["resources"]["num_nodes"]
        assert inference_nodes > 0, (
            "policy.generation.colocated.resources.num_nodes must be > 0 "
            "when cluster.num_nodes > 1 and inference is non-colocated, "
            f"but got {inference_nodes}."
        )
        train_nodes -= inference_nodes
        train_cluster = RayVirtualCluster(
            bundle_ct_per_node_list=[train_gpus_per_node] * train_nodes,
        )
        inference_cluster = RayVirtualCluster(
            bundle_ct_per_node_list=[cluster_config["gpus_per_node"]] * inference_nodes,
        )
    # vllm model loading prefers clean environment, initialize policy_generation before policy
    backend = generation_config["backend"]
    if backend == "megatron":
        policy_generation = None  # the policy's own workers generate
    elif backend == "vllm":
        policy_generation = VllmGeneration(cluster=inference_cluster, config=generation_config)
    policy = Policy(cluster=train_cluster, config=policy_config)
    return policy, policy_generation
'''

# nemo_rl/algorithms/grpo.py at the 2025-09 corpus: TypedDict configs read by key; the
# non-colocated branch of the cluster setup opens with the Megatron refusal (line 242). Both
# setups build vLLM generation before the Policy, and none for Megatron (lines 314-330).
MEGATRON_NONCOLOCATED_RULE = '''
        assert generation_config["backend"] != "megatron", (
            "Non-colocated inference is not supported for Megatron generation backends. "
            "Please use vLLM backend for generation."
        )
'''

GRPO_2025 = '''
from typing import TypedDict
from nemo_rl.distributed.virtual_cluster import RayVirtualCluster
from nemo_rl.models.generation.vllm_generation import VllmGeneration
from nemo_rl.models.policy.lm_policy import Policy


class PolicyConfig(TypedDict):
    model_name: str


class ClusterConfig(TypedDict):
    gpus_per_node: int
    num_nodes: int


class GRPOConfig(TypedDict):
    num_prompts_per_step: int


class MasterConfig(TypedDict):
    policy: PolicyConfig
    grpo: GRPOConfig
    cluster: ClusterConfig


def setup(master_config: MasterConfig, tokenizer):
    policy_config = master_config["policy"]
    generation_config = master_config["policy"]["generation"]
    cluster_config = master_config["cluster"]

    colocated_inference = generation_config["colocated"]["enabled"]
    if colocated_inference:
        cluster = RayVirtualCluster(
            bundle_ct_per_node_list=[cluster_config["gpus_per_node"]]
            * cluster_config["num_nodes"],
        )
        train_cluster = inference_cluster = cluster
    else:''' + MEGATRON_NONCOLOCATED_RULE + '''
        # train resources will be updated through overall and inference resources below
        train_gpus_per_node = cluster_config["gpus_per_node"]
        train_nodes = cluster_config["num_nodes"]

        inference_resources = generation_config["colocated"]["resources"]
        inference_nodes = inference_resources["num_nodes"]
        assert inference_nodes > 0, (
            "policy.generation.colocated.resources.num_nodes must be > 0 "
            "when cluster.num_nodes > 1 and inference is non-colocated, "
            f"but got {inference_nodes}."
        )
        train_nodes -= inference_nodes
        train_cluster = RayVirtualCluster(
            bundle_ct_per_node_list=[train_gpus_per_node] * train_nodes,
        )
        inference_cluster = RayVirtualCluster(
            bundle_ct_per_node_list=[cluster_config["gpus_per_node"]] * inference_nodes,
        )
    # vllm model loading prefers clean environment, initialize policy_generation before policy
    backend = generation_config["backend"]
    if backend == "megatron":
        policy_generation = None  # the policy's own workers generate
    elif backend == "vllm":
        policy_generation = VllmGeneration(cluster=inference_cluster, config=generation_config)
    policy = Policy(cluster=train_cluster, config=policy_config)
    return policy, policy_generation
'''


def grpo_tree(root: Path, setup: str, generation: str = VLLM_GENERATION) -> Path:
    """A tree whose GRPO `setup` is `setup`, building the world-size-checking Policy and
    the `generation` module's VllmGeneration."""
    return write(root, {
        **OLD_FILES,
        "nemo_rl/distributed/virtual_cluster.py": CLUSTER,
        "nemo_rl/models/policy/lm_policy.py": POLICY,
        "nemo_rl/models/generation/vllm_generation.py": generation,
        "nemo_rl/algorithms/__init__.py": "",
        "nemo_rl/algorithms/grpo.py": setup,
    })


def line_of(text: str, needle: str) -> int:
    """The 1-based line of the first line of `text` holding `needle`, as `write` leaves
    the file (it dedents, which keeps line numbers)."""
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)
