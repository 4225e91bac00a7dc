"""Every mode a tree has (issue 34, item 2): what a recipe starts is all shown, on trees
written here (the real trees: test_corpus). An entry that builds a generation driver with
no policy (the evaluation), a frozen group whose driver clears quantization before it
builds, a class the tree picks through a dict lookup, an environment named by an explicit
`py_executable`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nemo_rl_workers.cache import codec
from nemo_rl_workers.cache.codec import CodecError
from nemo_rl_workers.cache.store import FORMAT, checksum
from nemo_rl_workers.tree.model_inputs import tree_inputs
from nemo_rl_workers.tree.revision import Revision
from nemo_rl_workers.tree.revision_build import build_revision
from nemo_rl_workers.tree.stage import REVISION
from tests.cli_run import run_cli as run
from tests.corpus import TREES, corpus_tree
from tests.revision.trees import GENERATION, OLD_FILES, config, write

# An evaluation entry: its whole config has no policy; its setup builds the generation
# driver on the top-level `generation:` block, through a local name.
EVAL_ENTRY = '''
from typing import TypedDict
from nemo_rl.models.generation.vllm_generation import VllmGeneration


class EvalConfig(TypedDict):
    seed: int


class GenerationConfig(TypedDict):
    backend: str


class MasterConfig(TypedDict):
    eval: EvalConfig
    generation: GenerationConfig


def setup(master_config: MasterConfig, tokenizer):
    generation_config = master_config["generation"]
    return VllmGeneration(generation_config)
'''

EVAL_CONFIG = """\
eval:
  seed: 1
generation:
  backend: vllm
  vllm_cfg:
    async_engine: true
