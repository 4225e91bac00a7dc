"""Recall on what upstream actually broke (issue 44, item 5): recipes that upstream NeMo-RL's
own `setup` refused, and that a later upstream change fixed, are refused by `check` with the
tree's own message and file:line before the fix, and are clean after it. Each case was
confirmed by hand against the corpus source (rule, failing values, fix); the trees here are
written by the tests (tests/recall/upstream_trees.py) in the shape of those files.

1. prorlv2_1_moe: the 2026-08 corpus's examples/configs/prorlv2_1_moe.v2.yaml sets
   `grpo.use_dynamic_sampling: false` over its parent prorlv2.v2.yaml, which keeps
   `grpo.batch_multiplier: 1.5` (line 32); nemo_rl/algorithms/grpo.py:571 (`setup`,
   "Validate batch_multiplier") asserts `batch_multiplier == 1` when dynamic sampling is off.
   No upstream commit fixing it was found (the thread search finds none; the forks
   xiuhu17/RL and xuanduy04/ordures_v070 hold the file unchanged): the fix tested is the one
   the assertion names, `grpo.batch_multiplier: 1` in the MoE file.
2. grpo-nanov3-30BA3B-2n8g-megatron_generation-async-gym: its base
   examples/nemo_gym/grpo_nanov3.yaml sizes Megatron for 32 nodes (TP2 x PP2 x CP4 = 16),
   the recipe runs 2 nodes with generation non-colocated on one of them, so the Policy's
   cluster has 8 GPUs: nemo_rl/models/policy/lm_policy.py:226 raises "World size (8) is
   insufficient ...". Fixed by upstream PR #3150 ("fix(grpo): pin inference_optimized config
   for newer Megatron-Core images", https://github.com/NVIDIA-NeMo/RL/pull/3150), which
   overrides `pipeline_model_parallel_size: 1` and `context_parallel_size: 1` in the recipe.
3. Non-colocated Megatron generation: the 2025-09 corpus's nemo_rl/algorithms/grpo.py:242
   asserts `generation_config["backend"] != "megatron"` on the non-colocated branch of
   `setup` ("Non-colocated inference is not supported for Megatron generation backends");
   upstream later relaxed the rule (the 2026-08 tree has no such assertion, and runs the
   recipe of case 2 with Megatron generation on its own node). Non-colocated Megatron
   generation entered grpo.py with "feat: Update Megatron Inference"
   (https://github.com/NVIDIA-NeMo/RL/pull/2355); the deletion itself is read from the two
   corpus revisions, not from a thread.

4. vLLM's own data parallelism (EP > TP) with the async engine: the 2026-08 corpus's
   nemo_rl/models/generation/vllm/vllm_generation.py:141 asserts `not async_engine` when
   `expert_parallel_size != tensor_parallel_size` ("vLLM async_engine has some issues when using
   DP inside vLLM ... See https://github.com/NVIDIA-NeMo/RL/issues/1101"). The launch is the
   GRPO command of upstream PR #2517 ("feat: fix the vLLM DP path",
   https://github.com/NVIDIA-NeMo/RL/pull/2517): grpo_math_1B_megatron.yaml with vLLM TP 4,
   EP 8, `async_engine=true`, generation on 2 of 4 nodes. That PR's diff deletes the
   assertion, and issue #1101 was closed with "Async engine for vLLM DP is fixed in #2517";
   the thread is still open in the index and the 2026-08 tree still holds the rule, so this
   relaxation is upstream's proposed one, not yet one a corpus tree shows.

The corpus tests at the end check the real trees where the corpus is present.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.cli_run import run_cli as run
from tests.corpus import NEMO_RL, NEMO_RL_2025_09
from tests.recall.upstream_trees import (
    GRPO_2025,
    GRPO_2026,
    MEGATRON_NONCOLOCATED_RULE,
    POLICY,
    VLLM_DP_ASYNC_RULE,
    VLLM_GENERATION,
    grpo_tree,
    line_of,
)
from tests.revision.trees import config

REPO = Path(__file__).resolve().parents[2]
CORPUS_2026 = NEMO_RL
CORPUS_2025 = NEMO_RL_2025_09

REFUSES = "this NeMo-RL refuses the config before any worker starts"

# Case 1: prorlv2.v2.yaml's grpo block (dynamic sampling on, batch_multiplier 1.5) and the
# MoE recipe that turns dynamic sampling off over it.
PRORLV2 = """\
policy:
  model_name: Qwen/Qwen2.5-1.5B
  dtensor_cfg: {enabled: true, tensor_parallel_size: 1, context_parallel_size: 1}
  generation:
    backend: vllm
    colocated: {enabled: true}
    vllm_cfg:
      async_engine: false
      tensor_parallel_size: 1
      pipeline_parallel_size: 1
      expert_parallel_size: 1
