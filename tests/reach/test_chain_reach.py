"""#34 item 3: `check RECIPE` says a finding is "reached by this config" only along a chain
of calls that resolve, from an entry the recipe runs, with every guard on the way decided
on the config; the warning names the chain. On a tree written for it, five of Policy's
methods fail on DTensor v2 (the worker has none of them): one runs only with nemo-gym (a
helper's one `return` tests it), one only with Megatron generation, one only on the
synchronizer a factory builds for Megatron, one only after an assert on an fp8 KV cache
in a helper, one (`generate`) only from a rollout helper whose receiver is not annotated
and from a game's own `generate` in an example script (a method of the same name). A recipe
with none of those reaches none of them; each mutation that makes one run (a config
value, or an annotation in the source) makes it reached, naming its chain."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli_run import run_cli as run
from tests.revision.trees import OLD_FILES, config, write

METHODS = ("nemo_gym_rollout", "init_collective_mcore_generation",
           "calibrate_qkv_fp8_scales", "generate", "swap_weights_via_reshard")

POLICY = OLD_FILES["nemo_rl/models/policy/lm_policy.py"] + "".join(f'''
    def {method}(self):
        return self.worker_group.run_all_workers_single_data("{method}")
''' for method in METHODS)

CONFIGS = '''
from typing import NotRequired, TypedDict

from nemo_rl.experience.rollouts import run_rollouts
from nemo_rl.models.policy.lm_policy import Policy
from nemo_rl.weight_sync.factory import create_synchronizer


class PolicyConfig(TypedDict):
    model_name: str


class ClusterConfig(TypedDict):
    num_nodes: int


class GRPOConfig(TypedDict):
    max_steps: int


class MasterConfig(TypedDict):
    policy: PolicyConfig
    cluster: ClusterConfig
    grpo: GRPOConfig
    env: NotRequired[ClusterConfig]
'''

GRPO = CONFIGS + '''

def grpo_train(policy: Policy, master_config: MasterConfig):
    generation = master_config["policy"]["generation"]
    if generation["backend"] == "megatron":
        policy.init_collective_mcore_generation()
    if _use_nemo_gym(master_config):
        policy.nemo_gym_rollout()
    _calibrate(policy, master_config)
    run_rollouts(policy)
    synchronizer = create_synchronizer(policy, generation["backend"])
    synchronizer.sync()


def _calibrate(policy: Policy, master_config: MasterConfig):
    kv_cache_dtype = master_config["policy"]["generation"]["vllm_cfg"]["kv_cache_dtype"]
    assert kv_cache_dtype == "fp8", "calibration runs with an fp8 KV cache only"
    policy.calibrate_qkv_fp8_scales()


def _use_nemo_gym(master_config: MasterConfig) -> bool:
    """A helper whose one return is a test on the config."""
    return master_config["env"]["nemo_gym"]["enabled"]
'''

# A factory that builds the synchronizer the generation backend needs: only Megatron's
# swaps the policy's weights.
FACTORY = '''
MEGATRON_BACKEND = "megatron"


def create_synchronizer(policy, backend):
    if backend == MEGATRON_BACKEND:
        from nemo_rl.weight_sync.synchronizers import MegatronSynchronizer

        return MegatronSynchronizer(policy)
    from nemo_rl.weight_sync.synchronizers import IpcSynchronizer

    return IpcSynchronizer(policy)
'''

SYNCHRONIZERS = '''
from nemo_rl.models.policy.lm_policy import Policy


class MegatronSynchronizer:
    def __init__(self, policy: Policy):
        self.policy = policy

    def sync(self):
        return self.policy.swap_weights_via_reshard()


class IpcSynchronizer:
    def __init__(self, policy: Policy):
        self.policy = policy

    def sync(self):
        return None
'''

ROLLOUTS = '''
def run_rollouts({param}):
    return policy.generate()
'''

GAME = '''
class Game:
    def generate(self):
        return "a move"


def play(game: Game):
    return game.generate()
'''

RECIPE = """\
policy:
  model_name: tiny
  dtensor_cfg: {{enabled: true, _v2: true}}
  megatron_cfg: {{enabled: false}}
  generation:
    backend: {backend}
    vllm_cfg: {{async_engine: false, kv_cache_dtype: {kv}}}
