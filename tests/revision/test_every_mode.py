"""Every mode a tree has (issue 34, item 2): what a recipe starts is all shown, on trees
written here (the real trees: test_corpus). An entry that builds a generation driver with
no policy (the evaluation), a frozen group whose driver clears quantization before it
builds, a class the tree picks through a dict lookup, an environment named by an explicit
`py_executable`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli.test_cli import run
from tests.revision.trees import OLD_FILES, config, write

# An evaluation entry: its whole config has no policy; its setup builds the generation
# driver on the top-level `generation:` block, through a local name.
EVAL_ENTRY = '''
from typing import TypedDict
from nemo_rl.models.generation.vllm_generation import VllmGeneration


class EvalConfig(TypedDict):
    seed: int


class GenerationConfig(TypedDict):
    backend: str


class MasterConfig(TypedDict):
    eval: EvalConfig
    generation: GenerationConfig


def setup(master_config: MasterConfig, tokenizer):
    generation_config = master_config["generation"]
    return VllmGeneration(generation_config)
'''

EVAL_CONFIG = """\
eval:
  seed: 1
generation:
  backend: vllm
  vllm_cfg:
    async_engine: true
"""


def _eval_tree(tmp_path: Path) -> Path:
    return write(tmp_path, {**OLD_FILES, "nemo_rl/evals/__init__.py": "",
                            "nemo_rl/evals/eval.py": EVAL_ENTRY})


def _check(*argv: str) -> tuple[int, dict[str, Any]]:
    code, out, _ = run("check", "--no-verify", "--json", *argv)
    report: dict[str, Any] = json.loads(out)
    return code, report


def test_an_eval_config_shows_the_generation_worker_its_entry_builds(tmp_path: Path) -> None:
    root = _eval_tree(tmp_path)
    code, report = _check(config(root, "evals/eval.yaml", EVAL_CONFIG))
    assert (code, report["problems"]) == (0, [])
    assert [(w["section"], w["fqn"], w["env"]) for w in report["workers"]] == [
        ("generation", "nemo_rl.models.generation.workers.VllmAsyncGenerationWorker", "VLLM")]


def test_a_generation_block_no_entry_builds_is_not_judged(tmp_path: Path) -> None:
    """Without the evaluation entry, a top-level `generation:` block starts nothing."""
    root = write(tmp_path, OLD_FILES)
    code, report = _check(config(root, "evals/eval.yaml", EVAL_CONFIG))
    assert (code, report["workers"], report["problems"]) == (0, [], [])


# A frozen teacher group: it builds its config from the student's, clears quant_cfg on
# its own copy, and starts the Megatron worker; the override map has a quantized
# counterpart of that class, which this group never starts.
TEACHER_GROUP = '''
from copy import deepcopy
from nemo_rl.distributed.worker_groups import RayWorkerBuilder, RayWorkerGroup


class TeacherWorkerGroup:
    def __init__(self, teacher_cfg, policy_config):
        cfg = deepcopy(policy_config)
        cfg["megatron_cfg"]["enabled"] = True
        if cfg.get("quant_cfg") is not None:
            cfg["quant_cfg"] = None
        self.worker_group = RayWorkerGroup(RayWorkerBuilder(
            "nemo_rl.models.policy.workers.megatron.MegatronPolicyWorker", cfg))

    def get_logprobs(self, data):
        return self.worker_group.run_all_workers_single_data("get_logprobs", data=data)
'''

# Environments: a base class that starts whatever its subclass's dict names, each with an
# explicit py_executable; a subclass holding the dict; a registry that names neither.
ENVIRONMENTS = '''
import ray


class PY_EXECUTABLES:
    SYSTEM = "python"


@ray.remote
class ExactVerifyWorker:
    def verify(self, data): ...


@ray.remote
class FuzzyVerifyWorker:
    def verify(self, data): ...


class BaseGradingEnvironment:
    WORKER_CLASS_DICT: dict

    def __init__(self, cfg):
        worker_cls = self.WORKER_CLASS_DICT[cfg["verifier_type"]]
        self.workers = [worker_cls.options(
            runtime_env={"py_executable": PY_EXECUTABLES.SYSTEM}).remote() for _ in range(2)]


@ray.remote
class GradingEnvironment(BaseGradingEnvironment):
    WORKER_CLASS_DICT = {"exact": ExactVerifyWorker, "fuzzy": FuzzyVerifyWorker}
'''


def _list(root: Path) -> tuple[int, str, dict[str, Any]]:
    code, out, err = run("list", "--nemo-rl", str(root))
    assert err == ""
    _, as_json, _ = run("list", "--nemo-rl", str(root), "--json")
    listing: dict[str, Any] = json.loads(as_json)
    return code, out, listing


def test_a_frozen_group_that_clears_quant_cfg_has_no_quantized_class(tmp_path: Path) -> None:
    root = write(tmp_path, {**OLD_FILES,
                            "nemo_rl/models/policy/teacher_worker_group.py": TEACHER_GROUP})
    code, out, listing = _list(root)
    assert code == 0
    teacher = [r for r in listing["rows"] if r["driver"] == "TeacherWorkerGroup"]
    assert [(r["role"], r["default"], r["quantized"], r["clears"]) for r in teacher] == [
        ("teacher", "nemo_rl.models.policy.workers.megatron.MegatronPolicyWorker", None,
         ["quant_cfg"])]
    line = next(line for line in out.splitlines() if "TeacherWorkerGroup" in line)
    assert line.split()[-2:] == ["quant_cfg)", "-"]
    assert "- (TeacherWorkerGroup clears quant_cfg)" in line
    # The policy's own rows keep their quantized counterpart.
    policy = [r["quantized"] for r in listing["rows"] if r["driver"] == "Policy"]
    assert "nemo_rl.modelopt.workers.MegatronQuantPolicyWorker" in policy


def test_list_names_dict_lookup_workers_and_their_py_executable(tmp_path: Path) -> None:
    root = write(tmp_path, {**OLD_FILES, "nemo_rl/environments/__init__.py": "",
                            "nemo_rl/environments/grading.py": ENVIRONMENTS})
    code, out, listing = _list(root)
    assert code == 0
    found = [(r["driver"], r["default"], r["env"], r["py_executable"])
             for r in listing["rows"] if "environments" in r["default"]]
    assert found == [
        ("GradingEnvironment", "nemo_rl.environments.grading.ExactVerifyWorker", None,
         "PY_EXECUTABLES.SYSTEM"),
        ("GradingEnvironment", "nemo_rl.environments.grading.FuzzyVerifyWorker", None,
         "PY_EXECUTABLES.SYSTEM")]
    lines = [line.split() for line in out.splitlines() if "VerifyWorker" in line]
    assert [(words[0], words[3], words[4], words[5]) for words in lines] == [
        ("GradingEnvironment", "nemo_rl.environments.grading.ExactVerifyWorker",
         "PY_EXECUTABLES.SYSTEM", "(py_executable)"),
        ("GradingEnvironment", "nemo_rl.environments.grading.FuzzyVerifyWorker",
         "PY_EXECUTABLES.SYSTEM", "(py_executable)")]
    assert "unregistered" not in " ".join(" ".join(words) for words in lines)


def test_an_environment_computed_at_run_time_is_not_a_py_executable(tmp_path: Path) -> None:
    """A `py_executable` the caller passes in is the registry's or the caller's: unknown
    here, so the class stays unregistered."""
    computed = ENVIRONMENTS.replace(
        "    def __init__(self, cfg):\n",
        "    def __init__(self, cfg, python_env=None):\n").replace(
        '{"py_executable": PY_EXECUTABLES.SYSTEM}', '{"py_executable": python_env}')
    root = write(tmp_path, {**OLD_FILES, "nemo_rl/environments/__init__.py": "",
                            "nemo_rl/environments/grading.py": computed})
    _, out, listing = _list(root)
    assert {r["py_executable"] for r in listing["rows"] if "environments" in r["default"]} \
        == {None}
    assert all("unregistered" in line for line in out.splitlines() if "VerifyWorker" in line)