"""


def _eval_tree(tmp_path: Path) -> Path:
    return write(tmp_path, {**OLD_FILES, "nemo_rl/evals/__init__.py": "",
                            "nemo_rl/evals/eval.py": EVAL_ENTRY})


def _check(*argv: str) -> tuple[int, dict[str, Any]]:
    code, out, _ = run("check", "--no-verify", "--json", *argv)
    report: dict[str, Any] = json.loads(out)
    return code, report


def test_an_eval_config_shows_the_generation_worker_its_entry_builds(tmp_path: Path) -> None:
    root = _eval_tree(tmp_path)
    code, report = _check(config(root, "evals/eval.yaml", EVAL_CONFIG))
    assert (code, report["problems"]) == (0, [])
    assert [(w["section"], w["fqn"], w["env"]) for w in report["workers"]] == [
        ("generation", "nemo_rl.models.generation.workers.VllmAsyncGenerationWorker", "VLLM")]


def test_a_generation_block_no_entry_builds_is_not_judged(tmp_path: Path) -> None:
    """Without the evaluation entry, a top-level `generation:` block starts nothing."""
    root = write(tmp_path, OLD_FILES)
    code, report = _check(config(root, "evals/eval.yaml", EVAL_CONFIG))
    assert (code, report["workers"], report["problems"]) == (0, [], [])


# A frozen teacher group: it builds its config from the student's, clears quant_cfg on
# its own copy, and starts the Megatron worker; the override map has a quantized
# counterpart of that class, which this group never starts.
TEACHER_GROUP = '''
from copy import deepcopy
from nemo_rl.distributed.worker_groups import RayWorkerBuilder, RayWorkerGroup


class TeacherWorkerGroup:
    def __init__(self, teacher_cfg, policy_config):
        cfg = deepcopy(policy_config)
        cfg["megatron_cfg"]["enabled"] = True
        if cfg.get("quant_cfg") is not None:
            cfg["quant_cfg"] = None
        self.worker_group = RayWorkerGroup(RayWorkerBuilder(
            "nemo_rl.models.policy.workers.megatron.MegatronPolicyWorker", cfg))

    def get_logprobs(self, data):
        return self.worker_group.run_all_workers_single_data("get_logprobs", data=data)
'''

# Environments: a base class that starts whatever its subclass's dict names, each with an
# explicit py_executable; a subclass holding the dict; a registry that names neither.
ENVIRONMENTS = '''
import ray


class PY_EXECUTABLES:
    SYSTEM = "python"


@ray.remote
class ExactVerifyWorker:
    def verify(self, data): ...


@ray.remote
class FuzzyVerifyWorker:
    def verify(self, data): ...


class BaseGradingEnvironment:
    WORKER_CLASS_DICT: dict

    def __init__(self, cfg):
        worker_cls = self.WORKER_CLASS_DICT[cfg["verifier_type"]]
        self.workers = [worker_cls.options(
            runtime_env={"py_executable": PY_EXECUTABLES.SYSTEM}).remote() for _ in range(2)]


@ray.remote
class GradingEnvironment(BaseGradingEnvironment):
    WORKER_CLASS_DICT = {"exact": ExactVerifyWorker, "fuzzy": FuzzyVerifyWorker}
'''


def _list(root: Path) -> tuple[int, str, dict[str, Any]]:
    code, out, err = run("list", "--nemo-rl", str(root))
    assert err == ""
    _, as_json, _ = run("list", "--nemo-rl", str(root), "--json")
    listing: dict[str, Any] = json.loads(as_json)
    return code, out, listing


def test_a_frozen_group_that_clears_quant_cfg_has_no_quantized_class(tmp_path: Path) -> None:
    root = write(tmp_path, {**OLD_FILES,
                            "nemo_rl/models/policy/teacher_worker_group.py": TEACHER_GROUP})
    code, out, listing = _list(root)
    assert code == 0
    teacher = [r for r in listing["rows"] if r["driver"] == "TeacherWorkerGroup"]
    assert [(r["role"], r["default"], r["quantized"], r["clears"]) for r in teacher] == [
        ("teacher", "nemo_rl.models.policy.workers.megatron.MegatronPolicyWorker", None,
         ["quant_cfg"])]
    line = next(line for line in out.splitlines() if "TeacherWorkerGroup" in line)
    assert line.split()[-2:] == ["quant_cfg)", "-"]
    assert "- (TeacherWorkerGroup clears quant_cfg)" in line
    # The policy's own rows keep their quantized counterpart.
    policy = [r["quantized"] for r in listing["rows"] if r["driver"] == "Policy"]
    assert "nemo_rl.modelopt.workers.MegatronQuantPolicyWorker" in policy


def test_list_names_dict_lookup_workers_and_their_py_executable(tmp_path: Path) -> None:
    root = write(tmp_path, {**OLD_FILES, "nemo_rl/environments/__init__.py": "",
                            "nemo_rl/environments/grading.py": ENVIRONMENTS})
    code, out, listing = _list(root)
    assert code == 0
    found = [(r["driver"], r["default"], r["env"], r["py_executable"])
             for r in listing["rows"] if "environments" in r["default"]]
    assert found == [
        ("GradingEnvironment", "nemo_rl.environments.grading.ExactVerifyWorker", None,
         "PY_EXECUTABLES.SYSTEM"),
        ("GradingEnvironment", "nemo_rl.environments.grading.FuzzyVerifyWorker", None,
         "PY_EXECUTABLES.SYSTEM")]
    lines = [line.split() for line in out.splitlines() if "VerifyWorker" in line]
    assert [(words[0], words[3], words[4], words[5]) for words in lines] == [
        ("GradingEnvironment", "nemo_rl.environments.grading.ExactVerifyWorker",
         "PY_EXECUTABLES.SYSTEM", "(py_executable)"),
        ("GradingEnvironment", "nemo_rl.environments.grading.FuzzyVerifyWorker",
         "PY_EXECUTABLES.SYSTEM", "(py_executable)")]
    assert "unregistered" not in " ".join(" ".join(words) for words in lines)


def test_an_environment_computed_at_run_time_is_not_a_py_executable(tmp_path: Path) -> None:
    """A `py_executable` the caller passes in is the registry's or the caller's: unknown
    here, so the class stays unregistered."""
    computed = ENVIRONMENTS.replace(
        "    def __init__(self, cfg):\n",
        "    def __init__(self, cfg, python_env=None):\n").replace(
        '{"py_executable": PY_EXECUTABLES.SYSTEM}', '{"py_executable": python_env}')
    root = write(tmp_path, {**OLD_FILES, "nemo_rl/environments/__init__.py": "",
                            "nemo_rl/environments/grading.py": computed})
    _, out, listing = _list(root)
    assert {r["py_executable"] for r in listing["rows"] if "environments" in r["default"]} \
        == {None}
    assert all("unregistered" in line for line in out.splitlines() if "VerifyWorker" in line)


# A GRPO-like setup that keeps GPUs of its one node for a reward model when the data names
# that environment (through a helper it calls), and builds the policy on the rest; the
# reference's `cluster:` arithmetic would say gpus_per_node x num_nodes.
CLUSTER = '''
class RayVirtualCluster:
    def __init__(self, bundle_ct_per_node_list, use_gpus=True):
        self._world_size = sum(bundle_ct_per_node_list)

    def world_size(self):
        return self._world_size
'''

DATA_UTILS = '''
def necessary_env_names(data_config):
    names = set()
    for key in ("train", "validation"):
        configs = data_config.get(key)
        if not isinstance(configs, list):
            configs = [configs]
        for config in configs:
            if isinstance(config, dict) and "env_name" in config:
                names.add(config["env_name"])
    return list(names)
'''

RM_SETUP = '''
from typing import TypedDict
from nemo_rl.data.utils import necessary_env_names
from nemo_rl.distributed.virtual_cluster import RayVirtualCluster
from nemo_rl.models.policy.lm_policy import Policy


class PolicyConfig(TypedDict):
    model_name: str


class ClusterConfig(TypedDict):
    gpus_per_node: int


class MasterConfig(TypedDict):
    policy: PolicyConfig
    cluster: ClusterConfig
    data: dict


def setup(master_config: MasterConfig):
    cluster_config = master_config["cluster"]
    rm_enabled = "reward_model" in necessary_env_names(master_config["data"])
    if rm_enabled:
        rm_gpus_per_node = master_config["env"]["reward_model"]["resources"]["gpus_per_node"]
    else:
        rm_gpus_per_node = 0
    policy_gpus_per_node = cluster_config["gpus_per_node"] - rm_gpus_per_node
    train_cluster = RayVirtualCluster(
        bundle_ct_per_node_list=[policy_gpus_per_node] * cluster_config["num_nodes"])
    policy = Policy(cluster=train_cluster, config=master_config["policy"])
    return policy
'''

RM_CONFIG = """\
policy:
  model_name: tiny
  dtensor_cfg: {enabled: true}
