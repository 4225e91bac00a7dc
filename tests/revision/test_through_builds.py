"""A driver an entry builds through a function of its tree (issue 34, item 2): on-policy
distillation's teacher groups, which GRPO's `setup` builds in
`opd_module.create_teacher_worker_groups(master_config, policy_config, ...)` under a
condition it computes from the config. Shown where the config runs that call, with the
class the group builds (its cleared quantization included); not shown where a decided
branch skips it; one skipped line where the condition is not decided."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nemo_rl_workers.cache import codec
from nemo_rl_workers.cache.codec import CodecError
from nemo_rl_workers.tree.revision_build import build_revision
from tests.revision.test_every_mode import TEACHER_GROUP, _check, _corpus, _decoded
from tests.revision.trees import OLD_FILES, config, write

OPD = '''
def _opd_cfg(master_config):
    found = master_config.get("on_policy_distillation")
    if found is None:
        return {}
    return found


def teachers_enabled(master_config):
    return bool(_opd_cfg(master_config).get("enabled", False))


def create_teacher_groups(master_config, policy_config):
    from nemo_rl.models.policy.teacher_worker_group import TeacherWorkerGroup

    return [TeacherWorkerGroup(teacher, policy_config=policy_config)
            for teacher in _opd_cfg(master_config)["teachers"]]
'''

GRPO = '''
from typing import TypedDict
from nemo_rl.algorithms import opd as opd_module
from nemo_rl.models.policy.lm_policy import Policy


class PolicyConfig(TypedDict):
    model_name: str


class GRPOConfig(TypedDict):
    num_steps: int


class MasterConfig(TypedDict):
    policy: PolicyConfig
    grpo: GRPOConfig


def setup(master_config: MasterConfig, tokenizer):
    policy_config = master_config["policy"]
    enable_teachers = opd_module.teachers_enabled(master_config)
    policy = Policy(config=policy_config)
    teachers = []
    if enable_teachers:
        teachers = opd_module.create_teacher_groups(master_config, policy_config)
    return policy, teachers
'''

POLICY = """\
policy:
  model_name: tiny
  megatron_cfg: {enabled: true}
  quant_cfg: {algorithm: int8}
grpo:
  num_steps: 1
"""

TEACHERS = POLICY + """\
on_policy_distillation:
  enabled: true
  teachers: [{alias: big}]
