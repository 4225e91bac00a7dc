"""A tree's own pre-allocation rules (issue 34, item 1): the asserts and raises its drivers'
constructors and its algorithm's `setup` run on config values before any worker starts,
read from the tree's source and evaluated on the config; the reference's built-in rules
are not applied to it. Trees written here; the real trees in test_corpus."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli_run import run_cli as run
from tests.revision.trees import GENERATION, OLD_FILES, config, write

# A Policy with rules of its own, none of them the reference's: arithmetic on config
# values, an environment escape, a raise under a test, a check after its workers start.
POLICY_WITH_RULES = '''
import os
from nemo_rl.distributed.worker_groups import RayWorkerBuilder, RayWorkerGroup

LIMIT = 64


class Policy:
    def __init__(self, cluster, config, worker_extension_cls_fqn=None):
        megatron_enable = bool(config.get("megatron_cfg", {}).get("enabled", False))
        if megatron_enable:
            fqn = "nemo_rl.models.policy.workers.megatron.MegatronPolicyWorker"
        else:
            fqn = "nemo_rl.models.policy.workers.dtensor.DTensorPolicyWorker"
        shards = config["dtensor_cfg"]["tensor_parallel_size"] * 2
        if not os.environ.get("FORK_IGNORE_SHARDS") and shards > 4:
            assert config["train_micro_batch_size"] % shards == 0, (
                f"train_micro_batch_size must divide by {shards} shards"
            )
        if config.get("max_total_sequence_length", 0) > LIMIT:
            raise ValueError("sequences longer than LIMIT are not supported by this fork")
        assert cluster.world_size() >= shards, "not enough GPUs"
        self.worker_group = RayWorkerGroup(RayWorkerBuilder(fqn, config))
        assert config["train_micro_batch_size"] < 0, "checked only after workers start"

    def train(self, data):
        return self.worker_group.run_all_workers_single_data("train", data=data)
'''

# An algorithm whose setup sets the escape itself under a config switch, and checks a
# batch equation; then builds the Policy (its workers start there).
ALGORITHM = '''
import os
from typing import TypedDict
from nemo_rl.models.policy.lm_policy import Policy


class PolicyConfig(TypedDict):
    train_micro_batch_size: int


class LossConfig(TypedDict):
    escape_shards: bool


class MasterConfig(TypedDict):
    policy: PolicyConfig
    loss_fn: LossConfig


def setup(master_config: MasterConfig, tokenizer):
    policy_config = master_config["policy"]
    if master_config["loss_fn"]["escape_shards"]:
        assert policy_config["train_global_batch_size"] == 2 * 8, (
            "escape_shards needs train_global_batch_size == 16"
        )
        os.environ["FORK_IGNORE_SHARDS"] = "1"
    policy = Policy(None, policy_config)
    assert master_config["loss_fn"]["escape_shards"] is None, "after the workers start"
    return policy
'''

RULES_CONFIG = """\
policy:
  model_name: tiny
  train_micro_batch_size: 6
  train_global_batch_size: 16
  max_total_sequence_length: 32
  dtensor_cfg:
    enabled: true
    tensor_parallel_size: 4
  megatron_cfg: {enabled: false}
loss_fn:
  escape_shards: false