cluster:
  gpus_per_node: 2
  num_nodes: 1
data:
  train: {env_name: reward_model}
env:
  reward_model:
    resources: {gpus_per_node: 1, num_nodes: 1}
"""


def _rm_tree(tmp_path: Path) -> Path:
    return write(tmp_path, {
        **OLD_FILES, "nemo_rl/distributed/virtual_cluster.py": CLUSTER,
        "nemo_rl/data/__init__.py": "", "nemo_rl/data/utils.py": DATA_UTILS,
        "nemo_rl/algorithms/__init__.py": "", "nemo_rl/algorithms/grpo.py": RM_SETUP})


def test_the_world_size_is_what_the_tree_s_setup_computes(tmp_path: Path) -> None:
    """GPUs the setup keeps for the reward model are not the policy's."""
    root = _rm_tree(tmp_path)
    code, report = _check(config(root, "grpo_rm.yaml", RM_CONFIG))
    assert code == 0
    assert report["world_size"] == 1
    assert report["world_size_from"] == (
        "sum([policy_gpus_per_node] * cluster_config['num_nodes']) at "
        "nemo_rl/algorithms/grpo.py:30, the cluster Policy is built on; from "
        "cluster.gpus_per_node=2, env.reward_model.resources.gpus_per_node=1, "
        "cluster.num_nodes=1")
    # Without the reward model in the data, the helper says so and no GPU is kept.
    code, report = _check(config(root, "grpo.yaml", RM_CONFIG.replace(
        "env_name: reward_model", "env_name: math")))
    assert (code, report["world_size"]) == (0, 2)


def test_a_world_size_the_walk_cannot_decide_is_undecided(tmp_path: Path) -> None:
    """A branch on a value this check does not compute: undecided, with the reason, and
    the reference's arithmetic is not put in its place."""
    root = _rm_tree(tmp_path)
    computed = RM_SETUP.replace(
        'rm_enabled = "reward_model" in necessary_env_names(master_config["data"])',
        "rm_enabled = ask_the_scheduler()")
    write(root, {"nemo_rl/algorithms/grpo.py": computed})
    path = config(root, "grpo_rm.yaml", RM_CONFIG)
    code, report = _check(path)
    assert (code, report["world_size"]) == (0, None)
    assert report["world_size_from"] == (
        "undecided: the size of train_cluster, the cluster grpo.setup builds Policy on: "
        "rm_gpus_per_node is set differently where rm_enabled is not decided by the "
        "config (it calls ask_the_scheduler(), code this check does not run)")
    _, out, _ = run("check", "-v", "--no-verify", path)
    assert f"  world size: {report['world_size_from']}" in out.splitlines()



