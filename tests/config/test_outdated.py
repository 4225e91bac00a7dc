"""check_outdated_config: the dtensor_cfg rename, `_v2`, and exactly one backend."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from nemo_rl_workers.errors import Problem, WorkerConfigError
from nemo_rl_workers.model.outdated import check_outdated_config, outdated_config_problems
from nemo_rl_workers.model.sections import worker_sections

from .conftest import CorpusResults


def policy(**blocks: Any) -> dict[str, Any]:
    section: dict[str, Any] = {"model_name": "m", "megatron_cfg": {"enabled": False}}
    section.update(blocks)
    return section


AUTOMODEL_ON = {"enabled": True, "tensor_parallel_size": 1}


def rules(problems: list[Problem]) -> list[tuple[str, str]]:
    return [(p.rule, p.path) for p in problems]


def refused(config: dict[str, Any]) -> WorkerConfigError:
    """The error check_outdated_config raises for `config`, which it must leave as it was."""
    before = copy.deepcopy(config)
    with pytest.raises(WorkerConfigError) as info:
        check_outdated_config(config)
    assert config == before
    return info.value


def test_a_current_config_passes() -> None:
    config = {"policy": policy(automodel_cfg=AUTOMODEL_ON)}
    assert outdated_config_problems(config) == []
    check_outdated_config(config)


def test_dtensor_cfg_is_reported_as_renamed() -> None:
    [problem] = outdated_config_problems({"policy": policy(dtensor_cfg=AUTOMODEL_ON)})
    assert problem.rule == "outdated.rename"
    assert problem.path == "policy.dtensor_cfg"
    assert problem.expected == "policy.automodel_cfg"
    assert problem.given == "policy.dtensor_cfg"
    assert problem.message == (
        "policy.dtensor_cfg has been renamed to policy.automodel_cfg; "
        "rename the key, its contents are unchanged."
    )


def test_rename_names_the_teacher_path() -> None:
    config = {"teachers": [policy(automodel_cfg=AUTOMODEL_ON), policy(dtensor_cfg=AUTOMODEL_ON)]}
    [problem] = outdated_config_problems(config)
    assert problem.message.startswith(
        "teachers[1].dtensor_cfg has been renamed to teachers[1].automodel_cfg"
    )


def test_both_old_and_new_blocks() -> None:
    config = {"teacher": policy(dtensor_cfg={"enabled": True}, automodel_cfg={"enabled": False})}
    problems = outdated_config_problems(config)
    # The backend is judged on the real automodel_cfg, which is off: neither enabled.
    assert rules(problems) == [("outdated.rename", "teacher.dtensor_cfg"), ("backend", "teacher")]
    assert "both are set, so move what teacher.dtensor_cfg holds into teacher.automodel_cfg" in (
        problems[0].message
    )
    assert problems[1].given == "neither enabled"


@pytest.mark.parametrize(("value", "shown"), [(True, "true"), (False, "false")])
def test_v2_is_rejected_for_either_value(value: bool, shown: str) -> None:
    config = {"policy": policy(automodel_cfg={**AUTOMODEL_ON, "_v2": value})}
    [problem] = outdated_config_problems(config)
    assert problem.rule == "outdated.v2"
    assert problem.path == "policy.automodel_cfg._v2"
    assert problem.given == shown
    assert problem.message.startswith("policy.automodel_cfg._v2 is no longer supported")


def test_v2_inside_the_old_block_comes_after_the_rename() -> None:
    config = {"policy": policy(dtensor_cfg={**AUTOMODEL_ON, "_v2": True})}
    assert rules(outdated_config_problems(config)) == [
        ("outdated.rename", "policy.dtensor_cfg"),
        ("outdated.v2", "policy.dtensor_cfg._v2"),
    ]


@pytest.mark.parametrize(
    ("megatron", "automodel", "given"),
    [(True, True, "both enabled"), (False, False, "neither enabled")],
)
def test_backend_both_or_neither(megatron: bool, automodel: bool, given: str) -> None:
    config = {
        "policy": policy(megatron_cfg={"enabled": megatron}, automodel_cfg={"enabled": automodel})
    }
    [problem] = outdated_config_problems(config)
    assert (problem.rule, problem.path, problem.given) == ("backend", "policy", given)


def test_old_block_counts_as_automodel_for_the_backend_rule() -> None:
    # Only the rename is wrong: no spurious "neither enabled".
    only = outdated_config_problems({"policy": policy(dtensor_cfg={"enabled": True})})
    assert rules(only) == [("outdated.rename", "policy.dtensor_cfg")]
    # A conflict that survives the rename is reported now, after it.
    both = outdated_config_problems(
        {"policy": policy(megatron_cfg={"enabled": True}, dtensor_cfg={"enabled": True})}
    )
    assert rules(both) == [("outdated.rename", "policy.dtensor_cfg"), ("backend", "policy")]
    assert both[1].given == "both enabled"
    neither = outdated_config_problems({"policy": policy(dtensor_cfg={"enabled": False})})
    assert [p.given for p in neither] == ["policy.dtensor_cfg", "neither enabled"]


@pytest.mark.parametrize(
    ("config", "path", "says"),
    [
        ({"policy": 5}, "policy", "policy must be a mapping of keys to values, but is 5."),
        ({"teachers": "t"}, "teachers", "teachers must be a list of teacher policy sections"),
        ({"teachers": [None]}, "teachers[0]", "teachers[0] must be a mapping"),
        ({"policy": policy(automodel_cfg=3)}, "policy.automodel_cfg", "must be a mapping"),
        ({"policy": policy(dtensor_cfg=[1])}, "policy.dtensor_cfg", "has been renamed"),
    ],
)
def test_wrong_types_are_problems_not_crashes(config: dict[str, Any], path: str, says: str) -> None:
    problems = outdated_config_problems(config)
    assert problems[0].path == path
    assert says in problems[0].message


def test_all_problems_across_sections_at_once() -> None:
    config = {
        "policy": policy(dtensor_cfg={"enabled": True}),
        "teachers": [
            policy(automodel_cfg=AUTOMODEL_ON),
            policy(megatron_cfg={"enabled": True}, automodel_cfg=AUTOMODEL_ON),
        ],
    }
    error = refused(config)
    assert rules(list(error.problems)) == [
        ("outdated.rename", "policy.dtensor_cfg"),
        ("backend", "teachers[1]"),
    ]
    assert len(str(error).splitlines()) == 2
    assert error.path == "policy.dtensor_cfg"


@pytest.mark.slow
def test_every_corpus_dtensor_config_is_rejected_with_the_rename(
    corpus_results: CorpusResults,
) -> None:
    rejected = 0
    for path, result in corpus_results.items():
        if not isinstance(result, dict):
            continue
        before = copy.deepcopy(result)
        problems = outdated_config_problems(result)
        assert result == before
        for section_path, section in worker_sections(result):
            if not isinstance(section, dict) or "dtensor_cfg" not in section:
                continue
            own = [p for p in problems if p.path.startswith(section_path + ".")]
            assert own, (path, section_path)
            assert own[0].rule == "outdated.rename"
            assert own[0].message.startswith(
                f"{section_path}.dtensor_cfg has been renamed to {section_path}.automodel_cfg"
            )
            rejected += 1
        # Upstream configs are otherwise consistent: only outdated keys, no backend conflict.
        assert {p.rule for p in problems} <= {"outdated.rename", "outdated.v2"}, path
        if problems:
            with pytest.raises(WorkerConfigError) as info:
                check_outdated_config(result)
            assert info.value.problems == tuple(problems)
    assert rejected >= 270


def test_value_and_reward_model_sections_are_visited_as_upstream_does() -> None:
    # Upstream parity: the PPO value model and the reward-model environment hold the same
    # backend blocks; stale keys there are refused too, with their own paths.
    config = {
        "policy": policy(automodel_cfg=AUTOMODEL_ON),
        "value": {"model_name": "v", "dtensor_cfg": {"_v2": True, "enabled": True}},
        "env": {
            "reward_model": {"automodel_cfg": {"_v2": False, "enabled": True}},
            "math": {"dtensor_cfg": {"enabled": True}},  # not a model section
        },
    }
    error = refused(config)
    assert rules(list(error.problems)) == [
        ("outdated.rename", "value.dtensor_cfg"),
        ("outdated.v2", "value.dtensor_cfg._v2"),
        ("outdated.v2", "env.reward_model.automodel_cfg._v2"),
    ]
    assert error.problems[0].message == (
        "value.dtensor_cfg has been renamed to value.automodel_cfg; "
        "rename the key, its contents are unchanged."
    )


def test_value_and_reward_model_are_not_held_to_the_worker_backend_rule() -> None:
    # No worker of this project runs them, so only the stale-key rules apply there.
    config = {
        "policy": policy(automodel_cfg=AUTOMODEL_ON),
        "value": {"model_name": "v"},
        "env": {"reward_model": {"megatron_cfg": {"enabled": True},
                                 "automodel_cfg": {"enabled": True}}},
    }
    assert outdated_config_problems(config) == []