"""

TEACHER = "policy (TeacherWorkerGroup)"


def _tree(tmp_path: Path, grpo: str = GRPO) -> Path:
    return write(tmp_path, {
        **OLD_FILES, "nemo_rl/algorithms/__init__.py": "", "nemo_rl/algorithms/grpo.py": grpo,
        "nemo_rl/algorithms/opd.py": OPD,
        "nemo_rl/models/policy/teacher_worker_group.py": TEACHER_GROUP})


def test_a_teacher_group_the_config_runs_is_shown_unquantized(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    code, report = _check(config(root, "grpo_opd.yaml", TEACHERS))
    assert (code, report["problems"]) == (0, [])
    assert [(w["section"], w["fqn"].rsplit(".", 1)[1]) for w in report["workers"]] == [
        ("policy", "MegatronQuantPolicyWorker"),  # the student's quant_cfg chooses it
        (TEACHER, "MegatronPolicyWorker")]  # the group clears quant_cfg on its copy
    assert any(line.startswith("tree rules of TeacherWorkerGroup.__init__: not run: it is "
                               "built through a call (nemo_rl/algorithms/grpo.py:26)")
               for line in report["skipped"])


@pytest.mark.parametrize("text", [POLICY, POLICY + "on_policy_distillation: {enabled: false}\n"],
                         ids=["no distillation block", "disabled"])
def test_a_teacher_group_a_decided_branch_skips_is_not_shown(tmp_path: Path, text: str) -> None:
    root = _tree(tmp_path)
    code, report = _check(config(root, "grpo.yaml", text))
    assert (code, report["problems"]) == (0, [])
    assert [w["section"] for w in report["workers"]] == ["policy"]
    assert not any("TeacherWorkerGroup" in line for line in report["skipped"])


def test_an_undecided_call_is_one_skipped_line_and_no_row(tmp_path: Path) -> None:
    # Whether the teachers are built now depends on the tokenizer the program passes.
    root = _tree(tmp_path, GRPO.replace(
        "opd_module.teachers_enabled(master_config)",
        "opd_module.teachers_enabled(master_config) and tokenizer is not None"))
    code, report = _check(config(root, "grpo_opd.yaml", TEACHERS))
    assert (code, report["problems"]) == (0, [])
    assert [w["section"] for w in report["workers"]] == ["policy"]
    [line] = [line for line in report["skipped"] if "TeacherWorkerGroup" in line]
    assert line.startswith(
        f"{TEACHER}: not shown: TeacherWorkerGroup is built at nemo_rl/algorithms/opd.py:16, "
        "through the call at nemo_rl/algorithms/grpo.py:26, and whether this config runs "
        "that call is undecided: ")
    assert "enable_teachers" in line


def test_a_helper_that_builds_no_driver_adds_nothing(tmp_path: Path) -> None:
    root = _tree(tmp_path, GRPO.replace("opd_module.create_teacher_groups(",
                                        "opd_module.teachers_enabled("))
    code, report = _check(config(root, "grpo_opd.yaml", TEACHERS))
    assert (code, [w["section"] for w in report["workers"]]) == (0, ["policy"])


def test_upstream_s_on_policy_distillation_recipe_shows_its_teachers() -> None:
    """grpo.setup (2026-08) calls opd_module.create_teacher_worker_groups at grpo.py:1644
    under `if enable_opd_teachers:` (line 1641), set at line 783 from
    `is_non_colocated_teachers_enabled(master_config)`; the recipe enables
    on_policy_distillation.non_colocated_teachers. The groups start MegatronPolicyWorker
    (TeacherWorkerGroup builds RayWorkerBuilder with it at teacher_worker_group.py)."""
    root = _corpus("2026-08")
    recipe = root / "examples/configs/recipes/llm/mopd-qwen3-1.7b-3n8g-megatron-pack.yaml"
    code, report = _check("--nemo-rl", str(root), str(recipe))
    assert (code, report["problems"]) == (0, [])
    workers = {w["section"]: (w["fqn"].rsplit(".", 1)[1], w["env"]) for w in report["workers"]}
    assert workers[TEACHER] == ("MegatronPolicyWorker", "MCORE_EXECUTABLE")
    code, report = _check("--nemo-rl", str(root), str(root / "examples/configs/grpo_math_1B.yaml"))
    assert TEACHER not in {w["section"] for w in report["workers"]}
    assert not any("TeacherWorkerGroup" in line for line in report["skipped"])


def test_upstream_s_teacher_guard_is_decided_through_its_helpers() -> None:
    """`enable_opd_teachers = opd_module.is_non_colocated_teachers_enabled(master_config)`
    (grpo.py:783) is run (`_opd_cfg` takes its model path: MasterConfig is a pydantic
    model, so `getattr`, then `model_dump(exclude_none=True)`), and so is the loop over the
    teachers it then builds (grpo.py:794). The rules under it (grpo.py:785 to 802) are
    judged on the recipe that enables teachers and not reached on one that does not; the
    first refuses the recipe made synchronous, with the tree's message."""
    root = _corpus("2026-08")
    recipe = root / "examples/configs/recipes/llm/mopd-qwen3-1.7b-3n8g-megatron-pack.yaml"
    code, report = _check("--nemo-rl", str(root), str(recipe))
    assert (code, report["problems"]) == (0, [])
    assert not any(f"grpo.py:{line} " in skipped or "enable_opd_teachers" in skipped
                   for line in (785, 795, 802) for skipped in report["skipped"])
    # The teachers' nodes, summed in a loop over what create_teacher_configs_from_opd_config
    # builds (one TeacherConfig of 1 node): 3 - 1 = 2 policy nodes, one of them for
    # non-colocated inference, so training has 1 node of 8 GPUs.
    assert report["world_size"] == 8
    assert report["world_size_from"].startswith(
        "sum([train_gpus_per_node] * train_nodes) at nemo_rl/algorithms/grpo.py:1025")
    # Launched as upstream launches it (its suite script's run_grpo_nemo_gym.py), the entry
    # sets async_engine = True again before setup; through the plain GRPO entry, the
    # override stands.
    code, report = _check("--nemo-rl", str(root), str(recipe),
                          "policy.generation.vllm_cfg.async_engine=false")
    assert (code, report["problems"]) == (0, [])
    code, report = _check("--nemo-rl", str(root), "--entry", str(root / "examples/run_grpo.py"),
                          str(recipe), "policy.generation.vllm_cfg.async_engine=false")
    assert code == 1
    # The recipe runs NeMo-Gym (env.should_use_nemo_gym), whose own helper asserts the
    # same first (nemo_gym.py:90, called from grpo.py:733 before any worker starts).
    gym, problem = report["problems"]
    assert gym["message"].endswith(
        "at nemo_rl/environments/nemo_gym.py:90 (nemo_gym.should_use_nemo_gym): \"❌ Error: "
        "In order to use NeMo-Gym, you must use a generation backend with `async_engine: "
        "true`!\"")
    assert problem["path"] == gym["path"] == "policy.generation.vllm_cfg.async_engine"
    assert ("on_policy_distillation.non_colocated_teachers.enabled=True" in problem["message"]
            and problem["message"].endswith(
                "at nemo_rl/algorithms/grpo.py:785 (grpo.setup): \"Non-colocated OPD teachers "
                "require async GRPO (vLLM backend with async_engine enabled).\""))
    code, report = _check("--nemo-rl", str(root), str(root / "examples/configs/grpo_math_1B.yaml"))
    assert (code, report["problems"]) == (0, [])
    assert not any(f"grpo.py:{line} " in skipped for line in (785, 795, 802)
                   for skipped in report["skipped"])


