"""`policy.generation.backend: megatron` (issue 34, item 2): the policy's own workers
generate, no generation worker group starts; decided from the tree's source, on trees
written here and on both real trees."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from nemo_rl_workers.commands.cli import main
from tests.cli_run import run_cli as run
from tests.corpus import corpus_tree
from tests.revision.test_trees import OLD_CONFIG
from tests.revision.trees import OLD_POLICY, config, old_tree, write

POLICY = "nemo_rl.models.policy.workers"
GENERATING_POLICY = OLD_POLICY + '''
    def generate(self, data):
        return self.worker_group.run_all_workers_single_data("generate", data=data)
'''

# An entry that runs the policy's workers for generation under backend == "megatron".
ALGORITHM = '''
from nemo_rl.models.generation.vllm_generation import VllmGeneration


def setup(master_config):
    generation_config = master_config["policy"]["generation"]
    backend = generation_config["backend"]
    if backend == "megatron":
        policy_generation = None
    else:
        policy_generation = VllmGeneration(generation_config)
    return policy_generation
'''

MEGATRON = OLD_CONFIG.replace("    backend: vllm\n", "    backend: megatron\n")


def _workers(report: dict[str, Any]) -> dict[str, str]:
    return {w["section"]: w["fqn"] for w in report["workers"]}


def test_the_policy_s_workers_generate_where_the_entry_builds_no_generation_driver(
        tmp_path: Path) -> None:
    root = write(old_tree(tmp_path), {
        "nemo_rl/models/policy/lm_policy.py": GENERATING_POLICY,
        "nemo_rl/algorithms/__init__.py": "", "nemo_rl/algorithms/grpo.py": ALGORITHM})
    code, out, _ = run("check", "--no-verify", "--json", config(root, "m.yaml", MEGATRON))
    report = json.loads(out)
    assert (code, report["problems"]) == (0, [])
    assert _workers(report) == {"policy": f"{POLICY}.dtensor.DTensorPolicyWorker",
                                "policy.generation": f"{POLICY}.dtensor.DTensorPolicyWorker"}
    assert ("policy.generation: no generation worker group: with backend=megatron the "
            "policy's workers generate (under `backend == 'megatron'` at "
            "nemo_rl/algorithms/grpo.py:8 the tree builds no generation driver, and Policy "
            "calls generate on its own workers)") in report["skipped"]


def test_without_such_a_branch_it_stays_undecided(tmp_path: Path) -> None:
    """The policy generates nothing in a tree whose entry never branches on the backend."""
    root = write(old_tree(tmp_path), {"nemo_rl/models/policy/lm_policy.py": GENERATING_POLICY})
    code, out, _ = run("check", "--no-verify", "--json", config(root, "m.yaml", MEGATRON))
    report = json.loads(out)
    assert code == 1
    assert [(p["path"], p["rule"]) for p in report["problems"]] == [
        ("policy.generation", "tree.undecided")]


@pytest.mark.parametrize(("corpus", "recipe", "overrides", "worker"), [
    ("2025-09", "examples/configs/grpo_math_1B_megatron.yaml",
     ["policy.generation.backend=megatron"],
     "nemo_rl.models.policy.megatron_policy_worker.MegatronPolicyWorker"),
    ("2026-08", "examples/configs/recipes/llm/grpo-nanov3-30BA3B-2n8g-megatron_generation.yaml",
     [], "nemo_rl.models.policy.workers.megatron_policy_worker.MegatronPolicyWorker"),
])
def test_megatron_generation_on_the_real_trees(corpus: str, recipe: str, overrides: list[str],
                                               worker: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """2025-09: grpo.py:321 `if backend == "megatron": policy_generation = None`; 2026:
    MegatronGeneration takes the Policy (megatron_generation.py:93)."""
    root = corpus_tree(corpus)
    monkeypatch.chdir(root)
    out, err = io.StringIO(), io.StringIO()
    code = main(["check", "--nemo-rl", ".", "--no-verify", "--json", recipe, *overrides],
                out, err)
    report = json.loads(out.getvalue())
    assert (code, report["problems"]) == (0, [])
    assert _workers(report) == {"policy": worker, "policy.generation": worker}
