"""Deliberate departures from upstream NeMo-RL, one test each (the guide's table links here).

Found by re-running upstream's own unit tests for worker selection, outdated configs, frozen
teachers and preflight against this project; each test pins what this project does.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from nemo_rl.modelopt.quantization import quant_cfg_problems

from nemo_rl_workers.errors import WorkerConfigError
from nemo_rl_workers.model.outdated import outdated_config_problems
from nemo_rl_workers.model.resolver import FIELD, apply_resolution, resolve_config
from nemo_rl_workers.model.table import BUILTIN_ROWS

MEGATRON, AUTOMODEL, _, _ = BUILTIN_ROWS


def test_the_resolver_never_writes_into_its_input() -> None:
    # Upstream writes worker_extension_cls_fqn into the config while choosing the class;
    # here resolution is pure and the caller writes back (apply_resolution) only once
    # every check passed and the workers started.
    config: dict[str, Any] = {
        "policy": {"megatron_cfg": {"enabled": True}, "quant_cfg": "FP8_DEFAULT_CFG"}
    }
    snapshot = copy.deepcopy(config)
    [resolution] = resolve_config(config)
    assert resolution.rule == "R3" and config == snapshot
    apply_resolution(config["policy"], resolution)
    assert config["policy"][FIELD] == MEGATRON.quantized_fqn


def test_stale_keys_inside_a_megatron_enabled_section_are_refused() -> None:
    # Upstream lets these pass when Megatron is the enabled backend; here a stale block
    # is refused wherever it sits, as it would surface again the day the backend switches.
    config = {
        "policy": {
            "megatron_cfg": {"enabled": True},
            "dtensor_cfg": {"enabled": False, "_v2": True},
        }
    }
    assert [(p.rule, p.path) for p in outdated_config_problems(config)] == [
        ("outdated.rename", "policy.dtensor_cfg"),
        ("outdated.v2", "policy.dtensor_cfg._v2"),
    ]


def test_a_policy_with_neither_backend_is_refused_by_the_check() -> None:
    # Upstream's check lets this through; here it is refused, naming both switches.
    [problem] = outdated_config_problems(
        {"policy": {"megatron_cfg": {"enabled": False}, "automodel_cfg": {"enabled": False}}}
    )
    assert (problem.rule, problem.path, problem.given) == ("backend", "policy", "neither enabled")
    assert problem.message == (
        "policy: neither Megatron nor Automodel is enabled; set exactly one of "
        "policy.megatron_cfg.enabled or policy.automodel_cfg.enabled to true."
    )


@pytest.mark.parametrize("value", ["FP8_DEFAULT", "fp8", "NOT_A_MODELOPT_CFG"])
def test_quant_cfg_must_be_a_modelopt_name_or_a_recipe_file(value: str) -> None:
    # Upstream hands other strings on to ModelOpt inside the worker; here they are refused
    # before allocation.
    [problem] = quant_cfg_problems(value, "policy.quant_cfg")
    assert (problem.path, problem.given) == ("policy.quant_cfg", value)
    assert "is not a built-in ModelOpt config name nor a recipe file path" in problem.message


def test_non_string_quant_cfg_is_refused_by_the_resolver() -> None:
    config = {"policy": {"automodel_cfg": {"enabled": True}, "quant_cfg": {"algorithm": "max"}}}
    with pytest.raises(WorkerConfigError) as caught:
        resolve_config(config)
    assert caught.value.problems[0].path == "policy.quant_cfg"