def _sized_policy_tree(tmp_path: Path) -> Path:
    """The RM tree, whose Policy checks its cluster's size against the tensor-parallel
    size before it builds its workers (as upstream's `lm_policy.py` does)."""
    root = _rm_tree(tmp_path)
    policy = OLD_FILES["nemo_rl/models/policy/lm_policy.py"].replace(
        "    def __init__(self, config, worker_extension_cls_fqn=None):\n",
        "    def __init__(self, cluster, config, worker_extension_cls_fqn=None):\n"
        "        tp = config.get(\"dtensor_cfg\", {}).get(\"tensor_parallel_size\", 1)\n"
        "        if cluster.world_size() % tp != 0:\n"
        "            raise ValueError(\"the world size must be divisible by the TP size\")\n")
    return write(root, {"nemo_rl/models/policy/lm_policy.py": policy})


def test_the_tree_s_cluster_size_rules_run_on_the_size_its_setup_computes(
        tmp_path: Path) -> None:
    """`cluster.world_size()` in a driver's constructor is the size the entry's setup
    computes for the cluster it builds that driver on: 1 GPU once the reward model keeps
    one of two; TP 2 does not divide it, and the tree refuses the config before any worker
    starts; without the reward model the size is 2 and the rule holds."""
    root = _sized_policy_tree(tmp_path)
    sized = RM_CONFIG.replace("dtensor_cfg: {enabled: true}",
                              "dtensor_cfg: {enabled: true, tensor_parallel_size: 2}")
    code, report = _check(config(root, "grpo_rm.yaml", sized))
    assert code == 1
    [problem] = report["problems"]
    # The first value its test read names it; every value the size came from is shown.
    assert problem["path"] == "cluster.gpus_per_node"
    assert problem["message"].startswith(
        "cluster.gpus_per_node: this NeMo-RL refuses the config before any worker starts: "
        "it raises ValueError where cluster.world_size() % tp != 0 (cluster.gpus_per_node=2, "
        "env.reward_model.resources.gpus_per_node=1, cluster.num_nodes=1, "
        "policy.dtensor_cfg.tensor_parallel_size=2) at nemo_rl/models/policy/lm_policy.py:10 "
        "(Policy.__init__)")
    code, report = _check(config(root, "grpo.yaml", sized.replace(
        "env_name: reward_model", "env_name: math")))
    assert (code, report["problems"], report["world_size"]) == (0, [], 2)
    assert not any("world_size()" in line for line in report["skipped"])


# The RM tree with a generation driver that checks its cluster's size (as upstream's
# VllmGeneration does), built on a local the setup binds twice (GRPO's `generation_config`,
# rebound in its Dynamo branch), so no build of it on one config block is recorded.
SIZED_GENERATION = GENERATION.replace(
    "    def __init__(self, cfg):\n        self.cfg = cfg\n",
    "    def __init__(self, cluster, config):\n        cfg = config\n        self.cfg = cfg\n"
    "        tp = cfg[\"vllm_cfg\"][\"tensor_parallel_size\"]\n"
    "        assert cluster.world_size() % tp == 0, \"the TP size must divide the world size\"\n")
GENERATING_SETUP = RM_SETUP.replace(
    "    policy = Policy(cluster=train_cluster, config=master_config[\"policy\"])\n",
    "    generation_config = master_config[\"policy\"][\"generation\"]\n"
    "    if generation_config[\"backend\"] == \"dynamo\":\n"
    "        generation_config = dict(generation_config)\n"
    "    inference_cluster = train_cluster\n"
    "    policy = Policy(cluster=train_cluster, config=master_config[\"policy\"])\n"
    "    generation = VllmGeneration(cluster=inference_cluster, config=generation_config)\n"
).replace("from nemo_rl.models.policy.lm_policy import Policy\n",
          "from nemo_rl.models.policy.lm_policy import Policy\n"
          "from nemo_rl.models.generation.vllm_generation import VllmGeneration\n")
GENERATING_CONFIG = RM_CONFIG.replace(
    "  dtensor_cfg: {enabled: true}\n",
    "  dtensor_cfg: {enabled: true}\n"
    "  generation:\n    backend: vllm\n"
    "    vllm_cfg: {async_engine: false, tensor_parallel_size: 2}\n")