def test_the_model_stores_the_call_a_build_comes_through(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    revision = build_revision(root, "t", name="t")
    [through] = [b for b in revision.entry_builds if b.via is not None]
    assert (through.driver, through.section, through.where, through.via) == (
        "TeacherWorkerGroup", "policy", "nemo_rl/algorithms/opd.py:16",
        "nemo_rl/algorithms/grpo.py:26")
    payload = json.loads(json.dumps(codec.encode(revision)))
    back = _decoded(payload, root)
    assert back is not None and back.entry_builds == revision.entry_builds
    payload["entry_builds"][-1]["via"] = 26  # a line where the file:line belongs
    with pytest.raises(CodecError):
        _decoded(payload, root)


def test_a_call_in_a_loop_is_reached_where_the_loop_runs(tmp_path: Path) -> None:
    """A build through a call inside a loop the config runs (`range(2)`) is reached; inside
    one over a value the config does not give, the walk does not follow it: one skipped
    line."""
    root = _tree(tmp_path, GRPO.replace(
        "    if enable_teachers:\n        teachers = opd_module.create_teacher_groups(",
        "    for _ in range(2):\n        teachers = opd_module.create_teacher_groups("))
    code, report = _check(config(root, "grpo_opd.yaml", TEACHERS))
    assert (code, [w["section"] for w in report["workers"]]) == (0, ["policy", TEACHER])
    write(root, {"nemo_rl/algorithms/grpo.py": GRPO.replace(
        "    if enable_teachers:\n        teachers = opd_module.create_teacher_groups(",
        "    for _ in ask_the_scheduler():\n        teachers = opd_module.create_teacher_groups(")})
    code, report = _check(config(root, "grpo_opd2.yaml", TEACHERS))
    assert (code, [w["section"] for w in report["workers"]]) == (0, ["policy"])
    [line] = [line for line in report["skipped"] if "TeacherWorkerGroup" in line]
    assert line.endswith("undecided: grpo.setup was not followed as far as line 26")
