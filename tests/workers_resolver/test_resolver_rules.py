"""The selection rules R0-R7 of DESIGN.md, for every backend and vLLM mode."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from nemo_rl_workers import (
    Resolution,
    WorkerRow,
    resolve_config,
    resolve_generation,
    resolve_policy,
)
from nemo_rl_workers.errors import WorkerConfigError
from nemo_rl_workers.model.resolver import quant_auto_warning
from tests.workers_resolver.sections import ROW_IDS, ROWS, path_for, section_for

CUSTOM = "research.template.CustomWorker"


def resolve(row: WorkerRow, section: dict[str, Any], **kwargs: Any) -> Resolution:
    before = copy.deepcopy(section)
    try:
        if row.role == "policy":
            result = resolve_policy(section, path=path_for(row), **kwargs)
        else:
            found = resolve_generation(section, path=path_for(row), **kwargs)
            assert found is not None
            result = found
    finally:
        assert section == before, "the resolver must never mutate its input"
    return result


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_r1_default_worker_without_quant_or_fqn(row: WorkerRow) -> None:
    res = resolve(row, section_for(row))
    assert (res.fqn, res.rule, res.source, res.quantized) == (
        row.default_fqn,
        "R1",
        "default",
        False,
    )
    assert res.protocol == row.protocol
    assert res.warnings == ()
    assert res.env.is_driver


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_r2_unregistered_custom_fqn_is_rejected(row: WorkerRow) -> None:
    with pytest.raises(WorkerConfigError) as info:
        resolve(row, section_for(row, worker_extension_cls_fqn=CUSTOM))
    err = info.value
    assert err.path == f"{path_for(row)}.worker_extension_cls_fqn"
    assert err.given == CUSTOM
    assert "not registered with an actor environment" in str(err)
    assert err.problems[0].rule == "R2"


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_r2_explicit_default_fqn_is_accepted(row: WorkerRow) -> None:
    res = resolve(row, section_for(row, worker_extension_cls_fqn=row.default_fqn))
    assert (res.fqn, res.source, res.base_fqn) == (row.default_fqn, "config", None)


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_r2_another_rows_worker_is_rejected_naming_its_row(row: WorkerRow) -> None:
    other = next(r for r in ROWS if r.role == row.role and r is not row)
    with pytest.raises(WorkerConfigError) as info:
        resolve(row, section_for(row, worker_extension_cls_fqn=other.default_fqn))
    message = str(info.value)
    assert f"default worker of the {other.role} {other.label}" in message
    assert f"this section uses the {row.label}" in message
    assert info.value.expected == f"a subclass of {row.default_fqn}"


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_r3_quant_cfg_fills_in_the_quantized_worker_with_the_exact_warning(row: WorkerRow) -> None:
    assert row.quantized_fqn is not None
    res = resolve(row, section_for(row, quant_cfg="FP8_DEFAULT_CFG"))
    assert (res.fqn, res.rule, res.source, res.quantized) == (
        row.quantized_fqn,
        "R3",
        "quant-auto",
        True,
    )
    assert res.warnings == (
        f"quant_cfg requires worker_extension_cls_fqn={row.quantized_fqn}; setting it "
        "automatically. Set this field explicitly to silence this warning.",
    )
    assert res.warnings == (quant_auto_warning(row.quantized_fqn),)


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_r3_written_back_makes_the_second_resolution_silent(row: WorkerRow) -> None:
    from nemo_rl_workers import apply_resolution

    section = section_for(row, quant_cfg="INT8_DEFAULT_CFG")
    first = resolve(row, section)
    apply_resolution(section, first)
    second = resolve(row, section)
    assert (second.fqn, second.rule, second.warnings) == (first.fqn, "R4", ())


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_r4_exact_quantized_match_is_silent(row: WorkerRow) -> None:
    res = resolve(
        row,
        section_for(row, quant_cfg="FP8_DEFAULT_CFG", worker_extension_cls_fqn=row.quantized_fqn),
    )
    assert (res.fqn, res.rule, res.source, res.warnings) == (row.quantized_fqn, "R4", "config", ())
    assert res.protocol == row.quant_protocol  # R6


OTHER_ROW_PAIRS = [(r, g) for r in ROWS for g in ROWS if g is not r]  # the same row is R4


@pytest.mark.parametrize(
    "row, given_from",
    OTHER_ROW_PAIRS,
    ids=[f"{ROW_IDS[ROWS.index(r)]}-given-{ROW_IDS[ROWS.index(g)]}" for r, g in OTHER_ROW_PAIRS],
)
def test_r5_mismatch_names_path_expected_given_and_why(
    row: WorkerRow, given_from: WorkerRow
) -> None:
    assert given_from.quantized_fqn is not None
    section = section_for(
        row, quant_cfg="FP8_DEFAULT_CFG", worker_extension_cls_fqn=given_from.quantized_fqn
    )
    with pytest.raises(WorkerConfigError) as info:
        resolve(row, section)
    problem = info.value.problems[0]
    assert problem.rule == "R5"
    assert problem.path == f"{path_for(row)}.worker_extension_cls_fqn"
    assert problem.expected == row.quantized_fqn
    assert problem.given == given_from.quantized_fqn
    assert problem.message == (
        f"quant_cfg requires worker_extension_cls_fqn={row.quantized_fqn}, "
        f"got {given_from.quantized_fqn}. At {path_for(row)}.worker_extension_cls_fqn: quant_cfg "
        f"is set and this section uses the {row.label}, whose quantized worker is the expected "
        f"class; the given one is the quantized worker of the {given_from.role} "
        f"{given_from.label}. Set the field to the expected class or remove it to have it "
        "filled in."
    )


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_r5_begins_with_upstreams_sentence(row: WorkerRow) -> None:
    # Upstream parity: logs and scripts grep for upstream's first sentence, verbatim.
    section = section_for(row, quant_cfg="FP8_DEFAULT_CFG", worker_extension_cls_fqn=CUSTOM)
    with pytest.raises(WorkerConfigError) as info:
        resolve(row, section)
    message = info.value.problems[0].message
    assert message.startswith(
        f"quant_cfg requires worker_extension_cls_fqn={row.quantized_fqn}, got {CUSTOM}. "
    )


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_r5_custom_extension_is_told_quantized_workers_are_built_in(row: WorkerRow) -> None:
    section = section_for(row, quant_cfg="FP8_DEFAULT_CFG", worker_extension_cls_fqn=CUSTOM)
    snapshot = copy.deepcopy(section)
    with pytest.raises(WorkerConfigError) as info:
        resolve(row, section)
    problem = info.value.problems[0]
    assert (problem.rule, problem.expected, problem.given) == ("R5", row.quantized_fqn, CUSTOM)
    assert problem.message.endswith(
        "the given one is not a built-in worker. Quantized workers are the built-in ones and a "
        "plugin cannot replace them, so an extension cannot run quantized: set the field to the "
        f"expected class (or remove it) to quantize, or remove {path_for(row)}.quant_cfg to run "
        "the extension unquantized."
    )
    assert section == snapshot


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_r5_default_worker_under_quant_cfg_is_a_mismatch(row: WorkerRow) -> None:
    with pytest.raises(WorkerConfigError) as info:
        resolve(
            row,
            section_for(row, quant_cfg="FP8_DEFAULT_CFG", worker_extension_cls_fqn=row.default_fqn),
        )
    assert info.value.expected == row.quantized_fqn
    assert "default (unquantized) worker" in str(info.value)


def test_r5_names_the_vllm_mode() -> None:
    sync_row = next(r for r in ROWS if r.mode == "sync")
    async_row = next(r for r in ROWS if r.mode == "async")
    assert async_row.quantized_fqn is not None
    section = section_for(
        sync_row, quant_cfg="FP8_DEFAULT_CFG", worker_extension_cls_fqn=async_row.quantized_fqn
    )
    with pytest.raises(WorkerConfigError, match="vLLM sync mode.*vLLM async mode"):
        resolve(sync_row, section)


@pytest.mark.parametrize("row", [r for r in ROWS if r.role == "policy"], ids=lambda r: r.backend)
def test_r0_constructor_argument_feeds_the_config_path(row: WorkerRow) -> None:
    assert row.quantized_fqn is not None
    res = resolve(
        row, section_for(row, quant_cfg="FP8_DEFAULT_CFG"), constructor_fqn=row.quantized_fqn
    )
    assert (res.fqn, res.rule, res.source) == (row.quantized_fqn, "R4", "constructor")
    agreeing = section_for(
        row, quant_cfg="FP8_DEFAULT_CFG", worker_extension_cls_fqn=row.quantized_fqn
    )
    assert resolve(row, agreeing, constructor_fqn=row.quantized_fqn).fqn == row.quantized_fqn


@pytest.mark.parametrize("row", [r for r in ROWS if r.role == "policy"], ids=lambda r: r.backend)
def test_r0_conflicting_constructor_argument_names_both(row: WorkerRow) -> None:
    section = section_for(row, worker_extension_cls_fqn=row.default_fqn)
    with pytest.raises(WorkerConfigError) as info:
        resolve(row, section, constructor_fqn=CUSTOM)
    assert info.value.problems[0].rule == "R0"
    assert (info.value.expected, info.value.given) == (row.default_fqn, CUSTOM)
    assert row.default_fqn in str(info.value) and CUSTOM in str(info.value)


@pytest.mark.parametrize("row", [r for r in ROWS if r.role == "policy"], ids=lambda r: r.backend)
def test_r0_constructor_mismatch_under_quant_cfg_is_r5(row: WorkerRow) -> None:
    with pytest.raises(WorkerConfigError) as info:
        resolve(row, section_for(row, quant_cfg="FP8_DEFAULT_CFG"), constructor_fqn=row.default_fqn)
    assert info.value.problems[0].rule == "R5"


@pytest.mark.parametrize("backend", ["megatron", "sglang", "trtllm", "dynamo", "hf"])
def test_r7_non_vllm_generation_with_fqn_is_rejected(backend: str) -> None:
    section = {"backend": backend, "worker_extension_cls_fqn": CUSTOM}
    with pytest.raises(WorkerConfigError) as info:
        resolve_generation(section, path="policy.generation")
    assert info.value.problems[0].rule == "R7"
    assert info.value.path == "policy.generation.worker_extension_cls_fqn"
    assert f"{backend!r} does not use worker extensions" in str(info.value)


def test_r7_non_vllm_generation_without_fqn_has_no_worker() -> None:
    assert resolve_generation({"backend": "megatron"}) is None


@pytest.mark.parametrize(
    "value, reason",
    [
        ("", "empty"),
        ("my module.Worker", "whitespace"),
        (".leading.Worker", "empty component"),
        ("a..Worker", "empty component"),
        ("trailing.", "empty component"),
        ("Worker", "needs a module"),
        ("pkg.1bad.Worker", "not a Python identifier"),
        ("pkg.class.Worker", "Python keyword"),
        (42, "a int, not a string"),
        (["a.B"], "a list, not a string"),
    ],
)
@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_malformed_fqn_is_rejected_with_its_path(
    row: WorkerRow, value: object, reason: str
) -> None:
    with pytest.raises(WorkerConfigError) as info:
        resolve(row, section_for(row, worker_extension_cls_fqn=value))
    assert info.value.path == f"{path_for(row)}.worker_extension_cls_fqn"
    assert info.value.problems[0].rule == "fqn"
    assert reason in str(info.value)


def test_non_string_quant_cfg_is_a_schema_problem() -> None:
    row = ROWS[0]
    with pytest.raises(WorkerConfigError) as info:
        resolve(row, section_for(row, quant_cfg=7))
    assert info.value.path == "policy.quant_cfg"


def test_resolve_config_reports_every_section_at_once() -> None:
    megatron = next(r for r in ROWS if r.backend == "megatron")
    automodel = next(r for r in ROWS if r.backend == "automodel")
    assert automodel.quantized_fqn is not None
    config = {
        "policy": section_for(
            megatron,
            quant_cfg="FP8_DEFAULT_CFG",
            worker_extension_cls_fqn=automodel.quantized_fqn,
            generation={"backend": "sglang", "worker_extension_cls_fqn": CUSTOM},
        ),
        "teachers": [section_for(automodel), {"megatron_cfg": {"enabled": "yes"}}],
    }
    before = copy.deepcopy(config)
    with pytest.raises(WorkerConfigError) as info:
        resolve_config(config)
    assert config == before
    assert [p.path for p in info.value.problems] == [
        "policy.worker_extension_cls_fqn",
        "policy.generation.worker_extension_cls_fqn",
        "teachers[1].megatron_cfg.enabled",
    ]


def test_resolve_config_lists_policy_generation_and_teachers() -> None:
    megatron = next(r for r in ROWS if r.backend == "megatron")
    vllm_async = next(r for r in ROWS if r.mode == "async")
    config = {
        "policy": section_for(
            megatron, generation=section_for(vllm_async, quant_cfg="FP8_DEFAULT_CFG")
        ),
        "teacher": section_for(megatron),
    }
    got = [(r.section, r.rule) for r in resolve_config(config)]
    assert got == [("policy", "R1"), ("policy.generation", "R3"), ("teacher", "R1")]