def test_a_generation_driver_s_cluster_is_the_one_every_build_of_it_names(
        tmp_path: Path) -> None:
    """Its config local is bound twice, but its one build names `inference_cluster` (the
    training cluster: 1 GPU once the reward model keeps one of two): TP 2 does not
    divide it, and the tree's own assertion refuses the config."""
    assert SIZED_GENERATION != GENERATION and GENERATING_SETUP != RM_SETUP
    root = write(_rm_tree(tmp_path), {
        "nemo_rl/algorithms/grpo.py": GENERATING_SETUP,
        "nemo_rl/models/generation/vllm_generation.py": SIZED_GENERATION})
    code, report = _check(config(root, "grpo_rm.yaml", GENERATING_CONFIG))
    assert code == 1
    [problem] = report["problems"]
    assert problem["message"].endswith(
        "(cluster.gpus_per_node=2, env.reward_model.resources.gpus_per_node=1, "
        "cluster.num_nodes=1, policy.generation.vllm_cfg.tensor_parallel_size=2) at "
        "nemo_rl/models/generation/vllm_generation.py:10 (VllmGeneration.__init__): "
        "\"the TP size must divide the world size\"")
    code, report = _check(config(root, "grpo.yaml", GENERATING_CONFIG.replace(
        "env_name: reward_model", "env_name: math")))
    assert (code, report["problems"]) == (0, [])
    assert not any("world_size()" in line for line in report["skipped"])
    # Two builds on two clusters: which one is not this check's to say.
    write(root, {"nemo_rl/algorithms/grpo.py": GENERATING_SETUP.replace(
        "    return policy\n",
        "    other = VllmGeneration(cluster=train_cluster, config=generation_config)\n"
        "    return policy\n")})
    code, report = _check(config(root, "grpo_rm2.yaml", GENERATING_CONFIG))
    assert (code, report["problems"]) == (0, [])
    assert any(line.startswith("tree rule nemo_rl/models/generation/vllm_generation.py:10 ")
               and line.endswith("cluster.world_size() is the size of a cluster the tree "
                                 "builds at run time") for line in report["skipped"])


# -- the real trees (skipped where the corpus is absent) --------------------------------

REPO = Path(__file__).resolve().parents[2]
CORPORA = TREES


@pytest.fixture(params=sorted(CORPORA))
def tree(request: pytest.FixtureRequest) -> Path:
    root = corpus_tree(request.param)
    return root


def _corpus(name: str) -> Path:
    root = corpus_tree(name)
    return root


def test_grpo_rm_1b_gets_the_world_size_its_setup_computes() -> None:
    """Checked by hand in grpo.py: one node, so `policy_gpus_per_node =
    cluster.gpus_per_node (2) - rm_gpus_per_node (1)` (line 813), the data naming the
    reward_model environment; the policy's cluster (line 829) has 1 GPU."""
    root = _corpus("2026-08")
    code, report = _check("--nemo-rl", str(root),
                          str(root / "examples/configs/grpo_rm_1B.yaml"))
    assert (code, report["world_size"]) == (0, 1)
    assert report["world_size_from"].startswith(
        "sum([policy_gpus_per_node] * policy_nodes) at nemo_rl/algorithms/grpo.py:829")
    assert "env.reward_model.resources.gpus_per_node=1" in report["world_size_from"]


def test_an_eval_config_of_each_tree_shows_its_generation_worker(tree: Path) -> None:
    """Both trees' nemo_rl/evals/eval.py build VllmGeneration on `generation:` (eval.py:157
    and :149), with vllm_cfg.async_engine false in eval.yaml."""
    code, report = _check("--nemo-rl", str(tree), str(tree / "examples/configs/evals/eval.yaml"))
    assert (code, report["problems"]) == (0, [])
    assert [(w["section"], w["fqn"]) for w in report["workers"]] == [
        ("generation", "nemo_rl.models.generation.vllm.vllm_worker.VllmGenerationWorker")]
    assert report["world_size"] == 1


def test_a_distillation_config_shows_its_teacher_as_the_tree_builds_it() -> None:
    """distillation.py builds the teacher with `Policy(config=teacher_config)` (line 487)
    on train_cluster, clearing nothing: the teacher's own backend picks its class."""
    root = _corpus("2026-08")
    code, report = _check("--nemo-rl", str(root),
                          str(root / "examples/configs/distillation_math_megatron.yaml"))
    assert (code, report["problems"]) == (0, [])
    workers = {w["section"]: w["fqn"].rsplit(".", 1)[1] for w in report["workers"]}
    assert workers == {"policy": "MegatronPolicyWorker",
                       "policy.generation": "VllmGenerationWorker",
                       "teacher": "MegatronPolicyWorker"}
    assert report["world_size"] == 8