grpo:
  num_prompts_per_step: 128
  use_dynamic_sampling: true
  batch_multiplier: 1.5  # Generate more prompts to account for filtering
cluster: {gpus_per_node: 1, num_nodes: 1}
"""
PRORLV2_1_MOE = """\
defaults: prorlv2.yaml
grpo:
  use_dynamic_sampling: false
"""
PRORLV2_1_MOE_FIXED = PRORLV2_1_MOE + "  batch_multiplier: 1\n"

# Case 2: grpo_nanov3.yaml's Megatron sizes and cluster, and the async-gym recipe over it.
NANOV3 = """\
policy:
  model_name: nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16
  megatron_cfg:
    enabled: true
    tensor_model_parallel_size: 2
    pipeline_model_parallel_size: 2
    context_parallel_size: 4
  generation:
    backend: megatron
    colocated:
      enabled: true
      resources: {gpus_per_node: null, num_nodes: null}
grpo:
  num_prompts_per_step: 128
cluster:
  gpus_per_node: 8
  num_nodes: 32
"""
ASYNC_GYM = """\
defaults: grpo_nanov3.yaml
policy:
  generation:
    backend: megatron
    colocated:
      enabled: false
      resources:
        gpus_per_node: 8
        num_nodes: 1
cluster:
  num_nodes: 2
"""
# PR #3150's fix: the recipe sizes Megatron for the 8 training GPUs it has.
ASYNC_GYM_FIXED = ASYNC_GYM.replace("policy:\n", """\
policy:
  megatron_cfg:
    pipeline_model_parallel_size: 1
    context_parallel_size: 1
""", 1)


# Case 4: grpo_math_1B_megatron.yaml's shape (Megatron policy, vLLM generation) and PR
# #2517's GRPO command line, as overrides.
GRPO_MEGATRON = """\
policy:
  model_name: Qwen/Qwen2.5-1.5B
  megatron_cfg:
    enabled: true
    tensor_model_parallel_size: 1
    pipeline_model_parallel_size: 1
    context_parallel_size: 1
    expert_model_parallel_size: 1
  sequence_packing: {enabled: true}
  generation:
    backend: vllm
    colocated:
      enabled: true
      resources: {gpus_per_node: null, num_nodes: null}
    vllm_cfg:
      async_engine: false
      tensor_parallel_size: 1
      pipeline_parallel_size: 1
      expert_parallel_size: 1
grpo:
  num_prompts_per_step: 32
