"""Upstream's own launch descriptions (2026-08 corpus), read as data.

Every script `nightly.txt` and `release.txt` name reads to a decided launch whose recipe and
entry exist, except the one checked by hand below; the specific launches are checked
against the scripts' text.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nemo_rl_workers.tree.launch import Launch
from nemo_rl_workers.tree.launch_scripts import (
    read_campaign,
    read_launch_script,
    suite_script_of,
)
from tests.corpus import NEMO_RL

CORPUS = NEMO_RL.resolve()
SUITES = CORPUS / "tests" / "test_suites"

# Checked by hand: the one script of nightly/release outside the convention. It never runs
# `cd $PROJECT_ROOT`, so `examples/nemo_gym/run_grpo_nemo_gym.py` (line 19) is relative to
# whatever directory the caller starts it from.
OUTSIDE_CONVENTION = {
    "tests/test_suites/llm/grpo-qwen3-1.7b-1n8g-megatron-super-swe1.sh": (
        "tests/test_suites/llm/grpo-qwen3-1.7b-1n8g-megatron-super-swe1.sh:19: the entry "
        "script `examples/nemo_gym/run_grpo_nemo_gym.py` is relative to the caller's directory "
        "(no `cd` before it)"
    ),
}

# The suite scripts that export the escape the TP >= 4 assertion names.
IGNORE_TP_CHECK = (
    "grpo-gemma3-27b-it-8n4g-fsdp2tp4-actckpt-long",
    "grpo-gemma3-27b-it-8n8g-fsdp2tp8-actckpt-long",
    "grpo-qwen3-30ba3b-10n8g-megatron-cp2-r3-async-single-controller",
    "grpo-qwen3-30ba3b-10n8g-megatron-cp2-r3-async",
    "grpo-qwen3-30ba3b-8n8g-megatron-cp2-r3-tq_simple",
    "grpo-qwen3-30ba3b-8n8g-megatron-cp2-r3",
    "grpo-qwen3-30ba3b-8n8g-megatron",
)

pytestmark = pytest.mark.skipif(not SUITES.is_dir(), reason=f"corpus absent: {SUITES}")


def _llm(name: str) -> Launch:
    return read_launch_script(str(SUITES / "llm" / f"{name}.sh"))


@pytest.fixture(scope="module")
def nightly_and_release() -> dict[str, Launch]:
    launches: dict[str, Launch] = {}
    for campaign in ("nightly.txt", "release.txt"):
        for entry in read_campaign(str(SUITES / campaign)):
            assert entry.missing is None, entry
            launches.setdefault(entry.script, read_launch_script(entry.path))
    return launches


def test_every_nightly_and_release_script_reads_to_its_launch(
    nightly_and_release: dict[str, Launch],
) -> None:
    assert len(nightly_and_release) == 151
    undecided = {s: x.undecided for s, x in nightly_and_release.items() if x.undecided}
    assert set(undecided) == set(OUTSIDE_CONVENTION)
    for script, why in OUTSIDE_CONVENTION.items():
        assert undecided[script] == why
    for script, launch in nightly_and_release.items():
        if launch.undecided:
            continue
        assert os.path.isfile(launch.config), script
        assert launch.entry is not None and os.path.isfile(launch.entry), script
        assert launch.entry_why.startswith(script + " runs it"), launch.entry_why
        # common.env's derivation: the recipe mirrors the script's name and folder
        assert Path(launch.config).stem == Path(script).stem
        assert Path(launch.config).parent.name == Path(script).parent.name


def test_the_nano3_distillation_launch() -> None:
    launch = _llm("distillation-nano3-30ba3b-4n4g-megatron-qa-nvfp4-modelopt-spec")
    assert launch.undecided is None
    assert launch.entry == str(CORPUS / "examples" / "nemo_gym" / "run_distillation_nemo_gym.py")
    assert launch.config == str(
        CORPUS / "examples/configs/recipes/llm/"
        "distillation-nano3-30ba3b-4n4g-megatron-qa-nvfp4-modelopt-spec.yaml"
    )
    assert (launch.num_nodes, launch.gpus_per_node) == (4, 4)
    assert launch.overrides[0] == "distillation.max_num_steps=1"
    assert "checkpointing.enabled=False" in launch.overrides
    assert "logger.wandb.name=distillation-nano3-30ba3b-4n4g-megatron-qa-nvfp4-modelopt-spec" in (
        launch.overrides
    )
    # `$@` adds nothing; what follows the training command (metric checks) is not the launch
    assert not any("$" in o or "check_metrics" in o for o in launch.overrides)
    assert launch.environ == {"PYTHONPATH": f"{CORPUS}:"}


@pytest.mark.parametrize("name", IGNORE_TP_CHECK)
def test_the_tp_accuracy_escape_is_exported(name: str) -> None:
    launch = _llm(name)
    assert launch.undecided is None
    assert launch.environ["NRL_IGNORE_TP_ACCURACY_CHECK"] == "1"


def test_no_other_script_exports_the_tp_accuracy_escape() -> None:
    exporting = set()
    for script in sorted((SUITES / "llm").glob("*.sh")):
        launch = read_launch_script(str(script))
        if launch.environ.get("NRL_IGNORE_TP_ACCURACY_CHECK") == "1":
            exporting.add(script.stem)
    assert exporting == set(IGNORE_TP_CHECK)


def test_a_tq_wrapper_runs_its_own_recipe_through_its_base_script() -> None:
    launch = _llm("grpo-deepscaler-1.5b-8K-tq_simple")
    base = _llm("grpo-deepscaler-1.5b-8K")
    assert launch.undecided is None
    # EXP_NAME is exported before `bash base.sh`, so common.env derives the wrapper's recipe
    assert launch.config == str(
        CORPUS / "examples/configs/recipes/llm/grpo-deepscaler-1.5b-8K-tq_simple.yaml"
    )
    assert launch.entry == base.entry == str(CORPUS / "examples" / "run_grpo.py")
    assert launch.environ["EXP_NAME"] == "grpo-deepscaler-1.5b-8K-tq_simple"
    assert "through tests/test_suites/llm/grpo-deepscaler-1.5b-8K.sh" in launch.entry_why
    assert "logger.wandb.name=grpo-deepscaler-1.5b-8K-tq_simple" in launch.overrides
    assert launch.num_nodes == 1


def test_a_command_prefix_and_the_callers_variables() -> None:
    moonlight = _llm("grpo-moonlight-16ba3b-4n8g-megatron")
    # `PYTHONPATH=$HF_HOME/modules:$PYTHONPATH uv run ...`: HF_HOME is the caller's
    assert moonlight.environ["PYTHONPATH"] == f"$HF_HOME/modules:{CORPUS}:"
    assert moonlight.caller_inputs == ("HF_HOME",)
    deepscaler = _llm("grpo-deepscaler-1.5b-16K")
    assert "policy.model_name=$NRL_DEEPSCALER_8K_CKPT" in deepscaler.overrides
    assert deepscaler.caller_inputs == ("NRL_DEEPSCALER_8K_CKPT",)
    assert deepscaler.undecided is None


def test_steps_before_the_launch_that_cannot_change_it() -> None:
    # a `( cd ... && uv run python ... )` subshell, a `for` loop writing a file, `jq`
    gdpo = _llm("gdpo-qwen2.5-1.5b-1n8g-gym-multireward")
    assert gdpo.undecided is None
    assert gdpo.entry == str(CORPUS / "examples/nemo_gym/run_grpo_nemo_gym.py")
    assert (
        f"data.train.data_path={SUITES}/llm/gdpo-qwen2.5-1.5b-1n8g-gym-multireward/data/"
        "example_tool_call_multireward_train.jsonl"
    ) in gdpo.overrides
    # `cd 3rdparty/...` then `cd -` back to the project root
    gym = _llm("grpo-nanov3-30BA3B-2n8g-megatron_generation-async-gym")
    assert gym.entry == str(CORPUS / "examples/nemo_gym/run_grpo_nemo_gym.py")
    # `${NRL_PYTHON:-python} examples/run_grpo.py`
    fused = _llm("grpo-qwen3-30ba3b-2n8g-megatron_fused_linear_logprobs")
    assert fused.entry == str(CORPUS / "examples" / "run_grpo.py")


def test_a_vlm_script_reads_the_shared_common_env() -> None:
    launch = read_launch_script(
        str(SUITES / "vlm" / "vlm_grpo-qwen3-omni-30ba3b-audiomcq-4n8g-megatron.v1.sh")
    )
    assert launch.undecided is None
    assert launch.config == str(
        CORPUS
        / "examples/configs/recipes/vlm/vlm_grpo-qwen3-omni-30ba3b-audiomcq-4n8g-megatron.v1.yaml"
    )
    assert launch.entry == str(CORPUS / "examples" / "run_vlm_grpo.py")
    assert (launch.num_nodes, launch.gpus_per_node) == (4, 8)


def test_every_campaign_list_reads() -> None:
    lists = sorted(SUITES.glob("*.txt"))
    assert {p.name for p in lists} >= {
        "nightly.txt",
        "release.txt",
        "performance.txt",
        "nightly_gb200.txt",
        "disabled.txt",
    }
    for path in lists:
        entries = read_campaign(str(path))
        assert entries, path.name
        lines = path.read_text().splitlines()
        for entry in entries:
            assert entry.missing is None, entry
            assert lines[entry.line - 1].strip() == entry.script
            assert entry.path == str(CORPUS / entry.script)
            launch = read_launch_script(entry.path)
            assert launch.script == entry.path


def test_a_recipe_names_its_suite_script() -> None:
    name = "distillation-nano3-30ba3b-4n4g-megatron-qa-nvfp4-modelopt-spec"
    recipe = CORPUS / "examples/configs/recipes/llm" / f"{name}.yaml"
    assert suite_script_of(str(recipe)) == str(SUITES / "llm" / f"{name}.sh")
    assert suite_script_of(str(CORPUS / "examples/configs/grpo_math_1B.yaml")) is None
    # every recipe of the corpus has its suite script, which launches it
    recipes = sorted((CORPUS / "examples/configs/recipes").glob("*/*.yaml"))
    assert len(recipes) > 200
    for path in recipes:
        expected = SUITES / path.parent.name / f"{path.stem}.sh"
        assert suite_script_of(str(path)) == str(expected), path.name
