"""R8: a frozen teacher derived from the student policy, never touching the student."""

from __future__ import annotations

import copy
import warnings
from typing import Any

import pytest

from nemo_rl_workers.model.teacher import derive_teacher_config

QUANT_POLICY = (
    "nemo_rl.modelopt.models.policy.workers.megatron_quant_policy_worker.MegatronQuantPolicyWorker"
)
QUANT_VLLM = "nemo_rl.modelopt.models.generation.vllm_quant_worker.VllmQuantGenerationWorker"


def quantized_student() -> dict[str, Any]:
    return {
        "model_name": "Qwen/Qwen3-1.7B",
        "quant_cfg": "FP8_DEFAULT_CFG",
        "real_quant": True,
        "real_quant_ignore": ["lm_head"],
        "quant_calib_size": 128,
        "worker_extension_cls_fqn": QUANT_POLICY,
        "megatron_cfg": {"enabled": True, "tensor_model_parallel_size": 2},
        "generation": {
            "backend": "vllm",
            "quant_cfg": "NVFP4_DEFAULT_CFG",
            "real_quant": True,
            "quant_sequence_length": 512,
            "worker_extension_cls_fqn": QUANT_VLLM,
            "vllm_cfg": {"async_engine": False},
        },
    }


def test_teacher_drops_all_quantization_and_the_worker_override() -> None:
    student = quantized_student()
    snapshot = copy.deepcopy(student)
    with pytest.warns(UserWarning) as record:
        teacher = derive_teacher_config(student, teacher_index=1)
    assert teacher == {
        "model_name": "Qwen/Qwen3-1.7B",
        "quant_cfg": None,
        "megatron_cfg": {"enabled": True, "tensor_model_parallel_size": 2},
        "generation": {
            "backend": "vllm",
            "quant_cfg": None,
            "vllm_cfg": {"async_engine": False},
        },
    }
    assert [str(w.message) for w in record] == [
        "teachers[1].quant_cfg cleared to null for the frozen teacher (the student policy has "
        "FP8_DEFAULT_CFG): a teacher runs unquantized on its default worker.",
        "teachers[1].generation.quant_cfg cleared to null for the frozen teacher (the student "
        "policy has NVFP4_DEFAULT_CFG): a teacher runs unquantized on its default worker.",
    ]
    assert record[0].filename == __file__  # attributed to the caller
    assert student == snapshot


def test_teacher_is_a_deep_copy() -> None:
    student = quantized_student()
    snapshot = copy.deepcopy(student)
    with pytest.warns(UserWarning):
        teacher = derive_teacher_config(student, teacher_index=0)
    teacher["megatron_cfg"]["enabled"] = False
    teacher["generation"]["vllm_cfg"]["async_engine"] = True
    assert student == snapshot


@pytest.mark.parametrize("unset", [None, ""])
def test_no_warning_when_quant_cfg_was_not_set(unset: str | None) -> None:
    student = {"model_name": "m", "quant_cfg": unset, "generation": {"backend": "vllm"}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        teacher = derive_teacher_config(student, teacher_index=0)
    assert teacher == {"model_name": "m", "quant_cfg": None, "generation": {"backend": "vllm"}}


def test_absent_keys_stay_absent_and_odd_generation_is_kept() -> None:
    student: dict[str, Any] = {"model_name": "m", "generation": None}
    assert derive_teacher_config(student, teacher_index=3) == {
        "model_name": "m",
        "generation": None,
    }


def test_negative_index_is_rejected() -> None:
    with pytest.raises(ValueError, match="teacher_index must be 0 or more, but is -1"):
        derive_teacher_config({"model_name": "m"}, teacher_index=-1)


def test_teacher_never_loads_the_students_weights() -> None:
    # Upstream parity: the teacher drops `pretrained_checkpoint` (and every key that loads
    # the student's weights), at the section level and in its backend blocks.
    student: dict[str, Any] = {
        "model_name": "Qwen/Qwen3-8B",
        "pretrained_checkpoint": {"path": "/ckpt/student/iter_100", "format": "megatron_bridge"},
        "checkpoint_path": None,
        "megatron_cfg": {"enabled": True, "pretrained_checkpoint": "/ckpt/student/mlm"},
        "automodel_cfg": {"enabled": False},
    }
    snapshot = copy.deepcopy(student)
    with pytest.warns(UserWarning) as record:
        teacher = derive_teacher_config(student, teacher_index=0)
    assert teacher == {
        "model_name": "Qwen/Qwen3-8B",
        "megatron_cfg": {"enabled": True},
        "automodel_cfg": {"enabled": False},
    }
    assert [str(w.message) for w in record] == [
        "teachers[0].pretrained_checkpoint dropped for the frozen teacher (the student policy "
        "has {'path': '/ckpt/student/iter_100', 'format': 'megatron_bridge'}): it would load "
        "the student's weights; a teacher loads its own model.",
        "teachers[0].megatron_cfg.pretrained_checkpoint dropped for the frozen teacher (the "
        "student policy has /ckpt/student/mlm): it would load the student's weights; a "
        "teacher loads its own model.",
    ]
    assert {w.filename for w in record} == {__file__}
    assert student == snapshot