cluster: {gpus_per_node: 1, num_nodes: 1}
"""
PR_2517_LAUNCH = (
    "policy.model_name=Qwen/Qwen3-30B-A3B", "cluster.num_nodes=4", "cluster.gpus_per_node=4",
    "policy.generation.colocated.enabled=false",
    "policy.generation.colocated.resources.num_nodes=2",
    "policy.generation.colocated.resources.gpus_per_node=4",
    "policy.generation.vllm_cfg.tensor_parallel_size=4",
    "policy.generation.vllm_cfg.expert_parallel_size=8",
    "policy.generation.vllm_cfg.async_engine=true",
    "policy.megatron_cfg.expert_model_parallel_size=8",
    "policy.sequence_packing.enabled=false")


def _check(*argv: str) -> tuple[int, dict[str, Any]]:
    code, out, err = run("check", "--no-verify", "--json", *argv)
    assert err == ""
    report: dict[str, Any] = json.loads(out)  # one config: its report alone
    return code, report


def _refusals(report: dict[str, Any]) -> list[tuple[str, str]]:
    return [(p["path"], p["message"]) for p in report["problems"]
            if p["rule"] == "tree.refuses"]


def test_prorlv2_1_moe_is_refused_at_the_batch_multiplier_rule(tmp_path: Path) -> None:
    root = grpo_tree(tmp_path, GRPO_2026)
    parent = config(root, "prorlv2.yaml", PRORLV2)
    code, report = _check(config(root, "prorlv2_1_moe.yaml", PRORLV2_1_MOE))
    rule = line_of(GRPO_2026, "assert batch_multiplier == 1")
    assert code == 1
    assert _refusals(report) == [(
        "grpo.batch_multiplier",
        f"grpo.batch_multiplier: {REFUSES}: assert batch_multiplier == 1 fails "
        "(grpo.batch_multiplier=1.5, grpo.use_dynamic_sampling=False) at "
        f"nemo_rl/algorithms/grpo.py:{rule} (grpo.setup): "
        '"batch_multiplier>1 can only be used if use_dynamic_sampling=True"')]
    # The line named is the parent's, where the value comes from.
    assert [(p["file"], p["line"]) for p in report["problems"]] == [
        (parent, line_of(PRORLV2, "batch_multiplier: 1.5"))]


def test_prorlv2_and_the_fixed_moe_recipe_are_clean(tmp_path: Path) -> None:
    root = grpo_tree(tmp_path, GRPO_2026)
    config(root, "prorlv2.yaml", PRORLV2)
    for name, text in (("prorlv2_again.yaml", "defaults: prorlv2.yaml\n"),
                       ("prorlv2_1_moe.yaml", PRORLV2_1_MOE_FIXED)):
        code, report = _check(config(root, name, text))
        assert (code, report["problems"]) == (0, []), name
    # The model's default (batch_multiplier: float = 1.0) passes where no file sets it.
    unset = PRORLV2.replace("  batch_multiplier: 1.5  # Generate more prompts to account "
                            "for filtering\n", "").replace(
        "use_dynamic_sampling: true", "use_dynamic_sampling: false")
    code, report = _check(config(root, "unset.yaml", unset))
    assert (code, report["problems"]) == (0, [])


def test_the_nanov3_async_gym_recipe_is_refused_by_the_world_size_rule(
        tmp_path: Path) -> None:
    root = grpo_tree(tmp_path, GRPO_2026)
    config(root, "grpo_nanov3.yaml", NANOV3)
    code, report = _check(config(root, "async_gym.yaml", ASYNC_GYM))
    # The line named is the `raise`'s, under its test (upstream's 225/226).
    insufficient = line_of(POLICY, "if actual_world_size < model_parallel_size") + 1
    indivisible = line_of(POLICY, "dp_size_float = actual_world_size") + 1
    values = ("(cluster.gpus_per_node=8, cluster.num_nodes=2, "
              "policy.generation.colocated.resources.num_nodes=1, "
              "policy.megatron_cfg.pipeline_model_parallel_size=2, "
              "policy.megatron_cfg.context_parallel_size=4, "
              "policy.megatron_cfg.tensor_model_parallel_size=2)")
    assert code == 1
    assert [message for _, message in _refusals(report)] == [
        f"cluster.gpus_per_node: {REFUSES}: it raises ValueError where actual_world_size < "
        f"model_parallel_size {values} at nemo_rl/models/policy/lm_policy.py:{insufficient} "
        '(Policy.__init__): "World size (8) is insufficient for the parallelism '
        "configuration. Required minimum world size: PP(2) * CP(4) * TP(2) = 16. This would "
        "result in DP = 8/16 = 0.500, but DP must be ≥ 1. Please either increase the number "
        'of GPUs/nodes or reduce the parallelism parameters."',
        f"cluster.gpus_per_node: {REFUSES}: it raises ValueError where actual_world_size % "
        f"model_parallel_size != 0 {values} at nemo_rl/models/policy/lm_policy.py:"
        f'{indivisible} (Policy.__init__): "World size (8) must be divisible by PP * CP * TP '
        "(16). The data parallel size (DP = world_size / (PP * CP * TP)) must be a positive "
        "integer. Current DP would be 8/16 = 0.500000, which is not an integer. Please adjust "
        'your cluster size or parallelism parameters."']


def test_the_nanov3_async_gym_recipe_as_pr_3150_fixed_it_is_clean(tmp_path: Path) -> None:
    root = grpo_tree(tmp_path, GRPO_2026)
    config(root, "grpo_nanov3.yaml", NANOV3)
    code, report = _check(config(root, "async_gym.yaml", ASYNC_GYM_FIXED))
    assert (code, report["problems"]) == (0, [])
    # The base recipe on its own 32 nodes was never refused.
    code, report = _check(config(root, "nanov3.yaml", "defaults: grpo_nanov3.yaml\n"))
    assert (code, report["problems"]) == (0, [])


def test_non_colocated_megatron_generation_is_refused_where_the_tree_forbids_it(
        tmp_path: Path) -> None:
    """The recipe PR #3150 fixed, on a tree with the 2025-09 rule."""
    root = grpo_tree(tmp_path, GRPO_2025)
    config(root, "grpo_nanov3.yaml", NANOV3)
    path = config(root, "async_gym.yaml", ASYNC_GYM_FIXED)
    code, report = _check(path)
    rule = line_of(GRPO_2025, 'assert generation_config["backend"] != "megatron"')
    assert code == 1
    assert _refusals(report) == [(
        "policy.generation.backend",
        f"policy.generation.backend: {REFUSES}: assert generation_config['backend'] != "
        "'megatron' fails (policy.generation.backend='megatron', "
        "policy.generation.colocated.enabled=False) at "
        f"nemo_rl/algorithms/grpo.py:{rule} (grpo.setup): \"Non-colocated inference is not "
        'supported for Megatron generation backends. Please use vLLM backend for generation."')]
    # Colocated Megatron generation is not what the rule refuses.
    colocated = config(root, "colocated.yaml", "defaults: grpo_nanov3.yaml\n")
    code, report = _check(colocated)
    assert (code, report["problems"]) == (0, [])


