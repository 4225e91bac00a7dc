"""Issue 43, item 9 (part A): lines a user of `check` met on the corpus trees that said less
or more than the tree does. Each runs the installed command from a fresh folder, on a tree
the test writes, and where the issue's example is in the corpus, on the corpus too:

a) the tree's own assertion message is shown whole (its last line names the escape);
c) a rule met on two sections (a student's and a teacher's Policy) is one skipped line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.corpus import NEMO_RL
from tests.revision.trees import OLD_FILES, OLD_POLICY, config, write

REPO = Path(__file__).resolve().parents[2]
CORPUS = NEMO_RL

# A remedy as long as lm_policy's TP>=4 one (some 700 characters), its escape last.
REMEDY = " ".join(f"Step {i}: do the thing that helps." for i in range(20))
ESCAPE = "Set MY_ESCAPE=1 to bypass this check. (not recommended)"
TREE_RULES = f'''
        if "logprob_batch_size" in config and config["tp"] >= 4:
            sep = "\\n" + ("-" * 80)
            assert config["micro"] == config["logprob_batch_size"], (
                f"{{sep}}\\n"
                "{REMEDY}\\n"
                "{ESCAPE}"
                f"{{sep}}\\n"
            )
        if "MY_ARCH_LIST" not in os.environ:
            raise RuntimeError("MY_ARCH_LIST is not set")
'''
CONFIG = """
policy:
  tp: 4
  micro: 1
  logprob_batch_size: 2
  dtensor_cfg: {enabled: true}
teacher:
  tp: 1
  micro: 1
  dtensor_cfg: {enabled: true}
"""


def check(folder: Path, *argv: str) -> tuple[int, dict[str, Any], str]:
    """`nemo-rl-workers check --json` as the installed command runs it, from `folder`."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("NRL_IGNORE_TP_ACCURACY_CHECK", "MY_ARCH_LIST", "MY_ESCAPE")}
    done = subprocess.run(
        [sys.executable, "-m", "nemo_rl_workers", "check", "--no-cache", "--no-verify",
         "--json", *argv],
        capture_output=True, text=True, cwd=folder, timeout=300, check=False,
        env={**env, "NO_COLOR": "1"})
    return done.returncode, json.loads(done.stdout or "{}"), done.stderr


def _tree(root: Path) -> Path:
    policy = OLD_POLICY.replace("        megatron_enable = bool(",
                                textwrap.dedent(TREE_RULES).replace("\n", "\n        ")
                                .rstrip(" ") + "        megatron_enable = bool(", 1)
    return write(root, {**OLD_FILES, "nemo_rl/models/policy/lm_policy.py": "import os\n" + policy})


def _corpus() -> Path:
    if not (CORPUS / "nemo_rl" / "__init__.py").is_file():
        pytest.skip(f"the NeMo-RL corpus is absent ({CORPUS})")
    return CORPUS


def test_a_tree_s_long_assertion_message_is_shown_whole(tmp_path: Path) -> None:
    root = _tree(tmp_path / "fork")
    config(root, "c.yaml", CONFIG)
    code, report, err = check(root, "examples/configs/c.yaml")
    assert code == 1, err
    (problem,) = [p for p in report["problems"] if p["path"] == "policy.micro"]
    assert problem["message"].endswith(f'{REMEDY} {ESCAPE}"'), problem["message"]


def test_lm_policy_s_tp_assertion_names_its_escape(tmp_path: Path) -> None:
    corpus = _corpus()
    recipe = "examples/configs/recipes/llm/grpo-qwen3-30ba3b-8n8g-megatron.yaml"
    code, report, err = check(corpus, "--nemo-rl", ".", recipe)
    assert code == 1, err
    (problem,) = [p for p in report["problems"] if p["rule"] == "tree.refuses"]
    assert problem["message"].endswith(
        "1. Set tp_size to 1 or 2. (tensor_parallel_size for DTensor, or "
        "tensor_model_parallel_size for Megatron) 2. Set policy.train_micro_batch_size and "
        "policy.logprob_batch_size to be the same value. 3. Set "
        "loss_fn.force_on_policy_ratio=true to force ratio=1.0, this requires "
        "train_global_batch_size == num_prompts_per_step * num_generations_per_prompt. 4. Set "
        'NRL_IGNORE_TP_ACCURACY_CHECK=1 to bypass this check. (not recommended)"')


def test_a_rule_met_on_two_sections_is_skipped_once(tmp_path: Path) -> None:
    root = _tree(tmp_path / "fork")
    config(root, "c.yaml", CONFIG)
    code, report, err = check(root, "examples/configs/c.yaml")
    assert code == 1, err
    arch = [line for line in report["skipped"] if "MY_ARCH_LIST" in line]
    assert len(arch) == 1, report["skipped"]


def test_the_corpus_distillation_recipe_says_each_skipped_line_once() -> None:
    corpus = _corpus()
    code, report, err = check(corpus, "--nemo-rl", ".",
                              "examples/configs/distillation_math_megatron.yaml")
    assert code == 0, err
    skipped = report["skipped"]
    assert any("TORCH_CUDA_ARCH_LIST" in line for line in skipped)
    assert len(skipped) == len(set(skipped)), skipped


