"""#28 item 5: `check` of a recipe reports the audit findings that recipe reaches, on a
tree written for it. `Policy.finish_inference` is missing on DTensor v1 and called from
PPO's loop and from GRPO's under `backend == "vllm" and grpo.finish_each_step`: a PPO
recipe reaches it, a GRPO recipe that does not finish each step does not (each chain
named with its reason), one that does reaches it (#34: along calls whose receiver is
annotated `Policy`, the chain named), and a caller whose receiver's type is not known
leaves it not known to be reached (a skipped line, not a warning)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli_run import run_cli as run
from tests.revision.trees import OLD_FILES, config, write

POLICY_WITH_FINISH = OLD_FILES["nemo_rl/models/policy/lm_policy.py"] + '''
    def finish_inference(self):
        return self.worker_group.run_all_workers_single_data("finish_inference")
'''

CONFIGS = '''
from typing import NotRequired, TypedDict

from nemo_rl.models.policy.lm_policy import Policy


class PolicyConfig(TypedDict):
    model_name: str


class ClusterConfig(TypedDict):
    num_nodes: int


class {algo}Config(TypedDict):
    max_steps: int


class MasterConfig(TypedDict):
    policy: PolicyConfig
    cluster: ClusterConfig
    {key}: {algo}Config
    logger: NotRequired[ClusterConfig]
'''

PPO = CONFIGS.format(algo="PPO", key="ppo") + '''

def ppo_train(policy: Policy, master_config: MasterConfig):
    policy.finish_inference()
'''

GRPO = CONFIGS.format(algo="GRPO", key="grpo") + '''

def grpo_train(policy: Policy, master_config: MasterConfig):
    backend = master_config["policy"]["generation"]["backend"]
    if backend == "vllm" and master_config["grpo"]["finish_each_step"]:
        policy.finish_inference()
'''

ROLLOUTS = '''
def run_rollouts(policy, batch):
    policy.finish_inference()
'''

RECIPE = """\
policy:
  model_name: tiny
  dtensor_cfg: {{enabled: true, _v2: false}}
  megatron_cfg: {{enabled: false}}
  generation:
    backend: vllm
    vllm_cfg: {{async_engine: false}}
cluster: {{num_nodes: 1, gpus_per_node: 1}}
{key}: {{max_steps: 1, finish_each_step: {finish}}}
"""

FINISH = "nemo_rl/models/policy/lm_policy.py:28"


def _tree(root: Path, *, rollouts: bool = False) -> Path:
    files = {
        **OLD_FILES,
        "nemo_rl/models/policy/lm_policy.py": POLICY_WITH_FINISH,
        "nemo_rl/models/policy/workers/dtensor_v2.py": (
            "class DTensorPolicyWorkerV2:\n    def train(self, data): ...\n\n"
            "    def finish_inference(self): ...\n"),
        "nemo_rl/algorithms/__init__.py": "",
        "nemo_rl/algorithms/ppo.py": PPO,
        "nemo_rl/algorithms/grpo.py": GRPO,
    }
    if rollouts:
        files["nemo_rl/experience/__init__.py"] = ""
        files["nemo_rl/experience/rollouts.py"] = ROLLOUTS
    return write(root, files)


def _check(path: str) -> dict[str, Any]:
    code, out, err = run("check", "--json", path)
    assert err == "", err
    report: dict[str, Any] = json.loads(out)
    assert code == 0, report
    return report


def _about_finish(lines: list[str]) -> list[str]:
    return [line for line in lines if FINISH in line]


def test_a_ppo_recipe_reaches_the_finding_from_ppo(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    report = _check(config(root, "ppo.yaml", RECIPE.format(key="ppo", finish="false")))
    (line,) = _about_finish(report["warnings"])
    assert line.startswith(
        f"audit: policy: {FINISH}: error[missing-method] (reached by this config along "
        "ppo.py:27 ppo_train -> lm_policy.py:28 Policy.finish_inference): "
        "Policy.finish_inference calls 'finish_inference' on "
        "nemo_rl.models.policy.workers.dtensor.DTensorPolicyWorker")
    assert _about_finish(report["skipped"]) == []


def test_a_grpo_recipe_that_does_not_finish_each_step_does_not_reach_it(
        tmp_path: Path) -> None:
    root = _tree(tmp_path)
    report = _check(config(root, "grpo.yaml", RECIPE.format(key="grpo", finish="false")))
    assert _about_finish(report["warnings"]) == []
    assert _about_finish(report["skipped"]) == [
        f"audit: policy: {FINISH}: error[missing-method]: not reached by this config: "
        "along grpo.py:29 grpo_train -> lm_policy.py:28 Policy.finish_inference: only under "
        "nemo_rl/algorithms/grpo.py:28 (master_config['grpo']['finish_each_step']), and "
        "this config has grpo.finish_each_step=False; ppo.py:27 ppo_train -> lm_policy.py:28 "
        "Policy.finish_inference runs on configs with ppo"]


def test_a_grpo_recipe_that_finishes_each_step_reaches_it(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    report = _check(config(root, "grpo.yaml", RECIPE.format(key="grpo", finish="true")))
    (line,) = _about_finish(report["warnings"])
    assert ("(reached by this config along grpo.py:29 grpo_train -> lm_policy.py:28 "
            "Policy.finish_inference)") in line


def test_a_caller_whose_receiver_is_not_known_leaves_it_not_known(tmp_path: Path) -> None:
    root = _tree(tmp_path, rollouts=True)
    report = _check(config(root, "grpo.yaml", RECIPE.format(key="grpo", finish="false")))
    assert _about_finish(report["warnings"]) == []
    (line,) = _about_finish(report["skipped"])
    assert line.startswith(f"audit: policy: {FINISH}: error[missing-method]: not known to "
                           "be reached: along grpo.py:29 grpo_train")
    assert line.endswith("; but nemo_rl/experience/rollouts.py:3 calls policy.finish_inference "
                         "on policy, not known to be a Policy (a parameter with no "
                         "annotation)")
