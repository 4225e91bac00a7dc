"""Each preflight rule, on a config that breaks only that rule, and the rules together."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nemo_rl_workers.errors import WorkerConfigError
from nemo_rl_workers.model.preflight import (
    RULES,
    TP_ACCURACY_ESCAPE_ENV,
    check_preflight,
    preflight_problems,
    vllm_supports_fp32_lm_head,
)
from tests.preflight.configs import AUTOMODEL, NEMOTRON_H, WORLD_SIZE, base_config, edited

NO_ENV: dict[str, str] = {}


@dataclass(frozen=True)
class Broken:
    """A config that breaks exactly one rule, and the one problem it must produce."""

    rule: str
    edits: tuple[tuple[str, object], ...]
    path: str
    expected: str
    given: str
    world_size: int = WORLD_SIZE


MEGATRON_TP_PATH = "policy.megatron_cfg.tensor_model_parallel_size"
CASES: dict[str, Broken] = {
    "megatron-fp32-string": Broken(
        "preflight.fp32_lm_head.type", (("policy.megatron_cfg.fp32_lm_head", "false"),),
        "policy.megatron_cfg.fp32_lm_head", "true, false or null", "'false'"),
    "vllm-fp32-string": Broken(
        "preflight.fp32_lm_head.type", (("policy.generation.vllm_cfg.fp32_lm_head", "true"),),
        "policy.generation.vllm_cfg.fp32_lm_head", "true, false or null", "'true'"),
    "fp32-with-fused-logprobs": Broken(
        "preflight.fp32_lm_head.fused_logprobs",
        (("policy.megatron_cfg.fp32_lm_head", True),
         ("policy.megatron_cfg.use_fused_linear_logprobs", True),
         ("policy.generation.vllm_cfg.fp32_lm_head", True)),
        "policy.megatron_cfg.use_fused_linear_logprobs",
        "false while policy.megatron_cfg.fp32_lm_head is true", "true"),
    "fp32-with-fused-logprobs-no-generation": Broken(
        "preflight.fp32_lm_head.fused_logprobs",
        (("policy.megatron_cfg.fp32_lm_head", True),
         ("policy.megatron_cfg.use_fused_linear_logprobs", True),
         ("policy.generation", None)),
        "policy.megatron_cfg.use_fused_linear_logprobs",
        "false while policy.megatron_cfg.fp32_lm_head is true", "true"),
    "vllm-fp32-with-automodel": Broken(
        "preflight.fp32_lm_head.automodel",
        (*AUTOMODEL, ("policy.generation.vllm_cfg.fp32_lm_head", True)),
        "policy.generation.vllm_cfg.fp32_lm_head", "false or null with the Automodel backend",
        "true"),
    "fp32-only-in-training": Broken(
        "preflight.fp32_lm_head.mismatch", (("policy.megatron_cfg.fp32_lm_head", True),),
        "policy.generation.vllm_cfg.fp32_lm_head",
        "true (the same as policy.megatron_cfg.fp32_lm_head)", "false"),
    "fp32-only-in-vllm": Broken(
        "preflight.fp32_lm_head.mismatch",
        (("policy.megatron_cfg.fp32_lm_head", None),
         ("policy.generation.vllm_cfg.fp32_lm_head", True)),
        "policy.generation.vllm_cfg.fp32_lm_head",
        "false (the same as policy.megatron_cfg.fp32_lm_head)", "true"),
    "reserved-vllm-env": Broken(
        "preflight.fp32_lm_head.reserved_env",
        (("policy.generation.vllm_cfg.env_vars", {"NRL_VLLM_FP32_LM_HEAD": "1"}),),
        "policy.generation.vllm_cfg.env_vars.NRL_VLLM_FP32_LM_HEAD", "absent", "1"),
    "tp-zero": Broken(
        "preflight.parallelism.size", ((MEGATRON_TP_PATH, 0),),
        MEGATRON_TP_PATH, "a positive integer", "0"),
    "tp-string": Broken(
        "preflight.parallelism.size", ((MEGATRON_TP_PATH, "2"),),
        MEGATRON_TP_PATH, "a positive integer", "'2'"),
    "automodel-cp-null": Broken(
        "preflight.parallelism.size",
        (*AUTOMODEL, ("policy.automodel_cfg.context_parallel_size", None)),
        "policy.automodel_cfg.context_parallel_size", "a positive integer", "null"),
    "too-few-gpus": Broken(
        "preflight.parallelism.fits",
        ((MEGATRON_TP_PATH, 4), ("policy.megatron_cfg.pipeline_model_parallel_size", 2),
         ("policy.megatron_cfg.context_parallel_size", 2)),
        "policy.megatron_cfg", "a model-parallel product of at most the world size 8",
        "TP(4) x PP(2) x CP(2) = 16"),
    "automodel-too-few-gpus": Broken(
        "preflight.parallelism.fits",
        (*AUTOMODEL, ("policy.automodel_cfg.tensor_parallel_size", 2),
         ("policy.automodel_cfg.context_parallel_size", 2)),
        "policy.automodel_cfg", "a model-parallel product of at most the world size 2",
        "TP(2) x CP(2) = 4", world_size=2),
    "product-does-not-divide": Broken(
        "preflight.parallelism.divides", (("policy.megatron_cfg.context_parallel_size", 3),),
        "policy.megatron_cfg", "a model-parallel product that divides the world size 8",
        "TP(2) x PP(1) x CP(3) = 6"),
    "tp4-unequal-batches": Broken(
        "preflight.parallelism.tp_accuracy",
        ((MEGATRON_TP_PATH, 4), ("policy.logprob_batch_size", 4)),
        "policy.logprob_batch_size", "2 (equal to policy.train_micro_batch_size)", "4"),
    "batch-size-string": Broken(
        "preflight.schema", (("policy.train_micro_batch_size", "2"),),
        "policy.train_micro_batch_size", "a positive integer or null", "'2'"),
    "draft-not-a-mapping": Broken(
        "preflight.schema", (("policy.draft", "yes"),),
        "policy.draft", "a mapping of keys to values", "'yes'"),
    "packing-flag-string": Broken(
        "preflight.schema", (("policy.sequence_packing.enabled", "false"),),
        "policy.sequence_packing.enabled", "true, false or null", "'false'"),
    "call-timeout-string": Broken(
        "preflight.schema", (("policy.call_timeout_s", "30"),),
        "policy.call_timeout_s", "a positive number of seconds, or null for no limit", "'30'"),
    "call-timeout-zero": Broken(
        "preflight.schema", (("policy.call_timeout_s", 0),),
        "policy.call_timeout_s", "a positive number of seconds, or null for no limit", "0"),
    "generation-call-timeout-infinite": Broken(
        "preflight.schema", (("policy.generation.call_timeout_s", float("inf")),),
        "policy.generation.call_timeout_s", "a positive number of seconds, or null for no limit",
        "inf"),
    "call-timeout-bool": Broken(
        "preflight.schema", (("policy.call_timeout_s", True),),
        "policy.call_timeout_s", "a positive number of seconds, or null for no limit", "true"),
    "draft-with-automodel": Broken(
        "preflight.draft.backend", (*AUTOMODEL, ("policy.draft.enabled", True)),
        "policy.draft.enabled", "false unless the Megatron backend is enabled", "true"),
    "draft-with-packing": Broken(
        "preflight.draft.sequence_packing",
        (("policy.draft.enabled", True), ("policy.sequence_packing.enabled", True)),
        "policy.sequence_packing.enabled", "false while policy.draft.enabled is true", "true"),
    "dynamic-batching-with-packing": Broken(
        "preflight.dynamic_batching.sequence_packing",
        (("policy.dynamic_batching.enabled", True), ("policy.sequence_packing.enabled", True)),
        "policy.dynamic_batching.enabled", "false while policy.sequence_packing.enabled is true",
        "true"),
    "dynamic-batching-with-pipeline": Broken(
        "preflight.dynamic_batching.pipeline",
        (("policy.dynamic_batching.enabled", True),
         ("policy.megatron_cfg.pipeline_model_parallel_size", 2)),
        "policy.megatron_cfg.pipeline_model_parallel_size", "1 while dynamic batching is enabled",
        "2"),
}
WARNING_ONLY_RULES = {"preflight.fp32_lm_head.model"}


def test_base_config_passes_every_rule() -> None:
    report = preflight_problems(base_config(), world_size=WORLD_SIZE, environ=NO_ENV)
    assert report.problems == []
    assert report.warnings == []
    assert report.skipped == []


@pytest.mark.parametrize("case", CASES.values(), ids=list(CASES))
def test_config_breaking_one_rule_gets_exactly_that_problem(case: Broken) -> None:
    report = preflight_problems(edited(*case.edits), world_size=case.world_size, environ=NO_ENV)
    assert [(p.rule, p.path, p.expected, p.given) for p in report.problems] == [
        (case.rule, case.path, case.expected, case.given)
    ]
    message = report.problems[0].message
    assert "\n" not in message and message.endswith(".")
    assert case.path in message or case.path.rsplit(".", 1)[0] in message
    assert report.warnings == []


def test_every_blocking_rule_has_a_case() -> None:
    assert {case.rule for case in CASES.values()} == {r.name for r in RULES} - WARNING_ONLY_RULES


def test_rule_table_names_are_unique_and_described_on_one_line() -> None:
    names = [rule.name for rule in RULES]
    assert len(set(names)) == len(names)
    assert all(name.startswith("preflight.") for name in names)
    assert all(rule.description and "\n" not in rule.description for rule in RULES)
    assert {r.name for r in RULES if r.needs_world_size} == {
        "preflight.parallelism.fits", "preflight.parallelism.divides"}


def test_string_false_is_never_truthy() -> None:
    # With "false" read as truthy, fp32 + fused and the vLLM mismatch would fire too.
    config = edited(("policy.megatron_cfg.fp32_lm_head", "false"),
                    ("policy.megatron_cfg.use_fused_linear_logprobs", True))
    rules = [p.rule for p in preflight_problems(config, world_size=8, environ=NO_ENV).problems]
    assert rules == ["preflight.fp32_lm_head.type"]


def test_four_broken_rules_give_four_problems_in_one_call() -> None:
    config = edited(
        ("policy.megatron_cfg.fp32_lm_head", True),
        ("policy.megatron_cfg.use_fused_linear_logprobs", True),
        ("policy.generation.vllm_cfg.fp32_lm_head", True),
        (MEGATRON_TP_PATH, 4),
        ("policy.logprob_batch_size", 1),
        ("policy.draft.enabled", True),
        ("policy.sequence_packing.enabled", True),
    )
    report = preflight_problems(config, world_size=6, environ=NO_ENV)
    assert sorted(p.rule for p in report.problems) == [
        "preflight.draft.sequence_packing",
        "preflight.fp32_lm_head.fused_logprobs",
        "preflight.parallelism.divides",
        "preflight.parallelism.tp_accuracy",
    ]
    with pytest.raises(WorkerConfigError) as raised:
        check_preflight(config, world_size=6, environ=NO_ENV)
    assert raised.value.problems == tuple(report.problems)
    assert len(str(raised.value).splitlines()) == 4


def test_without_world_size_the_cluster_rules_are_skipped_and_listed() -> None:
    config = edited((MEGATRON_TP_PATH, 4), ("policy.megatron_cfg.context_parallel_size", 4),
                    ("policy.logprob_batch_size", 1))
    report = preflight_problems(config, world_size=None, environ=NO_ENV)
    assert report.skipped == [
        "preflight.parallelism.fits: no world size given",
        "preflight.parallelism.divides: no world size given",
    ]
    # The TP>=4 batch check does not depend on the cluster, so it still runs.
    assert [p.rule for p in report.problems] == ["preflight.parallelism.tp_accuracy"]


def test_a_too_large_product_is_reported_once_not_also_as_not_dividing() -> None:
    config = edited(("policy.megatron_cfg.context_parallel_size", 3))
    report = preflight_problems(config, world_size=4, environ=NO_ENV)
    assert [p.rule for p in report.problems] == ["preflight.parallelism.fits"]
    assert "no data-parallel size is possible" in report.problems[0].message


def test_not_dividing_states_the_implied_data_parallel_size() -> None:
    config = edited(("policy.megatron_cfg.context_parallel_size", 3))
    (problem,) = preflight_problems(config, world_size=8, environ=NO_ENV).problems
    assert "data-parallel size of 8/6 = 1.333" in problem.message


def test_teachers_are_checked_at_their_own_paths() -> None:
    config = base_config()
    teacher = copy.deepcopy(config["policy"])
    teacher["megatron_cfg"]["context_parallel_size"] = 3
    config["teachers"] = [copy.deepcopy(config["policy"]), teacher]
    report = preflight_problems(config, world_size=WORLD_SIZE, environ=NO_ENV)
    assert [(p.rule, p.path) for p in report.problems] == [
        ("preflight.parallelism.divides", "teachers[1].megatron_cfg")]


# ------------------------------------------------------------ escape hatches


TP4_UNEQUAL = ((MEGATRON_TP_PATH, 4), ("policy.logprob_batch_size", 4))


def test_tp_accuracy_escape_variable_from_explicit_environ() -> None:
    config = edited(*TP4_UNEQUAL)
    report = preflight_problems(config, world_size=8, environ={TP_ACCURACY_ESCAPE_ENV: "1"})
    assert report.problems == []


def test_tp_accuracy_escape_variable_defaults_to_os_environ(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = edited(*TP4_UNEQUAL)
    monkeypatch.delenv(TP_ACCURACY_ESCAPE_ENV, raising=False)
    assert len(preflight_problems(config, world_size=8).problems) == 1
    monkeypatch.setenv(TP_ACCURACY_ESCAPE_ENV, "1")
    assert preflight_problems(config, world_size=8).problems == []


def test_tp_accuracy_empty_escape_variable_does_not_count() -> None:
    config = edited(*TP4_UNEQUAL)
    report = preflight_problems(config, world_size=8, environ={TP_ACCURACY_ESCAPE_ENV: ""})
    assert len(report.problems) == 1


def test_tp_accuracy_force_on_policy_ratio_is_a_way_out() -> None:
    config = edited(*TP4_UNEQUAL, ("loss_fn.force_on_policy_ratio", True))
    assert preflight_problems(config, world_size=8, environ=NO_ENV).problems == []


def test_tp_accuracy_error_lists_every_way_out() -> None:
    (problem,) = preflight_problems(edited(*TP4_UNEQUAL), world_size=8, environ=NO_ENV).problems
    for way_out in (MEGATRON_TP_PATH, "to 1 or 2", "set them equal",
                    "loss_fn.force_on_policy_ratio: true", f"{TP_ACCURACY_ESCAPE_ENV}=1"):
        assert way_out in problem.message


def test_tp_accuracy_needs_a_logprob_batch_size_like_upstream() -> None:
    config = edited((MEGATRON_TP_PATH, 4))
    del config["policy"]["logprob_batch_size"]
    assert preflight_problems(config, world_size=8, environ=NO_ENV).problems == []


def test_tp_accuracy_applies_to_automodel_tensor_parallel_size() -> None:
    config = edited(*AUTOMODEL, ("policy.automodel_cfg.tensor_parallel_size", 8),
                    ("policy.logprob_batch_size", 1))
    report = preflight_problems(config, world_size=8, environ=NO_ENV)
    assert [(p.rule, p.given) for p in report.problems] == [
        ("preflight.parallelism.tp_accuracy", "1")]
    assert "policy.automodel_cfg.tensor_parallel_size is 8" in report.problems[0].message


# -------------------------------------------------------------------- warnings


def test_vllm_fp32_on_an_unknown_model_is_a_warning_not_a_problem() -> None:
    config = edited(("policy.model_name", "Qwen/Qwen3-1.7B"),
                    ("policy.generation.model_name", "Qwen/Qwen3-1.7B"),
                    ("policy.megatron_cfg.fp32_lm_head", True),
                    ("policy.generation.vllm_cfg.fp32_lm_head", True))
    report = preflight_problems(config, world_size=8, environ=NO_ENV)
    assert report.problems == []
    (text,) = report.warnings
    assert "policy.generation.vllm_cfg.fp32_lm_head" in text and "'Qwen/Qwen3-1.7B'" in text
    with pytest.warns(UserWarning, match="not known to be one"):
        check_preflight(config, world_size=8, environ=NO_ENV)


def test_vllm_fp32_on_nemotron_h_is_silent() -> None:
    config = edited(("policy.megatron_cfg.fp32_lm_head", True),
                    ("policy.generation.vllm_cfg.fp32_lm_head", True))
    report = preflight_problems(config, world_size=8, environ=NO_ENV)
    assert (report.problems, report.warnings) == ([], [])


def test_generation_model_falls_back_to_the_policy_model_name() -> None:
    config = edited(("policy.model_name", "meta-llama/Llama-3.1-8B"),
                    ("policy.megatron_cfg.fp32_lm_head", True),
                    ("policy.generation.vllm_cfg.fp32_lm_head", True))
    del config["policy"]["generation"]["model_name"]
    assert len(preflight_problems(config, world_size=8, environ=NO_ENV).warnings) == 1


@pytest.mark.parametrize(("name", "known"), [
    (NEMOTRON_H, True),
    ("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", True),
    ("/ckpts/nemotron-h-8b-base", True),
    ("Qwen/Qwen3-1.7B", False),
    ("nvidia/Llama-3.1-Nemotron-Nano-8B-v1", False),
])
def test_known_fp32_vllm_models(name: str, known: bool) -> None:
    assert vllm_supports_fp32_lm_head(name) is known


def test_generation_rules_apply_only_to_vllm_with_a_vllm_cfg() -> None:
    config = edited(("policy.megatron_cfg.fp32_lm_head", True),
                    ("policy.generation.backend", "megatron"),
                    ("policy.generation.vllm_cfg.fp32_lm_head", False))
    assert preflight_problems(config, world_size=8, environ=NO_ENV).problems == []
    config = edited(("policy.megatron_cfg.fp32_lm_head", True),
                    ("policy.generation.vllm_cfg", None))
    assert preflight_problems(config, world_size=8, environ=NO_ENV).problems == []


# ----------------------------------------------------- robustness and scope


def test_backend_problems_are_left_to_the_outdated_check() -> None:
    broken_backend_rules = (
        ("policy.megatron_cfg.fp32_lm_head", True),
        ("policy.megatron_cfg.use_fused_linear_logprobs", True),
        (MEGATRON_TP_PATH, 0),
        ("policy.megatron_cfg.context_parallel_size", 3),
    )
    for backend_edits in ((("policy.automodel_cfg.enabled", True),),  # both enabled
                          (("policy.megatron_cfg.enabled", False),),  # neither
                          (("policy.megatron_cfg.enabled", "yes"),)):  # mistyped flag
        config = edited(*broken_backend_rules, *backend_edits)
        report = preflight_problems(config, world_size=8, environ=NO_ENV)
        assert (report.problems, report.warnings, report.skipped) == ([], [], [])


def test_backend_independent_rules_still_run_when_the_backend_is_unknown() -> None:
    config = edited(("policy.automodel_cfg.enabled", True), ("policy.draft.enabled", True),
                    ("policy.sequence_packing.enabled", True),
                    ("policy.generation.vllm_cfg.fp32_lm_head", "no"))
    report = preflight_problems(config, world_size=8, environ=NO_ENV)
    rules = sorted(p.rule for p in report.problems)
    assert rules == ["preflight.draft.sequence_packing", "preflight.fp32_lm_head.type"]


def test_the_config_is_never_mutated() -> None:
    config = edited(("policy.megatron_cfg.fp32_lm_head", True),
                    ("policy.megatron_cfg.use_fused_linear_logprobs", True),
                    (MEGATRON_TP_PATH, 4), ("policy.logprob_batch_size", 1),
                    ("policy.draft.enabled", True), ("policy.sequence_packing.enabled", True),
                    ("policy.dynamic_batching.enabled", True),
                    ("policy.generation.vllm_cfg.fp32_lm_head", 1))
    config["teachers"] = [copy.deepcopy(config["policy"])]
    before = copy.deepcopy(config)
    report = preflight_problems(config, world_size=6, environ=NO_ENV)
    assert report.problems
    assert config == before


WRONG_TYPES: dict[str, tuple[tuple[str, object], ...]] = {
    "policy-not-a-mapping": (("policy", 5),),
    "backend-block-a-string": (("policy.megatron_cfg", "on"),),
    "generation-a-list": (("policy.generation", [1, 2]),),
    "vllm-cfg-an-int": (("policy.generation.vllm_cfg", 3),),
    "env-vars-a-string": (("policy.generation.vllm_cfg.env_vars", "X=1"),),
    "backend-an-int": (("policy.generation.backend", 7),),
    "model-name-a-list": (("policy.model_name", ["a"]), ("policy.generation.model_name", None),
                          ("policy.megatron_cfg.fp32_lm_head", True),
                          ("policy.generation.vllm_cfg.fp32_lm_head", True)),
    "sizes-floats": ((MEGATRON_TP_PATH, 2.0), ("policy.logprob_batch_size", 1.5)),
    "size-bool": ((MEGATRON_TP_PATH, True),),
    "loss-fn-a-string": (("loss_fn", "x"),),
    "teachers-a-dict": (("teachers", {"a": 1}),),
}


@pytest.mark.parametrize("edits", WRONG_TYPES.values(), ids=list(WRONG_TYPES))
def test_wrong_types_never_crash(edits: tuple[tuple[str, object], ...]) -> None:
    report = preflight_problems(edited(*edits), world_size=8, environ=NO_ENV)
    for problem in report.problems:
        assert problem.rule.startswith("preflight.") and problem.path.startswith("policy.")


def test_wrong_types_the_rules_read_are_schema_problems_with_paths() -> None:
    report = preflight_problems(edited(*WRONG_TYPES["sizes-floats"]), world_size=8, environ=NO_ENV)
    assert [(p.rule, p.path, p.given) for p in report.problems] == [
        ("preflight.parallelism.size", MEGATRON_TP_PATH, "2.0"),
        ("preflight.schema", "policy.logprob_batch_size", "1.5"),
    ]
    report = preflight_problems(edited(*WRONG_TYPES["size-bool"]), world_size=8, environ=NO_ENV)
    assert [(p.path, p.given) for p in report.problems] == [(MEGATRON_TP_PATH, "true")]


def test_a_section_that_is_not_a_mapping_is_listed_as_skipped() -> None:
    report = preflight_problems(edited(("policy", 5)), world_size=8, environ=NO_ENV)
    assert report.problems == []
    assert report.skipped == ["policy: every rule (the section is not a mapping)"]


@pytest.mark.parametrize("world_size", [0, -8, True, 2.0])
def test_an_invalid_world_size_is_a_caller_error(world_size: Any) -> None:
    with pytest.raises(ValueError, match="world_size must be a positive integer"):
        preflight_problems(base_config(), world_size=world_size)


READ_PATHS = (
    "policy", "policy.model_name", "policy.train_micro_batch_size", "policy.logprob_batch_size",
    "policy.megatron_cfg", "policy.megatron_cfg.enabled", "policy.megatron_cfg.fp32_lm_head",
    "policy.megatron_cfg.use_fused_linear_logprobs", MEGATRON_TP_PATH,
    "policy.megatron_cfg.pipeline_model_parallel_size", "policy.megatron_cfg.context_parallel_size",
    "policy.automodel_cfg", "policy.automodel_cfg.tensor_parallel_size", "policy.draft",
    "policy.draft.enabled", "policy.sequence_packing", "policy.sequence_packing.enabled",
    "policy.dynamic_batching", "policy.dynamic_batching.enabled", "policy.generation",
    "policy.generation.backend", "policy.generation.model_name", "policy.generation.vllm_cfg",
    "policy.generation.vllm_cfg.fp32_lm_head", "policy.generation.vllm_cfg.env_vars",
    "loss_fn", "loss_fn.force_on_policy_ratio", "teachers", "teacher",
)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 20) | st.floats(allow_nan=False)
    | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None)
@given(edits=st.lists(st.tuples(st.sampled_from(READ_PATHS), JSON_VALUES), max_size=4),
       world_size=st.none() | st.integers(1, 64))
def test_any_values_at_the_paths_the_rules_read_never_crash(
    edits: list[tuple[str, object]], world_size: int | None
) -> None:
    config = base_config()
    for dotted, value in edits:
        *parents, last = dotted.split(".")
        node: Any = config
        for part in parents:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict):
            node[last] = value
    before = copy.deepcopy(config)
    report = preflight_problems(config, world_size=world_size, environ=NO_ENV)
    assert all(p.rule.startswith("preflight.") and p.path and p.message for p in report.problems)
    assert config == before
