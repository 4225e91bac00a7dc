"""The runtime guard on upstream's own worker groups (the 2026-08 corpus), on CPU.

Upstream's `RayVirtualCluster`/`RayWorkerBuilder`/`RayWorkerGroup` run in a subprocess
(`upstream.run_upstream`: the corpus first on its PYTHONPATH, its own 2-CPU Ray cluster)
under `nemo-rl-workers run`, under `NEMO_RL_WORKERS_GUARD=1` and unguarded. What is
asserted is what the user sees: the sentence, the exit status, the notes, and what Ray's
control store recorded during each scenario (every state: DEAD actors and REMOVED
placement groups count).

Skipped where the shared corpus is absent.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from nemo_rl_workers.tree.source.reading import MAX_SOURCE_BYTES
from tests.guard.upstream import CLI, SCRIPT, TREE, Run, run_upstream

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not TREE.is_dir(), reason="the shared corpus is absent"),
]

REFUSED = ("undefined", "undecorated", "subclass", "unregistered")  # run before the rest
STARTED = ["EchoWorker DEAD", "EchoWorker DEAD", "RayWorkerBuilder.IsolatedWorkerInitializer DEAD",
           "placement group REMOVED"]


def _latin1_module(folder: Path) -> Path:
    """A good actor class in a latin-1 file (its coding cookie declares it, so Python and
    the guard's reader both read it) padded past the source cap: Python imports it, the
    guard's source reader refuses it (a tree the model cannot read)."""
    folder.mkdir(parents=True, exist_ok=True)
    text = ("# -*- coding: latin-1 -*-\n"
            '"""caf\xe9"""\nimport ray\n\n\n@ray.remote(num_cpus=0)\nclass Latin1Worker:\n'
            "    def echo(self, value: int) -> int:\n        return value\n")
    padding = "#" * 1023 + "\n"
    text += padding * (MAX_SOURCE_BYTES // len(padding) + 1)
    (folder / "guard_latin1_worker.py").write_bytes(text.encode("latin-1"))
    return folder


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Run:
    extra = _latin1_module(tmp_path_factory.mktemp("latin1"))
    return run_upstream(
        [CLI, "run", str(SCRIPT), "good", "boom", "missing", *REFUSED, "import-fails",
         "pg-first", "override-unfit", "vllm-clash", "latin1", "injected-bug"],
        extra_path=(extra,))


@pytest.fixture(scope="module")
def unguarded() -> Run:
    return run_upstream([sys.executable, str(SCRIPT), "good", "undefined", "unregistered"])


def test_a_good_class_starts_its_workers(guarded: Run) -> None:
    good = guarded.scenarios["good"]
    assert good["results"] == [[0, 7], [1, 7]]
    assert good["ray"] == STARTED
    assert good["armed"] == [True, True]  # the workers got the launcher's variable


@pytest.mark.parametrize(("scenario", "words"), [
    ("undefined", "guard_workers.NoSuchWorker is not defined where its FQN says: "),
    ("undecorated", "guard_workers.PlainWorker is not an actor class: "),
    ("subclass", "guard_subclass_worker.LouderWorker subclasses the actor class EchoWorker ("),
    ("unregistered", "guard_workers.EchoWorker has no actor environment registered"),
    # Checked in the workers' own interpreter (one Ray task, no actor): its import fails.
    ("import-fails", "guard_broken_worker.BrokenWorker cannot be imported in the workers' "
                     f"interpreter ({sys.executable}): ModuleNotFoundError: No module named "
                     "'guard_no_such_dependency' (rule worker-interpreter)"),
    # Its own code against upstream's (the audit's rules, from source: nothing imported).
    ("override-unfit", "guard_vllm_workers.NoKwargsEngineWorker has code that does not fit "
                       "what its NeMo-RL bases call or define: "
                       "BaseVllmGenerationWorker._load_model calls self._create_engine(...) "
                       "with 1 positional arguments, but the override "
                       "guard_vllm_workers.NoKwargsEngineWorker._create_engine takes 0 ("),
    ("vllm-clash", "guard_vllm_workers.OwnExtensionWorker hands vLLM the worker extension "
                   "guard_vllm_workers.ClashingExtension ("),
])
def test_a_bad_class_is_refused_before_anything_exists(guarded: Run, scenario: str,
                                                       words: str) -> None:
    found = guarded.scenarios[scenario]
    refused = found["refused"]
    assert refused["type"] == "WorkerContractError"
    text = refused["text"]
    assert text.startswith(f"nemo-rl-workers guard: refused RayWorkerGroup 'guard-{scenario}' "
                           f"at {SCRIPT}:")
    assert "before any placement group or actor of it exists: " in text
    assert words in text
    assert "; fix: " in text and text.endswith(".") and "\n" not in text
    assert found["ray"] == []  # no placement group, no actor, in any state
    assert text in guarded.stderr  # the sentence the user reads
    assert guarded.returncode == 1


def test_a_refusal_after_the_clusters_placement_groups_says_so(guarded: Run) -> None:
    found = guarded.scenarios["pg-first"]
    assert ("before any actor of it exists (the cluster's 1 placement group(s) existed "
            "already): guard_workers.PlainWorker is not an actor class") in found["refused"]["text"]
    assert found["ray"] == ["placement group REMOVED"]  # the script's own, no actor


def test_unguarded_upstream_makes_them_first(unguarded: Run) -> None:
    """What the guard saves: without it, upstream reserves a placement group (and starts
    an initializer actor for an undefined class) before failing; its good run is the
    guarded one's."""
    runs = unguarded.scenarios
    assert runs["good"]["results"] == [[0, 7], [1, 7]]
    assert runs["good"]["ray"] == STARTED
    assert runs["good"]["armed"] == [False, False]
    assert "placement group REMOVED" in runs["undefined"]["ray"]
    assert "RayWorkerBuilder.IsolatedWorkerInitializer DEAD" in runs["undefined"]["ray"]
    assert runs["unregistered"]["ray"] == ["placement group REMOVED"]
    assert unguarded.guard_lines() == []


def test_the_variable_arms_it_in_any_interpreter() -> None:
    run = run_upstream([sys.executable, str(SCRIPT), "undecorated"],
                       env={"NEMO_RL_WORKERS_GUARD": "1"})
    assert run.scenarios["undecorated"]["refused"]["type"] == "WorkerContractError"
    assert run.scenarios["undecorated"]["ray"] == []


def test_a_failed_call_gains_one_note_and_keeps_its_type(guarded: Run) -> None:
    boom = guarded.scenarios["boom"]
    for way in ("ray_get", "get_all_worker_results"):
        assert boom[way]["type"] == "RayTaskError(ValueError)"  # caught as ValueError
        [note] = boom[way]["notes"]
        assert note.startswith("nemo-rl-workers guard: worker call boom failed on rank 1 "
                               "of 2 of worker group 'guard-boom' (class "
                               "guard_workers.EchoWorker, node ")
        assert note.endswith("): ValueError: boom on rank 1")
        assert ", pid " in note


def test_a_method_no_worker_has_says_so(guarded: Run) -> None:
    missing = guarded.scenarios["missing"]["missing"]
    assert missing["type"] == "AttributeError"
    assert missing["notes"] == [
        "nemo-rl-workers guard: run_all_workers_single_data('no_such_method') of worker group "
        "'guard-missing': no worker ran it; the actors of class guard_workers.EchoWorker have "
        "no method no_such_method (check the name, or add the method to the class)"]


def test_it_fails_open_with_one_line(guarded: Run) -> None:
    """A tree the model cannot read, and a guard bug injected on purpose: one line each,
    and the run goes on as unguarded."""
    assert guarded.scenarios["latin1"]["results"] == [7, 7]
    assert guarded.scenarios["injected-bug"]["results"] == [[0, 7], [1, 7]]
    lines = guarded.guard_lines()
    opened = [line for line in lines if line.endswith("; NeMo-RL runs unguarded")]
    assert len(opened) == 2, lines
    assert opened[0].startswith("nemo-rl-workers guard: could not judge "
                                "guard_latin1_worker.Latin1Worker (Unreadable: cannot read "
                                "the source of guard_latin1_worker: ")
    assert opened[1] == ("nemo-rl-workers guard: could not judge guard_workers.EchoWorker "
                         "(RuntimeError: guard bug injected on purpose by the test); NeMo-RL "
                         "runs unguarded")


def test_strict_makes_a_guard_failure_a_refusal() -> None:
    run = run_upstream([CLI, "run", "--strict", str(SCRIPT), "injected-bug"])
    refused = run.scenarios["injected-bug"]["refused"]
    assert refused["type"] == "GuardUnavailable"
    assert refused["text"] == (
        "nemo-rl-workers guard: could not judge guard_workers.EchoWorker (RuntimeError: guard "
        "bug injected on purpose by the test); refused under --strict")
    assert run.scenarios["injected-bug"]["ray"] == []
