"""A group constructed by a driver of the tree: the class is judged against what that
driver calls on its workers (the audit's verdicts), before anything exists.

The tree is a user's fork: a copy of the 2026-08 corpus's `nemo_rl` with one driver of its
own (`fork_echo_driver.py.txt` as `nemo_rl/models/echo/echo_driver.py`), which starts a
worker group and calls `echo` and `ping` on its workers by name. Upstream's own `Policy`
cannot be imported here (its DTensor v1 path needs pillow, pynvml, uvicorn, fastapi,
mlflow, swanlab, wandb, tensorboard, pyzmq, tensordict, datasets, accelerate, hydra-core
and transformers below 5.9, none of which this environment holds); a fork's driver is
read by the same audit model.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tests.guard.upstream import CLI, SCRIPT, TREE, Run, run_upstream

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not TREE.is_dir(), reason="the shared corpus is absent"),
]

DRIVER = Path(__file__).resolve().parent / "fork_echo_driver.py.txt"
# A driver shaped as upstream's VllmGeneration: its default worker lacks what only its
# deferred start calls.
LOADING_DRIVER = Path(__file__).resolve().parent / "fork_loading_driver.py.txt"


@pytest.fixture(scope="module")
def fork_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Run]:
    fork = tmp_path_factory.mktemp("fork")
    shutil.copytree(TREE / "nemo_rl", fork / "nemo_rl",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (fork / "nemo_rl" / "models" / "echo").mkdir()
    (fork / "nemo_rl" / "models" / "echo" / "__init__.py").write_text("")
    shutil.copy(DRIVER, fork / "nemo_rl" / "models" / "echo" / "echo_driver.py")
    shutil.copy(LOADING_DRIVER, fork / "nemo_rl" / "models" / "echo" / "loading_driver.py")
    run = run_upstream([CLI, "run", str(SCRIPT), "driver-missing", "driver-good", "driver-own",
                        "driver-typed", "loading-tagged", "loading-hides-echo"], tree=fork)
    return fork, run


def test_a_class_lacking_a_method_the_driver_calls_is_refused(
        fork_run: tuple[Path, Run]) -> None:
    fork, run = fork_run
    found = run.scenarios["driver-missing"]
    driver = fork / "nemo_rl" / "models" / "echo" / "echo_driver.py"
    assert found["refused"]["text"] == (
        f"nemo-rl-workers guard: refused RayWorkerGroup 'echo' at {driver}:24, before any "
        "placement group or actor of it exists: guard_workers.EchoWorker cannot serve what "
        f"the driver EchoDriver calls on its workers (1 method(s): ping ({driver}:32); audit "
        "rule(s) missing-method) (rule driver-calls); fix: give EchoWorker those methods "
        "with the signatures the driver calls (subclass the tree's own worker of "
        "EchoDriver, or add them); in CI, `nemo-rl-workers audit --nemo-rl TREE --path DIR "
        "guard_workers.EchoWorker` finds it.")
    assert found["ray"] == []


def test_a_class_serving_every_call_and_the_trees_own_start(fork_run: tuple[Path, Run]) -> None:
    _, run = fork_run
    for scenario in ("driver-good", "driver-own"):
        assert run.scenarios[scenario]["results"] == [[7, 7], ["pong", "pong"]]
    assert run.guard_lines() == []


def test_a_class_failing_the_revisions_protocol_is_refused_in_the_workers_interpreter(
        fork_run: tuple[Path, Run]) -> None:
    """Every call binds (the `inspect` check passes), but `echo` takes a str where the
    driver's default worker, and so the revision's Protocol, takes an int: contracts says
    so in the workers' interpreter, before any worker actor."""
    fork, run = fork_run
    found = run.scenarios["driver-typed"]
    driver = fork / "nemo_rl" / "models" / "echo" / "echo_driver.py"
    text = found["refused"]["text"]
    assert text.startswith(
        f"nemo-rl-workers guard: refused RayWorkerGroup 'echo' at {driver}:24, before any "
        "placement group or actor of it exists: guard_workers.StrEchoWorker fails the check "
        "against the revision's Protocol of what the driver EchoDriver calls, with contracts "
        f"in the workers' interpreter ({sys.executable}): guard_workers.StrEchoWorker does "
        "not implement EchoDefaultWorkerProtocol.echo: annotation: parameter 'value' is str, "
        "which does not accept the Protocol's int [")
    assert text.endswith(
        "(rule worker-protocol); fix: give StrEchoWorker the signatures of that Protocol "
        "(`nemo-rl-workers audit --nemo-rl TREE --emit-protocols OUT.py` writes it, for CI's "
        "type checkers).")
    assert "\n" not in text
    assert found["ray"] == []  # the probe is a task: no actor, no placement group


def test_an_extension_is_not_held_to_what_its_base_lacks(fork_run: tuple[Path, Run]) -> None:
    """The fork's default worker, and so its undecorated base the extension subclasses,
    has no `load`, which the driver calls only in its deferred start: the extension, which
    adds one method, starts; the workers' interpreter is not asked for `load` either."""
    _, run = fork_run
    found = run.scenarios["loading-tagged"]
    assert "refused" not in found, found["refused"]["text"]
    assert found["results"] == [[7, 7], ["tagged", "tagged"]]


def test_an_extension_hiding_what_its_base_has_is_refused_for_that(
        fork_run: tuple[Path, Run]) -> None:
    """`echo = None` hides its base's `echo`, which the driver calls: refused, in words that
    name what is missing and where the driver calls it, not an import to fix."""
    fork, run = fork_run
    driver = fork / "nemo_rl" / "models" / "echo" / "loading_driver.py"
    user = Path(__file__).resolve().parent / "user" / "guard_loading_workers.py"
    found = run.scenarios["loading-hides-echo"]
    assert found["refused"]["text"] == (
        f"nemo-rl-workers guard: refused RayWorkerGroup 'loading' at {driver}:28, before any "
        "placement group or actor of it exists: guard_loading_workers.EchoHidingWorker has "
        "no method echo, which the driver LoadingDriver calls on its workers at "
        f"{driver}:33 (LoadingDriver.echo): guard_loading_workers.EchoHidingWorker binds echo "
        f"to a value that is not a method ({user}:27), hiding "
        f"nemo_rl.models.echo.loading_driver.LoadingWorkerImpl.echo ({driver}:14) (rule "
        "driver-calls); fix: do not bind echo in EchoHidingWorker, or make it a method that "
        "takes the driver's call.")
    assert "importable" not in found["refused"]["text"]
    assert found["ray"] == []