cluster: {{num_nodes: 1, gpus_per_node: 1}}
grpo: {{max_steps: 1}}
env: {{nemo_gym: {{enabled: {gym}}}}}
"""

LINES = {"nemo_gym_rollout": 28, "init_collective_mcore_generation": 31,
         "calibrate_qkv_fp8_scales": 34, "generate": 37, "swap_weights_via_reshard": 40}
POLICY_FILE = "nemo_rl/models/policy/lm_policy.py"


def _where(method: str) -> str:
    return f"{POLICY_FILE}:{LINES[method]}"


def _tree(root: Path, *, annotated: bool = False) -> Path:
    param = "policy: Policy" if annotated else "policy"
    rollouts = ROLLOUTS.format(param=param)
    if annotated:
        rollouts = "from nemo_rl.models.policy.lm_policy import Policy\n" + rollouts
    return write(root, {
        **OLD_FILES,
        POLICY_FILE: POLICY,
        "nemo_rl/algorithms/__init__.py": "",
        "nemo_rl/algorithms/grpo.py": GRPO,
        "nemo_rl/experience/__init__.py": "",
        "nemo_rl/experience/rollouts.py": rollouts,
        "examples/game.py": GAME,
        "nemo_rl/weight_sync/__init__.py": "",
        "nemo_rl/weight_sync/factory.py": FACTORY,
        "nemo_rl/weight_sync/synchronizers.py": SYNCHRONIZERS,
    })


def _check(root: Path, *, backend: str = "vllm", kv: str = "auto",
           gym: str = "false") -> dict[str, Any]:
    path = config(root, "grpo.yaml", RECIPE.format(backend=backend, kv=kv, gym=gym))
    _, out, err = run("check", "--json", path)
    assert err == "", err
    report: dict[str, Any] = json.loads(out)
    return report


def _reached(report: dict[str, Any]) -> dict[str, str]:
    """Each of the methods a warning claims reached -> that warning."""
    return {m: line for m in METHODS for line in report["warnings"] if _where(m) in line}


def _skipped(report: dict[str, Any], method: str) -> list[str]:
    return [line for line in report["skipped"] if _where(method) in line]


def _head(method: str) -> str:
    return f"audit: policy: {_where(method)}: error[missing-method]: "


def test_a_recipe_that_runs_none_of_them_reaches_none(tmp_path: Path) -> None:
    report = _check(_tree(tmp_path))
    assert _reached(report) == {}
    assert _skipped(report, "init_collective_mcore_generation") == [
        _head("init_collective_mcore_generation")
        + "not reached by this config: along grpo.py:31 grpo_train -> lm_policy.py:31 "
        "Policy.init_collective_mcore_generation: only under nemo_rl/algorithms/grpo.py:30 "
        "(generation['backend'] == 'megatron'), and this config has "
        "policy.generation.backend='vllm'"]
    assert _skipped(report, "nemo_gym_rollout") == [
        _head("nemo_gym_rollout")
        + "not reached by this config: along grpo.py:33 grpo_train -> lm_policy.py:28 "
        "Policy.nemo_gym_rollout: only under nemo_rl/algorithms/grpo.py:32 "
        "(master_config['env']['nemo_gym']['enabled']), and this config has "
        "env.nemo_gym.enabled=False"]
    # The assert in the helper rules it out: it fails on `auto`.
    assert _skipped(report, "calibrate_qkv_fp8_scales") == [
        _head("calibrate_qkv_fp8_scales")
        + "not reached by this config: along grpo.py:34 grpo_train -> grpo.py:43 _calibrate "
        "-> lm_policy.py:34 Policy.calibrate_qkv_fp8_scales: only under "
        "nemo_rl/algorithms/grpo.py:42 (kv_cache_dtype == 'fp8'), and this config has "
        "policy.generation.vllm_cfg.kv_cache_dtype='auto'"]
    # The factory builds the synchronizer that swaps weights only for Megatron: its test,
    # in the caller's terms (the backend it is given, the constant's value), rules it out.
    assert _skipped(report, "swap_weights_via_reshard") == [
        _head("swap_weights_via_reshard")
        + "not reached by this config: along grpo.py:37 grpo_train [synchronizer from "
        "factory.py:9 create_synchronizer] -> synchronizers.py:10 MegatronSynchronizer.sync "
        "-> lm_policy.py:40 Policy.swap_weights_via_reshard: only under "
        "nemo_rl/weight_sync/factory.py:6 (generation['backend'] == 'megatron'), and this "
        "config has policy.generation.backend='vllm'"]
    # Called from the rollout helper, whose receiver is not annotated, and by name from the
    # game's own `generate` (Game's method, for certain): no chain, so not known, not reached.
    assert _skipped(report, "generate") == [
        _head("generate")
        + "not known to be reached: no chain of calls whose receivers resolve leads to it "
        "from an entry of the tree (nemo_rl/experience/rollouts.py:3 calls policy.generate "
        "on policy, not known to be a Policy (a parameter with no annotation))"]


def test_megatron_generation_reaches_its_call_naming_the_chain(tmp_path: Path) -> None:
    reached = _reached(_check(_tree(tmp_path), backend="megatron"))
    assert list(reached) == ["init_collective_mcore_generation", "swap_weights_via_reshard"]
    assert reached["init_collective_mcore_generation"].startswith(
        _head("init_collective_mcore_generation").removesuffix(": ")
        + " (reached by this config along grpo.py:31 grpo_train -> lm_policy.py:31 "
        "Policy.init_collective_mcore_generation): Policy.init_collective_mcore_generation "
        "calls 'init_collective_mcore_generation' on "
        "nemo_rl.models.policy.workers.dtensor_v2.DTensorPolicyWorkerV2")


def test_nemo_gym_reaches_its_call(tmp_path: Path) -> None:
    reached = _reached(_check(_tree(tmp_path), gym="true"))
    assert list(reached) == ["nemo_gym_rollout"]
    assert "(reached by this config along grpo.py:33 grpo_train -> lm_policy.py:28 " \
           "Policy.nemo_gym_rollout)" in reached["nemo_gym_rollout"]


def test_an_fp8_kv_cache_passes_the_assert_and_reaches_the_calibration(
        tmp_path: Path) -> None:
    reached = _reached(_check(_tree(tmp_path), kv="fp8"))
    assert list(reached) == ["calibrate_qkv_fp8_scales"]
    assert "(reached by this config along grpo.py:34 grpo_train -> grpo.py:43 _calibrate " \
           "-> lm_policy.py:34 Policy.calibrate_qkv_fp8_scales)" in \
        reached["calibrate_qkv_fp8_scales"]


def test_annotating_the_rollout_helpers_receiver_makes_generate_reached(
        tmp_path: Path) -> None:
    reached = _reached(_check(_tree(tmp_path, annotated=True)))
    assert list(reached) == ["generate"]
    assert "(reached by this config along grpo.py:35 grpo_train -> rollouts.py:4 " \
           "run_rollouts -> lm_policy.py:37 Policy.generate)" in reached["generate"]


def test_megatron_generation_reaches_what_the_factory_builds_for_it(tmp_path: Path) -> None:
    reached = _reached(_check(_tree(tmp_path), backend="megatron"))
    assert "(reached by this config along grpo.py:37 grpo_train [synchronizer from " \
           "factory.py:9 create_synchronizer] -> synchronizers.py:10 " \
           "MegatronSynchronizer.sync -> lm_policy.py:40 Policy.swap_weights_via_reshard)" in \
        reached["swap_weights_via_reshard"]