def test_non_colocated_megatron_generation_is_clean_once_the_rule_is_relaxed(
        tmp_path: Path) -> None:
    """Upstream deleted the assertion (2026-08 has none): the same recipe passes."""
    relaxed = GRPO_2025.replace(MEGATRON_NONCOLOCATED_RULE, "\n")
    assert relaxed != GRPO_2025
    root = grpo_tree(tmp_path, relaxed)
    config(root, "grpo_nanov3.yaml", NANOV3)
    code, report = _check(config(root, "async_gym.yaml", ASYNC_GYM_FIXED))
    assert (code, report["problems"]) == (0, [])


def test_vllm_dp_with_the_async_engine_is_refused_where_the_tree_forbids_it(
        tmp_path: Path) -> None:
    """PR #2517's GRPO launch, on a tree with the rule of issue #1101."""
    root = grpo_tree(tmp_path, GRPO_2026)
    path = config(root, "grpo_math_1B_megatron.yaml", GRPO_MEGATRON)
    code, report = _check(path, *PR_2517_LAUNCH)
    rule = line_of(VLLM_GENERATION, 'assert not self.cfg["vllm_cfg"]["async_engine"]')
    assert code == 1
    assert _refusals(report) == [(
        "policy.generation.vllm_cfg.async_engine",
        f"policy.generation.vllm_cfg.async_engine: {REFUSES}: assert not "
        "self.cfg['vllm_cfg']['async_engine'] fails "
        "(policy.generation.vllm_cfg.async_engine=True, "
        "policy.generation.vllm_cfg.expert_parallel_size=8, "
        "policy.generation.vllm_cfg.tensor_parallel_size=4) at "
        f"nemo_rl/models/generation/vllm_generation.py:{rule} (VllmGeneration.__init__): "
        '"vLLM async_engine has some issues when using DP inside vLLM. Please update your '
        "configuration to set `policy.generation.vllm_cfg.async_engine=false`. See "
        'https://github.com/NVIDIA-NeMo/RL/issues/1101 for more details."')]
    # The way out the message names: the sync engine passes the same tree.
    code, report = _check(path, *PR_2517_LAUNCH, "policy.generation.vllm_cfg.async_engine=false")
    assert (code, report["problems"]) == (0, [])


def test_vllm_dp_with_the_async_engine_is_clean_once_the_rule_is_relaxed(
        tmp_path: Path) -> None:
    """PR #2517 deletes the assertion: the same launch passes."""
    relaxed = VLLM_GENERATION.replace(VLLM_DP_ASYNC_RULE, "\n")
    assert relaxed != VLLM_GENERATION
    root = grpo_tree(tmp_path, GRPO_2026, generation=relaxed)
    path = config(root, "grpo_math_1B_megatron.yaml", GRPO_MEGATRON)
    code, report = _check(path, *PR_2517_LAUNCH)
    assert (code, report["problems"]) == (0, [])