"""


def _tree(tmp_path: Path, *, algorithm: bool = False) -> Path:
    files = {**OLD_FILES, "nemo_rl/models/policy/lm_policy.py": POLICY_WITH_RULES,
             "nemo_rl/models/generation/vllm_generation.py": GENERATION}
    if algorithm:
        files |= {"nemo_rl/algorithms/__init__.py": "", "nemo_rl/algorithms/fork.py": ALGORITHM}
    return write(tmp_path, files)


def _check(*argv: str) -> tuple[int, dict[str, Any]]:
    code, out, _ = run("check", "--no-verify", "--json", *argv)
    report: dict[str, Any] = json.loads(out)  # one config: its report alone
    return code, report


def test_the_tree_s_own_assertion_refuses_the_config(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FORK_IGNORE_SHARDS", raising=False)
    root = _tree(tmp_path)
    path = config(root, "fork.yaml", RULES_CONFIG)
    code, out, err = run("check", "-v", "--no-verify", path)
    assert (code, err) == (1, "")
    problems = [line for line in out.splitlines() if "problem:" in line]
    # The line of the key the sentence names (train_micro_batch_size is line 3), the tree's
    # condition, the values it was decided on, its file:line and its own message.
    assert problems == [
        f"  problem: {path}:3: policy.train_micro_batch_size: this NeMo-RL refuses the config "
        "before any worker starts: assert config['train_micro_batch_size'] % shards == 0 "
        "fails (policy.train_micro_batch_size=6, policy.dtensor_cfg.tensor_parallel_size=4, "
        "$FORK_IGNORE_SHARDS is unset) at nemo_rl/models/policy/lm_policy.py:17 "
        "(Policy.__init__): \"train_micro_batch_size must divide by 8 shards\""]
    # What this check cannot compute is undecided, with the reason; never a problem.
    assert ("  skipped: tree rule nemo_rl/models/policy/lm_policy.py:22 (Policy.__init__): "
            "cluster.world_size() >= shards: undecided: cluster.world_size() is the size of a "
            "cluster the tree builds at run time") in out.splitlines()
    # Nothing after its workers start is a pre-allocation rule.
    assert "checked only after workers start" not in out


def test_the_tree_s_escape_variable_and_values_that_pass(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _tree(tmp_path)
    path = config(root, "fork.yaml", RULES_CONFIG)
    monkeypatch.setenv("FORK_IGNORE_SHARDS", "1")
    code, report = _check(path)
    assert (code, report["problems"]) == (0, [])
    monkeypatch.delenv("FORK_IGNORE_SHARDS")
    code, report = _check(config(root, "even.yaml", RULES_CONFIG.replace(
        "train_micro_batch_size: 6", "train_micro_batch_size: 16")))
    assert (code, report["problems"]) == (0, [])


def test_a_raise_under_the_tree_s_test(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORK_IGNORE_SHARDS", "1")
    root = _tree(tmp_path)
    path = config(root, "long.yaml", RULES_CONFIG.replace(
        "max_total_sequence_length: 32", "max_total_sequence_length: 128"))
    code, report = _check(path)
    assert code == 1
    assert [(p["rule"], p["path"], p["line"]) for p in report["problems"]] == [
        ("tree.refuses", "policy.max_total_sequence_length", 5)]
    assert report["problems"][0]["message"] == (
        "policy.max_total_sequence_length: this NeMo-RL refuses the config before any worker "
        "starts: it raises ValueError where config.get('max_total_sequence_length', 0) > LIMIT "
        "(policy.max_total_sequence_length=128) at nemo_rl/models/policy/lm_policy.py:21 "
        "(Policy.__init__): \"sequences longer than LIMIT are not supported by this fork\"")


def test_the_algorithm_s_setup_runs_first(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """setup's own assertion is checked, and the escape it sets is what Policy reads."""
    monkeypatch.delenv("FORK_IGNORE_SHARDS", raising=False)
    root = _tree(tmp_path, algorithm=True)
    escaped = RULES_CONFIG.replace("escape_shards: false", "escape_shards: true")
    code, report = _check(config(root, "escaped.yaml", escaped))
    assert (code, report["problems"]) == (0, [])
    code, report = _check(config(root, "wrong_batch.yaml", escaped.replace(
        "train_global_batch_size: 16", "train_global_batch_size: 12")))
    assert code == 1
    assert [(p["path"], p["message"].rsplit(": ", 1)[1]) for p in report["problems"]] == [
        ("policy.train_global_batch_size",
         '"escape_shards needs train_global_batch_size == 16"')]
    assert "nemo_rl/algorithms/fork.py:23 (fork.setup)" in report["problems"][0]["message"]
    assert not any("after the workers start" in line for line in report["skipped"])


def test_the_reference_s_built_in_rules_are_not_the_tree_s(tmp_path: Path) -> None:
    """The reference's TP >= 4 logprob rule is not applied to a tree without it."""
    root = _tree(tmp_path)
    path = config(root, "tp.yaml", RULES_CONFIG.replace(
        "train_micro_batch_size: 6", "train_micro_batch_size: 8\n  logprob_batch_size: 2"))
    code, report = _check(path, "--nemo-rl", str(root))
    assert (code, report["problems"]) == (0, [])
    reference = config(root, "tp_reference.yaml", Path(path).read_text().replace(
        "dtensor_cfg", "automodel_cfg"))
    code, report = _check(reference, "--reference")
    assert code == 1
    assert "preflight.parallelism.tp_accuracy" in {p["rule"] for p in report["problems"]}