def test_list_names_the_dict_lookup_verify_workers(tree: Path) -> None:
    """MathEnvironment picks its verify worker by `verifier_type` from a dict (a class
    attribute in 2026-08, a dict written in place in 2025-09), each started with
    `runtime_env={"py_executable": PY_EXECUTABLES.SYSTEM}`."""
    _, _, listing = _list(tree)
    math = {r["default"].rsplit(".", 1)[1]: r["py_executable"] for r in listing["rows"]
            if r["driver"] == "MathEnvironment"}
    assert math == {"HFVerifyWorker": "PY_EXECUTABLES.SYSTEM",
                    "EnglishMultichoiceVerifyWorker": "PY_EXECUTABLES.SYSTEM",
                    "MultilingualMultichoiceVerifyWorker": "PY_EXECUTABLES.SYSTEM"}
    if tree == CORPORA["2026-08"]:
        teacher = [r for r in listing["rows"] if r["driver"] == "TeacherWorkerGroup"]
        assert [(r["quantized"], r["clears"]) for r in teacher] == [(None, ["quant_cfg"])]


# -- the new parts of the model, on disk ------------------------------------------------


def _every_mode_tree(tmp_path: Path) -> Path:
    root = _rm_tree(tmp_path)
    return write(root, {"nemo_rl/evals/__init__.py": "", "nemo_rl/evals/eval.py": EVAL_ENTRY,
                        "nemo_rl/models/policy/teacher_worker_group.py": TEACHER_GROUP,
                        "nemo_rl/environments/__init__.py": "",
                        "nemo_rl/environments/grading.py": ENVIRONMENTS})


def _decoded(payload: dict[str, Any], root: Path) -> Revision | None:
    return codec.decode(Revision, payload)


def test_the_model_stores_what_it_derives_and_refuses_a_damaged_part(tmp_path: Path) -> None:
    root = _every_mode_tree(tmp_path)
    revision = build_revision(root, "t", name="t")
    assert {b.module for b in revision.entry_builds} == {"nemo_rl.algorithms.grpo",
                                                         "nemo_rl.evals.eval"}
    assert revision.cluster_builds and revision.py_executables and revision.clears
    payload = json.loads(json.dumps(codec.encode(revision)))
    back = _decoded(payload, root)
    assert back is not None
    assert (back.entry_builds, back.cluster_builds, back.py_executables, back.clears) == (
        revision.entry_builds, revision.cluster_builds, revision.py_executables,
        revision.clears)
    for key, bad in [("entry_builds", [["m", "d", "s", "w"]]),
                     ("cluster_builds", [["m", "n", "e", True, "w"]]),
                     ("py_executables", {"a.B": 1}), ("clears", {"T": "quant_cfg"}),
                     ("clears", None)]:
        with pytest.raises(CodecError):
            _decoded({**payload, key: bad}, root)


def test_a_damaged_cluster_build_in_the_cache_is_one_warning(tmp_path: Path) -> None:
    root = _every_mode_tree(tmp_path / "tree")
    cache = tmp_path / "cache"
    argv = ("check", "--no-verify", "--nemo-rl", str(root), "--cache-dir", str(cache),
            config(root, "grpo_rm.yaml", RM_CONFIG))
    fresh = run(*argv)
    entry = cache / f"v{FORMAT}" / f"{REVISION.key(tree_inputs(root.resolve()))}.json"
    stored = json.loads(entry.read_text())
    stored["payload"]["revision"]["cluster_builds"] = [["nemo_rl.algorithms.grpo",
                                                        "train_cluster"]]
    stored["sha256"] = checksum(stored["payload"])
    entry.write_text(json.dumps(stored))
    code, out, err = run(*argv)
    assert (code, out) == fresh[:2]
    assert err == (f"nemo-rl-workers: warning: cache entry {entry} holds a damaged model (a "
                   "list where ClusterBuild belongs (payload.revision.cluster_builds[0])); "
                   "ignored, the tree is read again\n")


def test_a_helper_that_loops_without_end_is_cut_short(tmp_path: Path) -> None:
    """Hostile source: nested loops in the helper the setup calls; the walk stops at its
    turn budget and the world size is undecided, saying so."""
    root = _rm_tree(tmp_path)
    write(root, {"nemo_rl/data/utils.py": '''
def necessary_env_names(data_config):
    names = set()
    for a in data_config["many"]:
        for b in data_config["many"]:
            for c in data_config["many"]:
                names.add(c)
    return list(names)
'''})
    path = config(root, "grpo_rm.yaml", RM_CONFIG.replace(
        "  train: {env_name: reward_model}\n",
        f"  train: {{env_name: reward_model}}\n  many: {list(range(200))}\n"))
    code, report = _check(path)
    assert (code, report["world_size"]) == (0, None)
    assert report["world_size_from"].endswith(
        "(it calls necessary_env_names(), which loops more than the 1000 turns this check "
        "follows)")


