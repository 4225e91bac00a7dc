"""The quantized policy workers train through a real ModelOpt fake-quantized model."""

from __future__ import annotations

from pathlib import Path

import pytest
from nemo_rl.modelopt.models.policy.workers.automodel_quant_policy_worker import (
    AutomodelQuantPolicyWorker,
)
from nemo_rl.modelopt.models.policy.workers.megatron_quant_policy_worker import (
    MegatronQuantPolicyWorker,
)
from nemo_rl.modelopt.models.policy.workers.quant_policy_base import QuantizedPolicyWorkerBase
from nemo_rl.models.policy.workers.automodel_policy_worker import AutomodelPolicyWorker
from nemo_rl.models.policy.workers.megatron_policy_worker import MegatronPolicyWorker

from nemo_rl_workers.errors import WorkerConfigError
from tests.workers.helpers import BATCH, policy_config

QUANT_WORKERS: dict[str, type[QuantizedPolicyWorkerBase]] = {
    "megatron": MegatronQuantPolicyWorker,
    "automodel": AutomodelQuantPolicyWorker,
}

# A user-authored recipe in ModelOpt's PTQ layout: INT8 on the MLP projections only.
INT8_MLP_RECIPE = """\
metadata:
  recipe_type: ptq
  description: INT8 MLP only.
quantize:
  quant_cfg:
    - quantizer_name: '*'
      enable: false
    - quantizer_name: '*mlp*weight_quantizer'
      cfg: {num_bits: 8, axis: 0}
    - quantizer_name: '*mlp*input_quantizer'
      cfg: {num_bits: 8, axis: null}
"""

# The bare {quant_cfg, algorithm} layout, adding FP8 K/V attention (KV-cache) quantizers.
INT8_WITH_FP8_KV_RECIPE = """\
algorithm: max
quant_cfg:
  - quantizer_name: '*'
    enable: false
  - quantizer_name: '*weight_quantizer'
    cfg: {num_bits: 8, axis: 0}
  - quantizer_name: '*input_quantizer'
    cfg: {num_bits: 8, axis: null}
  - quantizer_name: '*[kv]_bmm_quantizer'
    cfg: {num_bits: [4, 3], axis: null}
  - quantizer_name: '*lm_head*'
    enable: false
  - quantizer_name: '*embed_tokens*'
    enable: false
"""


@pytest.mark.parametrize("cfg_name", ["INT8_DEFAULT_CFG", "FP8_DEFAULT_CFG"])
@pytest.mark.parametrize("backend", sorted(QUANT_WORKERS))
def test_quantized_worker_calibrates_and_trains(backend: str, cfg_name: str) -> None:
    worker = QUANT_WORKERS[backend](
        policy_config(backend, quant_cfg=cfg_name), rank=0, world_size=1
    )
    stats = worker.get_quantizer_stats()
    # 2 layers x 7 linears, each with an input and a weight quantizer, are enabled;
    # attention bmm quantizers and the lm_head stay disabled in these configs.
    assert stats["enabled"] == 28
    assert stats["with_amax"] == 28
    assert stats["positive_amax"] == 28
    assert stats["total"] > stats["enabled"]
    assert stats["kv_amax"] == 0
    first = worker.train(BATCH)
    second = worker.train(BATCH)
    assert second["step"] == 2
    assert second["loss"] < first["loss"]
    assert worker.get_quantizer_stats()["enabled"] == 28


def test_quantization_changes_what_the_model_computes() -> None:
    config = policy_config("megatron", quant_cfg="INT8_DEFAULT_CFG")
    plain = MegatronPolicyWorker(config, rank=0, world_size=1).get_logprobs(BATCH)
    quantized = MegatronQuantPolicyWorker(config, rank=0, world_size=1).get_logprobs(BATCH)
    flat_plain = [v for row in plain["logprobs"] for v in row]
    flat_quant = [v for row in quantized["logprobs"] for v in row]
    assert flat_quant != flat_plain
    # ...but only by quantization noise: same seed, same weights.
    assert max(abs(a - b) for a, b in zip(flat_plain, flat_quant, strict=True)) < 0.1


def test_quantized_checkpoint_round_trip(tmp_path: Path) -> None:
    config = policy_config("automodel", quant_cfg="INT8_DEFAULT_CFG")
    trained = AutomodelQuantPolicyWorker(config, rank=0, world_size=1)
    trained.train(BATCH)
    trained.save_checkpoint(str(tmp_path))
    restored = AutomodelQuantPolicyWorker(config, rank=0, world_size=1)
    restored.load_checkpoint(str(tmp_path))
    assert restored.get_logprobs(BATCH) == trained.get_logprobs(BATCH)
    assert restored.get_quantizer_stats() == trained.get_quantizer_stats()


