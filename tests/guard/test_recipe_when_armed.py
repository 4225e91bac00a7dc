"""The recipe check wherever the guard is armed (issue 44, item 4): under
`NEMO_RL_WORKERS_GUARD=1`, `python SCRIPT --config FILE [key=value ...]` gets `check`'s
verdicts on the recipe when the program imports upstream's worker groups, before anything
of them exists, once, with the script as the entry; as `nemo-rl-workers run` gives them.

The tree is written here: a NeMo-RL-shaped `nemo_rl` whose `Policy` asserts on the config
before it builds its `RayWorkerGroup` (which says when it is made), an algorithm's `setup`,
and `examples/run_grpo.py` shaped as the corpus's (the algorithm imported at its top,
`argparse.parse_known_args`, the config loaded, overrides applied, `setup`). Each run is a
fresh interpreter of this environment, armed by the `.pth` start-up line; the tool comes
from this checkout. No Ray: the tree's worker group is plain Python.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from nemo_rl_workers.guard import PREFLIGHT_ENV
from nemo_rl_workers.guard.recipe_check import Launch, launch_key, main_launch, mode
from tests.conftest import REPO_ROOT
from tests.guard.upstream import CLI, TREE
from tests.revision.trees import write

RAN = "PROGRAM RAN"
STARTED = "WORKER GROUP STARTED"
HEADER = "NeMo-RL: "  # the first line of every `check` report

WORKER_GROUPS = '''
class RayWorkerBuilder:
    def __init__(self, ray_actor_class_fqn, *args, **kwargs):
        self.ray_actor_class_fqn = ray_actor_class_fqn


class RayWorkerGroup:
    def __init__(self, cluster, remote_worker_builder, name_prefix=""):
        print(f"WORKER GROUP STARTED {remote_worker_builder.ray_actor_class_fqn}", flush=True)
        self.workers = []

    def run_all_workers_single_data(self, method_name, *args, **kwargs):
        return []
'''

POLICY = '''
from nemo_rl.distributed.worker_groups import RayWorkerBuilder, RayWorkerGroup


class Policy:
    def __init__(self, cluster, config):
        fqn = "nemo_rl.models.policy.workers.dtensor.DTensorPolicyWorker"
        shards = config["dtensor_cfg"]["tensor_parallel_size"] * 2
        assert config["train_micro_batch_size"] % shards == 0, (
            f"train_micro_batch_size must divide by {shards} shards"
        )
        self.worker_group = RayWorkerGroup(cluster, RayWorkerBuilder(fqn, config))

    def train(self, data):
        return self.worker_group.run_all_workers_single_data("train", data=data)
'''

ALGORITHM = '''
from typing import TypedDict

from nemo_rl.models.policy.lm_policy import Policy


class PolicyConfig(TypedDict):
    train_micro_batch_size: int


class GRPOConfig(TypedDict):
    num_steps: int


class MasterConfig(TypedDict):
    policy: PolicyConfig
    grpo: GRPOConfig


def setup(master_config: MasterConfig):
    return Policy(None, master_config["policy"])
'''

# The corpus's examples/run_grpo.py, cut to its shape.
ENTRY = '''
import argparse
import os
import subprocess
import sys

import yaml

from nemo_rl.algorithms.grpo import MasterConfig, setup


def parse_args():
    parser = argparse.ArgumentParser(description="Run GRPO training with configuration")
    parser.add_argument("--config", type=str, default=None, help="Path to YAML config file")
    args, overrides = parser.parse_known_args()
    return args, overrides


def main():
    args, overrides = parse_args()
    with open(args.config) as f:
        config = yaml.safe_load(f)
    for override in overrides:
        key, _, value = override.partition("=")
        *parents, last = key.split(".")
        node = config
        for parent in parents:
            node = node[parent]
        node[last] = yaml.safe_load(value)
    print("PROGRAM RAN", flush=True)
    if os.environ.get("RESPAWN") and not os.environ.get("IS_CHILD"):
        # The program starts itself again with the same arguments (a re-exec, a launcher).
        subprocess.run([sys.executable, *sys.argv], env={**os.environ, "IS_CHILD": "1"},
                       check=True)
    setup(MasterConfig(**config))


if __name__ == "__main__":
    main()
'''

# Ray's default_worker.py: a script, its arguments, no --config; it imports the tree.
WORKER_LIKE = '''
import json
import sys

import nemo_rl.distributed.worker_groups

print(json.dumps(sorted(m for m in sys.modules if m.startswith("nemo_rl_workers."))))
'''

# A fault injected on purpose: the check itself fails (a bug of the tool).
INJECTED = '''
import runpy
import sys

import nemo_rl_workers.findings.check_output as reports


def _injected_check_bug(*args, **kwargs):
    raise RuntimeError("recipe check bug injected on purpose by the test")


reports.check_recipe = _injected_check_bug
sys.argv[0] = "examples/run_grpo.py"
runpy.run_path(sys.argv[0], run_name="__main__")
'''

CONFIG = """\
policy:
  model_name: tiny
  train_micro_batch_size: 8
  dtensor_cfg:
    enabled: true
    tensor_parallel_size: 2