# A frozen policy-role driver (a fork's teacher `Policy`) that clears what a student's
# config would carry on its own copy: the quantized class and the extension never run.
FROZEN_POLICY = OLD_FILES["nemo_rl/models/policy/lm_policy.py"].replace(
    "    def __init__(self, config, worker_extension_cls_fqn=None):\n",
    "    def __init__(self, config, worker_extension_cls_fqn=None):\n"
    "        config = copy.deepcopy(config)\n"
    "        config[\"quant_cfg\"] = None\n"
    "        config.pop(\"worker_extension_cls_fqn\", None)\n").replace(
    "from nemo_rl.distributed", "import copy\nfrom nemo_rl.distributed")


def test_a_driver_that_clears_quant_cfg_starts_the_unquantized_class(tmp_path: Path) -> None:
    root = write(tmp_path, {**OLD_FILES, "nemo_rl/models/policy/lm_policy.py": FROZEN_POLICY})
    path = config(root, "teacher.yaml", """\
policy:
  model_name: tiny
  megatron_cfg: {enabled: true}
  quant_cfg: {algorithm: fp8}
  worker_extension_cls_fqn: research.ext.Anything
""")
    code, report = _check(path)
    assert (code, report["problems"]) == (0, [])
    assert [(w["section"], w["fqn"], w["quantized"], w["source"]) for w in report["workers"]] \
        == [("policy", "nemo_rl.models.policy.workers.megatron.MegatronPolicyWorker", False,
             "default")]
    assert {line for line in report["skipped"] if "clears it" in line} == {
        "policy.quant_cfg: Policy clears it on its own copy of the config before it starts "
        "its workers, so it has no effect there",
        "policy.worker_extension_cls_fqn: Policy clears it on its own copy of the config "
        "before it starts its workers, so it has no effect there"}


# A generation backend whose driver starts no worker group: it builds a runtime, which
# builds a pool in a method, and the pool starts a GPU reservation and the registered
# worker itself (upstream's Dynamo: DynamoGeneration -> ManagedDynamoRuntime ->
# FixedDynamoWorkerPool -> DynamoVllmWorker).
POOL_GENERATION = '''
from nemo_rl.models.generation.pool.runtime import Runtime


class PoolGeneration:
    def __init__(self, cluster, config):
        self.runtime = Runtime(config)
        self.runtime.start()
'''

POOL_RUNTIME = '''
from nemo_rl.models.generation.pool.{pool_module} import WorkerPool


class Runtime:
    def __init__(self, config):
        self.config = config
        self.pool = None

    def start(self):
        self.pool = WorkerPool(self.config)
        self.pool.start()
'''

POOL = '''
import ray


@ray.remote(num_cpus=0)
class Reservation:
    def metadata(self): ...


@ray.remote(num_cpus=0)
class PoolWorker:
    def __init__(self, config): ...
    def metadata(self): ...


class WorkerPool:
    def __init__(self, config):
        self.config = config
        self.workers = []

    def start(self):
        held = Reservation.options(num_gpus=1).remote()
        ray.get(held.metadata.remote())
        worker = PoolWorker.options(num_gpus=0).remote(self.config)
        self.workers.append(worker)
'''

POOL_SETUP = '''
from nemo_rl.models.generation.pool.generation import PoolGeneration
from nemo_rl.models.policy.lm_policy import Policy


def setup(master_config):
    policy_config = master_config["policy"]
    policy = Policy(policy_config)
    generation = PoolGeneration(None, config=policy_config["generation"])
    return policy, generation
'''

POOL_CONFIG = """\
policy:
  dtensor_cfg:
    enabled: true
  generation:
    backend: pool
"""


def _pool_tree(tmp_path: Path, pool_module: str = "pool") -> Path:
    registry = OLD_REGISTRY_WITH_POOL
    return write(tmp_path, {
        **OLD_FILES,
        "nemo_rl/distributed/ray_actor_environment_registry.py": registry,
        "nemo_rl/algorithms/__init__.py": "",
        "nemo_rl/algorithms/grpo.py": POOL_SETUP,
        "nemo_rl/models/generation/pool/__init__.py": "",
        "nemo_rl/models/generation/pool/generation.py": POOL_GENERATION,
        "nemo_rl/models/generation/pool/runtime.py": POOL_RUNTIME.format(
            pool_module=pool_module),
        f"nemo_rl/models/generation/pool/{pool_module}.py": POOL})