def test_yaml_recipe_is_loaded_and_applied(tmp_path: Path) -> None:
    recipe = tmp_path / "int8_mlp.yaml"
    recipe.write_text(INT8_MLP_RECIPE)
    config = policy_config("megatron", quant_cfg=str(recipe))
    assert MegatronQuantPolicyWorker.preflight(config, "policy") == []
    stats = MegatronQuantPolicyWorker(config, rank=0, world_size=1).get_quantizer_stats()
    # gate/up/down projections of 2 layers, input and weight quantizers each.
    assert stats["enabled"] == 12
    assert stats["with_amax"] == 12


def test_kv_quantizers_are_calibrated_and_counted(tmp_path: Path) -> None:
    recipe = tmp_path / "int8_fp8kv.yml"
    recipe.write_text(INT8_WITH_FP8_KV_RECIPE)
    worker = AutomodelQuantPolicyWorker(
        policy_config("automodel", quant_cfg=str(recipe)), rank=0, world_size=1
    )
    stats = worker.get_quantizer_stats()
    # k and v bmm quantizers of 2 layers, on top of the 28 linear quantizers.
    assert stats["kv_amax"] == 4
    assert stats["enabled"] == stats["with_amax"] == stats["positive_amax"] == 32
    assert worker.train(BATCH)["step"] == 1


def test_preflight_rejects_an_unknown_name_with_examples() -> None:
    [problem] = AutomodelQuantPolicyWorker.preflight({"quant_cfg": "INT9_CFG"}, "teachers[0]")
    assert problem.path == "teachers[0].quant_cfg"
    assert problem.given == "INT9_CFG"
    assert "INT8_DEFAULT_CFG" in problem.expected and "FP8_DEFAULT_CFG" in problem.expected
    assert "not a built-in ModelOpt config name" in problem.message


def test_preflight_rejects_a_missing_recipe_file(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.yaml")
    [problem] = MegatronQuantPolicyWorker.preflight({"quant_cfg": missing}, "policy")
    assert (problem.path, problem.given) == ("policy.quant_cfg", missing)
    assert "path to a YAML quantization recipe" in problem.expected
    assert f"{missing} does not exist" in problem.message


@pytest.mark.parametrize(
    ("text", "reason"),
    [("quantize: [unclosed\n", "cannot be parsed"), ("metadata: {}\n", "has no quant_cfg entry")],
)
def test_preflight_rejects_an_unusable_recipe(tmp_path: Path, text: str, reason: str) -> None:
    recipe = tmp_path / "bad.yaml"
    recipe.write_text(text)
    [problem] = MegatronQuantPolicyWorker.preflight({"quant_cfg": str(recipe)}, "policy")
    assert problem.given == str(recipe)
    assert reason in problem.message


def test_preflight_requires_quant_cfg() -> None:
    [problem] = MegatronQuantPolicyWorker.preflight({"quant_cfg": None}, "policy")
    assert (problem.path, problem.given) == ("policy.quant_cfg", "null")
    assert "unset" in problem.message


def test_nvfp4_without_cuda_is_a_clear_error_in_the_worker() -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present: NVFP4 is legal here")
    config = policy_config("megatron", quant_cfg="NVFP4_DEFAULT_CFG")
    # Verification may run on a CPU-only driver for GPU workers: it accepts the name.
    assert MegatronQuantPolicyWorker.preflight(config, "policy") == []
    with pytest.raises(WorkerConfigError) as caught:
        MegatronQuantPolicyWorker(config, rank=0, world_size=1)
    [problem] = caught.value.problems
    assert (problem.path, problem.given, problem.rule) == (
        "policy.quant_cfg", "NVFP4_DEFAULT_CFG", "quant_device"
    )
    assert "only on CUDA" in problem.message


def test_constructor_rejects_an_unknown_name_naming_its_path() -> None:
    with pytest.raises(WorkerConfigError) as caught:
        AutomodelQuantPolicyWorker(
            policy_config("automodel", quant_cfg="NOT_A_CFG"), rank=0, world_size=1
        )
    assert caught.value.path == "policy.quant_cfg"
    assert caught.value.given == "NOT_A_CFG"


def test_quantized_workers_extend_their_backend_worker() -> None:
    assert issubclass(MegatronQuantPolicyWorker, MegatronPolicyWorker)
    assert issubclass(AutomodelQuantPolicyWorker, AutomodelPolicyWorker)