# b) A finding behind an `elif`/`else` branch the config does not take: the reason names
# the branch the call needs, never an earlier branch's test the config satisfies.
GRPO_BRANCHES = '''
from typing import TypedDict

from nemo_rl.models.policy.lm_policy import Policy


class PolicyConfig(TypedDict):
    model_name: str


class GRPOConfig(TypedDict):
    max_steps: int


class MasterConfig(TypedDict):
    policy: PolicyConfig
    grpo: GRPOConfig


def grpo_train(policy: Policy, master_config: MasterConfig):
    backend = master_config["policy"]["generation"]["backend"]
    if backend == "vllm":
        pass
    elif backend == "sglang":
        policy.finish_inference()
    if backend == "vllm":
        pass
    else:
        policy.swap_weights()
'''
BRANCHES_RECIPE = """\
policy:
  model_name: tiny
  dtensor_cfg: {enabled: true}
  generation: {backend: vllm, vllm_cfg: {async_engine: false}}
grpo: {max_steps: 1}
"""


def test_a_finding_behind_an_elif_names_the_branch_it_needs(tmp_path: Path) -> None:
    methods = "".join(f'''
    def {name}(self):
        return self.worker_group.run_all_workers_single_data("{name}")
''' for name in ("finish_inference", "swap_weights"))
    root = write(tmp_path / "fork", {
        **OLD_FILES,
        "nemo_rl/models/policy/lm_policy.py": OLD_POLICY + methods,
        "nemo_rl/algorithms/__init__.py": "",
        "nemo_rl/algorithms/grpo.py": GRPO_BRANCHES,
    })
    config(root, "grpo.yaml", BRANCHES_RECIPE)
    done = subprocess.run(
        [sys.executable, "-m", "nemo_rl_workers", "check", "--no-cache", "--json",
         "examples/configs/grpo.yaml"],
        capture_output=True, text=True, cwd=root, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    skipped = json.loads(done.stdout)["skipped"]
    (finish,) = [line for line in skipped if "'finish_inference'" in line
                 or "finish_inference:" in line]
    assert finish.endswith(
        "only under nemo_rl/algorithms/grpo.py:24 (backend == 'sglang'), and this config "
        "has policy.generation.backend='vllm'"), finish
    (swap,) = [line for line in skipped if "swap_weights" in line]
    assert swap.endswith(
        "only where nemo_rl/algorithms/grpo.py:26 (backend == 'vllm') is false, and this "
        "config has policy.generation.backend='vllm'"), swap


def test_ppo_s_not_colocated_branch_is_named_as_such() -> None:
    """ppo.py:922 `if not colocated_inference:`: the call under it needs the test false."""
    corpus = _corpus()
    done = subprocess.run(
        [sys.executable, "-m", "nemo_rl_workers", "check", "--no-cache", "--json", "--nemo-rl",
         ".", "examples/configs/ppo_math_1B.yaml"],
        capture_output=True, text=True, cwd=corpus, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    lines = json.loads(done.stdout)["skipped"]
    assert any("only where nemo_rl/algorithms/ppo.py:922 (colocated_inference) is false, and "
               "this config has policy.generation.colocated.enabled=True" in line
               for line in lines), lines
    assert not any("only under nemo_rl/algorithms/ppo.py:922 (colocated_inference)" in line
                   for line in lines)


# d) An extension field a tree ignores: the warning says what the tree's own drivers do.
EXTENSION_RECIPE = """\
policy:
  model_name: tiny
  dtensor_cfg: {enabled: true}
  worker_extension_cls_fqn: my.ext.PolicyWorker
  generation:
    backend: vllm
    vllm_cfg: {async_engine: false}
    worker_extension_cls_fqn: my.ext.GenerationWorker
"""


def _extension_warnings(folder: Path, *argv: str) -> list[str]:
    code, report, err = check(folder, *argv)
    assert code == 0, err
    return [w for w in report["warnings"] if "worker_extension_cls_fqn=my.ext" in w]


def test_an_ignored_extension_field_says_which_driver_takes_one(tmp_path: Path) -> None:
    """Policy takes one as a constructor argument; VllmGeneration has no such parameter."""
    root = write(tmp_path / "fork", OLD_FILES)
    config(root, "c.yaml", EXTENSION_RECIPE)
    policy, generation = _extension_warnings(root, "examples/configs/c.yaml")
    assert ("it reads no worker_extension_cls_fqn from the config; Policy takes it only as a "
            "constructor argument (nemo_rl/models/policy/lm_policy.py:7), so Policy starts "
            in policy), policy
    assert ("policy.generation.worker_extension_cls_fqn=my.ext.GenerationWorker is ignored by "
            "this NeMo-RL: it reads no worker_extension_cls_fqn from the config, and "
            "VllmGeneration's constructor has no such parameter (only Policy's: "
            "nemo_rl/models/policy/lm_policy.py:7), so VllmGeneration starts ") in generation
    assert "VllmGeneration's constructor argument" not in generation


def test_the_2026_tree_s_vllm_generation_takes_no_extension(tmp_path: Path) -> None:
    corpus = _corpus()
    recipe = tmp_path / "grpo_ext.yaml"
    recipe.write_text(f"defaults: {corpus}/examples/configs/grpo_math_1B.yaml\n"
                      + EXTENSION_RECIPE.replace("  model_name: tiny\n", "")
                      .replace("  dtensor_cfg: {enabled: true}\n", ""))
    policy, generation = _extension_warnings(corpus, "--nemo-rl", ".", str(recipe))
    assert "Policy takes it only as a constructor argument " \
           "(nemo_rl/models/policy/lm_policy.py:103)" in policy
    assert ("VllmGeneration's constructor has no such parameter (only Policy's: "
            "nemo_rl/models/policy/lm_policy.py:103)") in generation