OLD_REGISTRY_WITH_POOL = OLD_FILES["nemo_rl/distributed/ray_actor_environment_registry.py"].replace(
    "ACTOR_ENVIRONMENT_REGISTRY = {\n",
    'ACTOR_ENVIRONMENT_REGISTRY = {\n'
    '    "nemo_rl.models.generation.pool.pool.PoolWorker": "SYSTEM",\n')


def test_a_backend_that_starts_its_workers_through_classes_it_builds(tmp_path: Path) -> None:
    root = _pool_tree(tmp_path)
    code, report = _check("--nemo-rl", str(root), config(root, "grpo.yaml", POOL_CONFIG))
    assert (code, report["problems"]) == (0, [])
    assert [(w["section"], w["fqn"], w["env"], w["protocol"]) for w in report["workers"]] == [
        ("policy", "nemo_rl.models.policy.workers.dtensor.DTensorPolicyWorker", "FSDP",
         "Policy's calls"),
        ("policy.generation", "nemo_rl.models.generation.pool.pool.PoolWorker", "SYSTEM",
         "PoolGeneration's calls")]
    code, out, listing = _list(root)
    assert code == 0
    assert ("PoolGeneration starts its workers through the classes it builds: Runtime "
            "(nemo_rl/models/generation/pool/generation.py:7), WorkerPool "
            "(nemo_rl/models/generation/pool/runtime.py:11)") in out.splitlines()
    rows = {(r["driver"], r["default"]) for r in listing["rows"]}
    # The pool is a driver of both actors it starts; the backend's driver, of its worker.
    assert {("PoolGeneration", "nemo_rl.models.generation.pool.pool.PoolWorker"),
            ("WorkerPool", "nemo_rl.models.generation.pool.pool.Reservation"),
            ("WorkerPool", "nemo_rl.models.generation.pool.pool.PoolWorker")} <= rows
    assert ("PoolGeneration", "nemo_rl.models.generation.pool.pool.Reservation") not in rows


def test_a_backend_whose_build_chain_ends_nowhere_stays_undecided(tmp_path: Path) -> None:
    """The runtime builds a pool the tree does not define: no worker is claimed."""
    root = _pool_tree(tmp_path, pool_module="pool")
    (root / "nemo_rl/models/generation/pool/runtime.py").write_text(
        POOL_RUNTIME.format(pool_module="elsewhere"), encoding="utf-8")
    code, report = _check("--nemo-rl", str(root), config(root, "grpo.yaml", POOL_CONFIG))
    assert code == 1
    assert [(p["path"], p["rule"]) for p in report["problems"]] == [
        ("policy.generation", "tree.undecided")]
    assert "backend=pool: no generation driver of this tree starts workers for it" in (
        report["problems"][0]["message"])


@pytest.mark.parametrize("shape", ["cycle", "too deep"])
def test_a_build_walk_that_loops_or_runs_deep_ends_undecided(tmp_path: Path, shape: str) -> None:
    """Hostile build chains: a runtime and a pool that build each other and never start a
    worker, or a chain of more builds than the walk follows before the pool. Either is
    one `tree.undecided` problem, quickly, never a hang or a claimed worker."""
    root = _pool_tree(tmp_path)
    runtime = root / "nemo_rl/models/generation/pool/runtime.py"
    if shape == "cycle":
        runtime.write_text(
            "class Runtime:\n    def __init__(self, config):\n"
            "        self.other = Other(config)\n\n"
            "class Other:\n    def __init__(self, config):\n"
            "        self.back = Runtime(config)\n",
            encoding="utf-8")
    else:  # Runtime -> Hop0 -> ... -> Hop5 -> WorkerPool: past MAX_DEPTH builds
        hops = [f"Hop{i}" for i in range(6)]
        chain = ["Runtime", *hops]
        text = "from nemo_rl.models.generation.pool.pool import WorkerPool\n\n"
        for here, there in zip(chain, [*hops, "WorkerPool"], strict=True):
            text += (f"class {here}:\n    def __init__(self, config):\n"
                     f"        self.next = {there}(config)\n\n")
        runtime.write_text(text, encoding="utf-8")
    code, report = _check("--nemo-rl", str(root), config(root, "grpo.yaml", POOL_CONFIG))
    assert code == 1
    assert [(p["path"], p["rule"]) for p in report["problems"]] == [
        ("policy.generation", "tree.undecided")]
    assert not any(w["section"] == "policy.generation" for w in report["workers"])