grpo:
  num_steps: 1
"""
OK = "examples/configs/grpo_fork.yaml"
BAD = "examples/configs/grpo_fork_bad.yaml"
PROBLEM = (
    f"  problem: {BAD}:3: policy.train_micro_batch_size: this NeMo-RL refuses the config "
    "before any worker starts: assert config['train_micro_batch_size'] % shards == 0 fails "
    "(policy.train_micro_batch_size=6, policy.dtensor_cfg.tensor_parallel_size=2) at "
    "nemo_rl/models/policy/lm_policy.py:9 (Policy.__init__): \"train_micro_batch_size must "
    "divide by 4 shards\"")
REFUSED = (
    f"nemo-rl-workers guard: {BAD}: the recipe has problems (above); the program was "
    "stopped before any worker group was made (NEMO_RL_WORKERS_GUARD_PREFLIGHT=warn: go on "
    "anyway; NEMO_RL_WORKERS_GUARD_PREFLIGHT=off: skip the check)")


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write(tmp_path_factory.mktemp("fork"), {
        "nemo_rl/__init__.py": "",
        "nemo_rl/distributed/__init__.py": "",
        "nemo_rl/distributed/worker_groups.py": WORKER_GROUPS,
        "nemo_rl/models/__init__.py": "",
        "nemo_rl/models/policy/__init__.py": "",
        "nemo_rl/models/policy/lm_policy.py": POLICY,
        "nemo_rl/models/policy/workers/__init__.py": "",
        "nemo_rl/models/policy/workers/dtensor.py":
            "class DTensorPolicyWorker:\n    def train(self, data): ...\n",
        "nemo_rl/algorithms/__init__.py": "",
        "nemo_rl/algorithms/grpo.py": ALGORITHM,
        "examples/run_grpo.py": ENTRY,
        "examples/run_grpo_injected.py": INJECTED,
        "ray_worker_like.py": WORKER_LIKE,
        OK: CONFIG,
        BAD: CONFIG.replace("train_micro_batch_size: 8", "train_micro_batch_size: 6"),
    })
    return root


def _run(tree: Path, command: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    """`command` in the tree's folder, `nemo_rl` the tree's (as an installed NeMo-RL is),
    the tool this checkout's; armed unless `env` says otherwise."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("NEMO_RL_WORKERS_GUARD")}
    full = {**base, "PYTHONPATH": os.pathsep.join([str(tree), REPO_ROOT]),
            "PYTHONDONTWRITEBYTECODE": "1", "NO_COLOR": "1", "NEMO_RL_WORKERS_GUARD": "1",
            **env}
    return subprocess.run(command, capture_output=True, text=True, cwd=tree, env=full,
                          timeout=120, check=False)