def test_what_a_handler_may_catch_is_undecided(tmp_path: Path) -> None:
    caught = POLICY_WITH_RULES.replace(
        '''        if config.get("max_total_sequence_length", 0) > LIMIT:
            raise ValueError("sequences longer than LIMIT are not supported by this fork")''',
        '''        try:
            if config.get("max_total_sequence_length", 0) > LIMIT:
                raise ValueError("sequences longer than LIMIT are not supported by this fork")
        except ValueError:
            pass''')
    assert caught != POLICY_WITH_RULES
    root = write(_tree(tmp_path), {"nemo_rl/models/policy/lm_policy.py": caught})
    path = config(root, "long.yaml", RULES_CONFIG.replace(
        "max_total_sequence_length: 32", "max_total_sequence_length: 128").replace(
        "train_micro_batch_size: 6", "train_micro_batch_size: 16"))
    code, report = _check(path)
    assert (code, report["problems"]) == (0, [])
    assert any(line.startswith("tree rule nemo_rl/models/policy/lm_policy.py:22 ")
               and line.endswith("undecided: it runs inside a try whose handlers may catch it")
               for line in report["skipped"])


def test_hostile_trees_and_configs_end_in_a_verdict(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A message of thousands of concatenated parts, a config number of thousands of
    digits: one verdict each, never an internal error."""
    monkeypatch.delenv("FORK_IGNORE_SHARDS", raising=False)
    deep = " + ".join(['"x"'] * 3000)
    hostile = POLICY_WITH_RULES.replace(
        '''f"train_micro_batch_size must divide by {shards} shards"''', deep)
    root = write(_tree(tmp_path), {"nemo_rl/models/policy/lm_policy.py": hostile})
    code, report = _check(config(root, "deep.yaml", RULES_CONFIG))
    # (The source model gives up on that module: its Policy is undecided, with the reason.)
    assert code in (0, 1) and all(p["rule"].startswith("tree.") for p in report["problems"])
    huge = RULES_CONFIG.replace("train_micro_batch_size: 6",
                                "train_micro_batch_size: " + "7" * 5000)
    root = _tree(tmp_path / "huge")
    code, report = _check(config(root, "huge.yaml", huge))
    assert code in (0, 1, 2)
    assert not any("train_micro_batch_size" in p["path"] for p in report["problems"])


# A setup whose config is a pydantic-style model: a field the config leaves out is the
# model's literal default, as the validated model would have it.
MODEL_ALGORITHM = '''
from pydantic import BaseModel, Field
from nemo_rl.models.policy.lm_policy import Policy


class PolicyConfig(BaseModel):
    train_global_batch_size: int


class LossConfig(BaseModel):
    strict_batches: bool = True
    loose: bool = Field(default=False)


class MasterConfig(BaseModel):
    policy: PolicyConfig
    loss_fn: LossConfig


def setup(master_config: MasterConfig):
    if master_config.loss_fn.strict_batches and not master_config.loss_fn.loose:
        assert master_config.policy.train_global_batch_size % 8 == 0, "batches of 8"
    return Policy(None, master_config.policy)
'''


def test_a_config_model_s_default_decides(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORK_IGNORE_SHARDS", "1")
    root = write(_tree(tmp_path), {"nemo_rl/algorithms/__init__.py": "",
                                   "nemo_rl/algorithms/fork.py": MODEL_ALGORITHM})
    code, report = _check(config(root, "c.yaml", RULES_CONFIG.replace(
        "train_global_batch_size: 16", "train_global_batch_size: 12")))
    assert code == 1
    assert [p["path"] for p in report["problems"]] == ["policy.train_global_batch_size"]
    assert ("(policy.train_global_batch_size=12, loss_fn.loose=absent, so its model's "
            "False, loss_fn.strict_batches=absent, so its model's True)"
            ) in report["problems"][0]["message"]
    code, report = _check(config(root, "off.yaml", RULES_CONFIG.replace(
        "train_global_batch_size: 16", "train_global_batch_size: 12").replace(
        "escape_shards: false", "escape_shards: false\n  strict_batches: false")))
    assert (code, report["problems"]) == (0, [])