# The real trees: the same verdicts where the shared corpus is present (read, never
# imported). A recipe before its fix is written next to the real one, in tmp_path, with its
# `defaults:` pointing into the corpus.

def _corpus(root: Path) -> Path:
    if not (root / "nemo_rl").is_dir():
        pytest.skip(f"corpus absent: {root}")
    return root


def _recipe(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return str(path)


def test_the_2026_08_corpus_refuses_prorlv2_1_moe_and_passes_it_fixed(tmp_path: Path) -> None:
    tree = _corpus(CORPUS_2026)
    moe = tree / "examples" / "configs" / "prorlv2_1_moe.v2.yaml"
    code, report = _check("--nemo-rl", str(tree), str(moe))
    assert code == 1
    assert [(path, message.rsplit(" at ", 1)[1]) for path, message in _refusals(report)] == [
        ("grpo.batch_multiplier", "nemo_rl/algorithms/grpo.py:571 (grpo.setup): "
                                  '"batch_multiplier>1 can only be used if '
                                  'use_dynamic_sampling=True"')]
    fixed = _recipe(tmp_path, "prorlv2_1_moe_fixed.yaml",
                    f"defaults: {moe}\ngrpo:\n  batch_multiplier: 1\n")
    code, report = _check("--nemo-rl", str(tree), fixed)
    assert (code, report["problems"]) == (0, [])


def test_the_2026_08_corpus_refuses_the_async_gym_recipe_before_pr_3150(
        tmp_path: Path) -> None:
    tree = _corpus(CORPUS_2026)
    shipped = tree / "examples/configs/recipes/llm/" \
        "grpo-nanov3-30BA3B-2n8g-megatron_generation-async-gym.yaml"
    code, report = _check("--nemo-rl", str(tree), str(shipped))
    assert (code, report["problems"]) == (0, [])
    # Before PR #3150: the shipped recipe without its Megatron sizes.
    before = shipped.read_text(encoding="utf-8").replace(
        "defaults: ../../../nemo_gym/grpo_nanov3.yaml",
        f"defaults: {tree / 'examples/nemo_gym/grpo_nanov3.yaml'}").replace(
        "  megatron_cfg:\n    pipeline_model_parallel_size: 1\n    context_parallel_size: 2\n",
        "")
    assert "megatron_cfg" not in before
    code, report = _check("--nemo-rl", str(tree), _recipe(tmp_path, "before.yaml", before))
    assert code == 1
    assert [message.rsplit(" at ", 1)[1].split(": ", 1)[0] for _, message in
            _refusals(report)] == ["nemo_rl/models/policy/lm_policy.py:226 (Policy.__init__)",
                                   "nemo_rl/models/policy/lm_policy.py:235 (Policy.__init__)"]
    assert '"World size (8) is insufficient' in _refusals(report)[0][1]


def test_the_2025_09_corpus_refuses_non_colocated_megatron_generation() -> None:
    tree = _corpus(CORPUS_2025)
    recipe = tree / "examples" / "configs" / "grpo_math_1B_megatron.yaml"
    code, report = _check("--nemo-rl", str(tree), str(recipe), "policy.generation.backend=megatron",
                          "policy.generation.colocated.enabled=false", "cluster.num_nodes=2",
                          "policy.generation.colocated.resources.num_nodes=1")
    assert code == 1
    assert [(path, message.rsplit(" at ", 1)[1].split(": ", 1)[0])
            for path, message in _refusals(report)] == [
        ("policy.generation.backend", "nemo_rl/algorithms/grpo.py:242 (grpo.setup)")]


def test_the_2026_08_corpus_refuses_pr_2517_s_launch() -> None:
    tree = _corpus(CORPUS_2026)
    recipe = tree / "examples" / "configs" / "grpo_math_1B_megatron.yaml"
    code, report = _check("--nemo-rl", str(tree), str(recipe), *PR_2517_LAUNCH)
    assert code == 1
    assert [(path, message.rsplit(" at ", 1)[1].split(": ", 1)[0])
            for path, message in _refusals(report)] == [
        ("policy.generation.vllm_cfg.async_engine",
         "nemo_rl/models/generation/vllm/vllm_generation.py:141 (VllmGeneration.__init__)")]