def _python(tree: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return _run(tree, [sys.executable, "examples/run_grpo.py", *args], **env)


def test_a_recipe_with_problems_stops_the_program_before_any_worker_group(tree: Path) -> None:
    done = _python(tree, "--config", BAD)
    assert done.returncode == 1
    assert done.stdout.startswith(f"{HEADER}. ")
    assert PROBLEM in done.stdout.splitlines()
    assert done.stderr.strip().splitlines() == [REFUSED]  # no traceback
    assert RAN not in done.stdout and STARTED not in done.stdout


def test_a_module_run_with_dash_m_is_checked_too(tree: Path) -> None:
    """`python -m MODULE`: argv[0] is the module's file, which `__main__` runs."""
    done = _run(tree, [sys.executable, "-m", "run_grpo", "--config", BAD],
                PYTHONPATH=os.pathsep.join([str(tree / "examples"), str(tree), REPO_ROOT]))
    assert done.returncode == 1
    assert PROBLEM in done.stdout.splitlines()
    assert RAN not in done.stdout and STARTED not in done.stdout


def test_the_overrides_are_judged_too(tree: Path) -> None:
    refused = _python(tree, "--config", OK, "policy.train_micro_batch_size=6")
    assert refused.returncode == 1
    assert "(policy.train_micro_batch_size=6, " in refused.stdout
    assert STARTED not in refused.stdout
    fixed = _python(tree, f"--config={BAD}", "policy.train_micro_batch_size=12")
    assert fixed.returncode == 0, fixed.stderr


def test_a_clean_recipe_runs_the_program(tree: Path) -> None:
    done = _python(tree, "--config", OK)
    assert (done.returncode, done.stderr) == (0, "")
    lines = done.stdout.splitlines()
    assert [line for line in lines if line.startswith(HEADER)] == [
        f"{HEADER}. (undecided schema; the config's checkout)"]
    assert lines[-3:] == ["  ok", RAN, f"{STARTED} nemo_rl.models.policy.workers.dtensor."
                                         "DTensorPolicyWorker"]


def test_warn_goes_on_and_off_does_not_check(tree: Path) -> None:
    """The tree's own assertion then refuses it, in the program, as unguarded."""
    warned = _python(tree, "--config", BAD, **{PREFLIGHT_ENV: "warn"})
    assert PROBLEM in warned.stdout.splitlines() and RAN in warned.stdout
    assert warned.stderr.startswith(
        f"nemo-rl-workers guard: {BAD}: the recipe has problems (above); the program goes on "
        "(NEMO_RL_WORKERS_GUARD_PREFLIGHT=warn)\nTraceback")
    assert warned.stderr.rstrip().endswith(
        "AssertionError: train_micro_batch_size must divide by 4 shards")
    off = _python(tree, "--config", BAD, **{PREFLIGHT_ENV: "off"})
    assert off.stdout == f"{RAN}\n"
    assert off.returncode == warned.returncode == 1
    assert "nemo-rl-workers guard" not in off.stderr


def test_unarmed_nothing_is_checked(tree: Path) -> None:
    done = _python(tree, "--config", BAD, NEMO_RL_WORKERS_GUARD="0")
    assert done.stdout == f"{RAN}\n" and "AssertionError" in done.stderr


def test_a_worker_like_process_pays_nothing(tree: Path) -> None:
    """Ray's workers run a script with arguments of their own, armed (the driver's
    environment): no check, and nothing of the tool's checks is imported."""
    done = _run(tree, [sys.executable, "ray_worker_like.py", "--node-ip-address=127.0.0.1",
                       "--object-store-name=/tmp/store", "--startup-token=0"])
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    loaded: list[str] = json.loads(done.stdout)
    assert "nemo_rl_workers.guard.recipe_check" in loaded
    assert not [m for m in loaded if m.startswith(("nemo_rl_workers.checks",
                                                   "nemo_rl_workers.commands"))]


def test_a_process_started_with_the_same_arguments_is_not_checked_again(tree: Path) -> None:
    done = _python(tree, "--config", OK, RESPAWN="1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count(HEADER) == 1
    assert done.stdout.count(RAN) == done.stdout.count(STARTED) == 2


def test_under_run_the_recipe_is_checked_once(tree: Path) -> None:
    ran = _run(tree, [CLI, "run", "examples/run_grpo.py", "--config", OK],
               NEMO_RL_WORKERS_GUARD="0")
    assert (ran.returncode, ran.stderr) == (0, "")
    assert ran.stdout.count(HEADER) == 1 and ran.stdout.count(STARTED) == 1
    refused = _run(tree, [CLI, "run", "examples/run_grpo.py", "--config", BAD])
    assert refused.returncode == 1 and refused.stdout.count(HEADER) == 1
    assert refused.stderr.startswith(f"nemo-rl-workers run: {BAD}: the recipe has problems")
    warned = _run(tree, [CLI, "run", "--warn", "examples/run_grpo.py", "--config", BAD])
    assert warned.stdout.count(HEADER) == 1 and RAN in warned.stdout
    assert "nemo-rl-workers guard" not in warned.stderr
    skipped = _run(tree, [CLI, "run", "examples/run_grpo.py", "--config", BAD],
                   **{PREFLIGHT_ENV: "off"})  # run honours the knob without a flag
    assert skipped.stdout == f"{RAN}\n"


def test_a_failing_check_fails_open_and_strict_refuses(tree: Path) -> None:
    bug = "RuntimeError: recipe check bug injected on purpose by the test"
    done = _run(tree, [sys.executable, "examples/run_grpo_injected.py", "--config", OK])
    assert done.returncode == 0
    assert done.stderr == (f"nemo-rl-workers guard: cannot check the recipe {OK} ({bug}); "
                           "the program goes on unchecked\n")
    assert done.stdout.splitlines()[0] == RAN
    strict = _run(tree, [sys.executable, "examples/run_grpo_injected.py", "--config", OK],
                  NEMO_RL_WORKERS_GUARD_STRICT="1")
    assert strict.returncode == 1 and strict.stdout == ""
    assert strict.stderr.rstrip().splitlines()[-1] == (
        "nemo_rl_workers.guard.fail_open.GuardUnavailable: nemo-rl-workers guard: cannot "
        f"check the recipe {OK} ({bug}); refused under --strict")


@pytest.mark.slow
@pytest.mark.skipif(not TREE.is_dir(), reason="the shared corpus is absent")
def test_upstream_s_worker_groups_import_checks_an_upstream_recipe(tmp_path: Path) -> None:
    """The corpus's own `nemo_rl.distributed.worker_groups` (ray, torch), imported by a
    user's driver given upstream's recipe with an override that enables Megatron beside
    DTensor: judged against the corpus tree, the program stopped at the import."""
    from tests.guard.upstream import run_upstream

    driver = tmp_path / "train.py"
    driver.write_text("import nemo_rl.distributed.worker_groups\nprint('PROGRAM RAN')\n")
    config = str(TREE / "examples" / "configs" / "grpo_math_1B.yaml")
    done = run_upstream([sys.executable, str(driver), "--config", config,
                         "policy.megatron_cfg.enabled=true"], env={"NEMO_RL_WORKERS_GUARD": "1"})
    assert done.returncode == 1
    assert done.stdout.startswith(f"NeMo-RL: {TREE}, version 0.6.0 ")
    assert ("policy: Megatron and Automodel are both enabled; set exactly one of "
            "policy.megatron_cfg.enabled or policy.dtensor_cfg.enabled to true.") in done.stdout
    assert RAN not in done.stdout
    assert done.stderr.strip().splitlines()[-1].startswith(f"nemo-rl-workers guard: {config}: ")


# Which process is the main program, in this process (no subprocess): the rules alone.
def _main(file: str | None, name: str = "__main__") -> types.ModuleType:
    module = types.ModuleType(name)
    if file is not None:
        module.__file__ = file
    return module


@pytest.mark.parametrize(("argv", "main", "found"), [
    (["train.py", "--config", "a.yaml", "x=1", "--seed", "3"], _main("train.py"),
     Launch("train.py", "a.yaml", ("x=1",))),
    (["/abs/pkg/train.py", "--config=a.yaml"], _main("/abs/pkg/train.py"),  # -m pkg.train
     Launch("/abs/pkg/train.py", "a.yaml", ())),
    (["train.py", "x=1"], _main("train.py"), None),  # no --config: a Ray worker's case
    (["-c", "--config", "a.yaml"], _main(None), None),
    (["", "--config", "a.yaml"], _main(None), None),  # the REPL
    (["train.py", "--config", "a.yaml"], _main("train.py", "__mp_main__"), None),
    (["other.py", "--config", "a.yaml"], _main("train.py"), None),  # argv not __main__'s
    ([], _main("train.py"), None),
])
def test_the_main_program_and_its_recipe(argv: list[str], main: types.ModuleType,
                                         found: Launch | None) -> None:
    assert main_launch(argv, main) == found


def test_the_marker_is_the_launch_s_arguments() -> None:
    assert launch_key(["--config", "a.yaml"]) == launch_key(["--config", "a.yaml"])
    assert launch_key(["--config", "a.yaml"]) != launch_key(["--config", "b.yaml"])
    assert launch_key(["--config", "a\udcff.yaml", "\ud800"])  # undecodable bytes, lone surrogates


def test_the_knob(capsys: pytest.CaptureFixture[str]) -> None:
    assert [mode({PREFLIGHT_ENV: v}) for v in ("warn", "OFF", "check", "")] == [
        "warn", "off", "check", "check"]
    assert mode({}) == "check"
    assert capsys.readouterr().err == ""
    assert mode({PREFLIGHT_ENV: "maybe"}) == "check"
    assert capsys.readouterr().err == (
        "nemo-rl-workers guard: NEMO_RL_WORKERS_GUARD_PREFLIGHT='maybe' is not one of check, "
        "warn, off; the recipe is checked\n")
