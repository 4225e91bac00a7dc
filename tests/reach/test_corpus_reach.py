"""#34 item 3 on upstream's own trees: the default `check` of a shipped recipe claims no
finding "reached by this config" that is not. Before, `grpo_math_1B.yaml` (2026-08) got
ten such claims, each false by hand (`FALSE_ON_GRPO_MATH_1B`: why it does not run for
that recipe); now each is a skipped line saying it is not known to be reached, and the
claims left over every shipped config of both corpora are those verified by hand
(`VERIFIED_REACHED`: none, since no chain of upstream's calls resolves from an entry:
its loops take the policy as an interface, its synchronizers take it as `Any`)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli_run import run_cli
from tests.corpus import corpus_tree

CORPORA = ("nemo-rl", "nemo-rl-2025-09")
RECIPE = "examples/configs/grpo_math_1B.yaml"

# The claims `check` made on grpo_math_1B before #34, by the driver call they were
# about, and why each is false for that recipe (read in the 2026-08 source by hand;
# the recipe has policy.generation.backend=vllm, colocated generation,
# refit_transport=null, vllm_cfg.kv_cache_dtype=auto, no nemo-gym).
FALSE_ON_GRPO_MATH_1B: dict[str, str] = {
    "nemo_rl/models/policy/lm_policy.py:434":
        "init_collective_mcore_generation: called only by MegatronWeightSynchronizer (which "
        "create_weight_synchronizer builds for generation_backend == 'megatron') and by "
        "MegatronGeneration: Megatron generation only",
    "nemo_rl/models/policy/lm_policy.py:445":
        "preinit_nvshmem_collective: MegatronWeightSynchronizer only (Megatron generation)",
    "nemo_rl/models/policy/lm_policy.py:451":
        "swap_weights_via_reshard: MegatronWeightSynchronizer and MegatronGeneration only",
    "nemo_rl/models/policy/lm_policy.py:1039":
        "calibrate_qkv_fp8_scales: grpo_train calls it only with an fp8 KV cache; the recipe "
        "has kv_cache_dtype: auto (and setup asserts DTensor out with fp8)",
    "nemo_rl/models/policy/lm_policy.py:1163":
        "prepare_nccl_reshard_refit_info: NcclReshardWeightSynchronizer only, built for "
        "non-colocated NCCL-reshard refit; the recipe's generation is colocated",
    "nemo_rl/models/policy/lm_policy.py:1175":
        "nccl_reshard_refit: NcclReshardWeightSynchronizer only (as above)",
    "nemo_rl/weight_sync/vllm_remote_sparse_weight_synchronizer.py:148":
        "stream_remote_sparse_weights: the remote-sparse synchronizer, built only where "
        "policy.generation.refit_transport names a sparse transport; the recipe has null",
    "nemo_rl/weight_sync/vllm_remote_sparse_weight_synchronizer.py:252":
        "finish_remote_sparse_delta_sync: the remote-sparse synchronizer (as above)",
    "nemo_rl/weight_sync/vllm_remote_sparse_weight_synchronizer.py:326":
        "init_remote_sparse_delta_baseline: the remote-sparse synchronizer (as above)",
    "nemo_rl/models/generation/vllm/vllm_generation.py:518":
        "load_and_start: setup calls it only on the deferred vLLM load of the nemo-gym path",
}

# Claims of "reached by this config" verified true by hand, as (corpus, config, driver
# call) -> why it is true. None survives: see the module docstring.
VERIFIED_REACHED: dict[tuple[str, str, str], str] = {}


def _corpus(name: str) -> Path:
    root = corpus_tree(name).resolve()
    return root


def _check(root: Path, recipe: str) -> dict[str, Any]:
    cwd = os.getcwd()
    try:
        os.chdir(root)
        out = run_cli("check", "--json", "--nemo-rl", ".", recipe).out
    finally:
        os.chdir(cwd)
    report: dict[str, Any] = json.loads(out)
    return report


def _claims(report: dict[str, Any]) -> Iterator[str]:
    """The driver call (file:line) of each warning claiming a finding reached."""
    for line in report["warnings"]:
        if "reached by this config" in line:
            yield line.split(": ")[2]


def test_grpo_math_1b_gets_no_false_reached_claim() -> None:
    report = _check(_corpus("nemo-rl"), RECIPE)
    assert [c for c in _claims(report) if c in FALSE_ON_GRPO_MATH_1B] == []
    skipped = {line.split(": ")[2]: line for line in report["skipped"]
               if line.startswith("audit: ")}
    for call in FALSE_ON_GRPO_MATH_1B:
        assert "not known to be reached" in skipped[call] or \
            "not reached by this config" in skipped[call], skipped.get(call)


def test_calls_on_an_interface_are_not_followed_and_the_line_says_so() -> None:
    report = _check(_corpus("nemo-rl"), RECIPE)
    (line,) = [s for s in report["skipped"] if "nemo_rl/models/policy/lm_policy.py:1039" in s]
    assert line.startswith(
        "audit: policy: nemo_rl/models/policy/lm_policy.py:1039: warning[stub-body]: not known "
        "to be reached: no chain of calls whose receivers resolve leads to it from an entry "
        "of the tree (nemo_rl/algorithms/grpo.py:2906 calls policy.calibrate_qkv_fp8_scales "
        "on policy, not known to be a Policy (annotated ColocatablePolicyInterface)")


@pytest.mark.parametrize("name", CORPORA)
def test_every_reached_claim_on_a_shipped_config_is_verified(name: str) -> None:
    root = _corpus(name)
    recipes = sorted(str(p.relative_to(root)) for p in (root / "examples" / "configs").rglob(
        "*.yaml"))
    assert recipes
    claims = {(name, recipe, call) for recipe in recipes
              for call in _claims(_check(root, recipe))}
    assert claims <= set(VERIFIED_REACHED), sorted(claims - set(VERIFIED_REACHED))[:5]
