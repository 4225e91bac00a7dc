"""An extension is judged by what is true of its base: the guard's judgement of a user's
vLLM workers over the 2026-08 corpus tree's own (read as data, nothing of it imported).

The tree's sync `VllmGenerationWorker` has no `load_model` (only the async worker has;
only `VllmGeneration.load_and_start`, NeMo-Gym's deferred start, calls it), and its async
one no `generate`. A subclass of either's undecorated class, in a package outside the
tree, is asked for what its base has, never for what it lacks: not by the source side
(`missing_calls`), not in the workers' interpreter (`not_asked`). A subclass that breaks
or hides a method its base has is refused, in a sentence naming what is missing and where
the driver calls it. `audit` holds them to the same (the tree's own gap stays the tree's
finding). Skipped where the corpus is absent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nemo_rl_workers.guard import driver_calls, hooks, judgement, worker_check
from nemo_rl_workers.guard.class_model import class_model
from tests.cli_run import run_cli
from tests.guard.upstream import TREE

pytestmark = pytest.mark.skipif(not TREE.is_dir(), reason="the shared corpus is absent")

OWN = str(TREE / "nemo_rl")
VLLM = TREE / "nemo_rl" / "models" / "generation" / "vllm"
GENERATION = driver_calls.DriverFrame("VllmGeneration", "(constructed)")
PACKAGE = "tagged_vllm"
WORKERS = '''\
import ray

from nemo_rl.models.generation.vllm.vllm_worker import VllmGenerationWorkerImpl
from nemo_rl.models.generation.vllm.vllm_worker_async import VllmAsyncGenerationWorkerImpl


@ray.remote(num_cpus=0)
class TaggedWorker(VllmGenerationWorkerImpl):
    def report_tag(self) -> str:
        return "tagged"


@ray.remote(num_cpus=0)
class TaggedAsyncWorker(VllmAsyncGenerationWorkerImpl):
    def report_tag(self) -> str:
        return "tagged"


@ray.remote(num_cpus=0)
class DatalessWorker(VllmGenerationWorkerImpl):
    def generate(self):
        return None


@ray.remote(num_cpus=0)
class GenerateHidingWorker(VllmGenerationWorkerImpl):
    generate = None
'''

# Where the workers run, as a user registers them (audit holds an unregistered one to it).
REGISTRATION = """\
from nemo_rl.distributed.ray_actor_environment_registry import ACTOR_ENVIRONMENT_REGISTRY
from nemo_rl.distributed.virtual_cluster import PY_EXECUTABLES

""" + "".join(f'ACTOR_ENVIRONMENT_REGISTRY["{PACKAGE}.workers.{name}"] = PY_EXECUTABLES.VLLM\n'
              for name in ("TaggedWorker", "TaggedAsyncWorker", "DatalessWorker",
                           "GenerateHidingWorker"))


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The user's extension package, in a folder of its own outside the tree."""
    root = tmp_path_factory.mktemp("extension")
    (root / PACKAGE).mkdir()
    (root / PACKAGE / "__init__.py").write_text("")
    (root / PACKAGE / "workers.py").write_text(WORKERS)
    (root / PACKAGE / "registration.py").write_text(REGISTRATION)
    return root


@pytest.fixture
def on_path(package: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(package))
    return package


def _mro(fqn: str) -> list[str]:
    """The class's MRO as its source on the driver's path gives it (the live class's, in
    the workers' interpreter, is the same: its module imports these bases)."""
    model = class_model(fqn, str(TREE))
    info = model.info(fqn)
    assert info is not None
    return [c.fqn for c in model.resolver.mro(info).classes]


def _asked(fqn: str) -> set[str]:
    """What the workers' interpreter asks the class for: the driver's unconditional calls,
    less what the tree's own worker it extends fails itself."""
    skipped = worker_check.not_asked(_mro(fqn), driver_calls.bases_for(GENERATION, OWN))
    return {method for method, _, _ in driver_calls.calls_of(GENERATION, OWN)} - skipped


def test_a_sync_extension_is_not_asked_for_what_only_the_async_worker_has(on_path: Path) -> None:
    fqn = f"{PACKAGE}.workers.TaggedWorker"
    assert {m for m, _, _ in driver_calls.calls_of(GENERATION, OWN)} >= {"load_model",
                                                                         "generate"}
    extended = worker_check.stands_for(_mro(fqn), driver_calls.bases_for(GENERATION, OWN))
    assert {base[0].rpartition(".")[2] for base in extended} == {
        "VllmGenerationWorker", "VllmQuantGenerationWorker"}
    asked = _asked(fqn)
    assert "load_model" not in asked  # its base lacks it: the tree's own audit finding
    assert "generate" in asked  # its base has it
    assert driver_calls.missing_calls(fqn, GENERATION, OWN) == []


def test_an_async_extension_is_asked_for_its_bases_load_model(on_path: Path) -> None:
    asked = _asked(f"{PACKAGE}.workers.TaggedAsyncWorker")
    assert "load_model" in asked and "generate" not in asked
    assert driver_calls.missing_calls(f"{PACKAGE}.workers.TaggedAsyncWorker", GENERATION,
                                      OWN) == []


def test_an_extension_breaking_its_bases_method_is_refused_for_it(on_path: Path) -> None:
    fqn = f"{PACKAGE}.workers.DatalessWorker"
    found = driver_calls.missing_calls(fqn, GENERATION, OWN)
    assert {(f.rule, f.method) for f in found} == {("unknown-keyword", "generate")}
    assert driver_calls.sentence_of(found, GENERATION) == (
        "cannot serve what the driver VllmGeneration calls on its workers (1 method(s): "
        f"generate ({VLLM / 'vllm_generation.py'}:663); audit rule(s) unknown-keyword)")


def test_a_method_missing_there_and_in_its_source_names_the_real_cause(on_path: Path) -> None:
    """`generate = None` hides its base's `generate`: the workers' interpreter finds no
    method; the sentence says what hides it and where the driver calls it, not that the
    module should be made importable."""
    fqn = f"{PACKAGE}.workers.GenerateHidingWorker"
    answer = (worker_check.METHOD_RULE, "has no method generate in the workers' interpreter "
              "(python) (it is a NoneType there)", "generate")
    verdict = hooks.method_verdict(fqn, GENERATION, OWN, answer)
    assert verdict == judgement.Verdict(
        driver_calls.RULE,
        "has no method generate, which the driver VllmGeneration calls on its workers at "
        f"{VLLM / 'vllm_generation.py'}:663 (VllmGeneration.generate): {fqn} binds generate "
        f"to a value that is not a method ({on_path / PACKAGE / 'workers.py'}:26), hiding "
        "nemo_rl.models.generation.vllm.vllm_worker.VllmGenerationWorkerImpl.generate "
        f"({VLLM / 'vllm_worker.py'}:850)",
        "do not bind generate in GenerateHidingWorker, or make it a method that takes the "
        "driver's call")


def test_missing_in_the_workers_interpreter_only_where_its_source_has_it(on_path: Path) -> None:
    """The driver's view has `generate` (its base defines it): only then is the workers'
    interpreter said to lack it, with the import fix."""
    fqn = f"{PACKAGE}.workers.TaggedWorker"
    line = "has no method generate in the workers' interpreter (python)"
    verdict = hooks.method_verdict(fqn, GENERATION, OWN,
                                    (worker_check.METHOD_RULE, line, "generate"))
    assert verdict.rule == worker_check.METHOD_RULE
    assert verdict.what == (
        f"{line}, though its source on the driver's path defines it "
        f"({VLLM / 'vllm_worker.py'}:850): the workers import another version of the class "
        "or its bases")
    assert verdict.fix.startswith("make the workers' interpreter import the same code")


def _audit(package: Path, *extensions: str) -> dict[str, Any]:
    out = run_cli("audit", "--nemo-rl", str(TREE), "--json", "--no-cache", "--path",
                  str(package), *(f"{PACKAGE}.workers.{name}" for name in extensions)).out
    report: dict[str, Any] = json.loads(out)
    return report


def test_audit_holds_an_extension_to_its_base(package: Path) -> None:
    """`audit` with the extensions: the correct ones have no finding of their own (the
    sync worker's missing `load_model` stays the tree's finding, on the tree's classes);
    the ones that break or hide their base's `generate` have theirs."""
    report = _audit(package, "TaggedWorker", "TaggedAsyncWorker", "DatalessWorker",
                    "GenerateHidingWorker")
    theirs = {(f["worker"].rpartition(".")[2], f["rule"], f["method"])
              for f in report["findings"] if f["worker"].startswith(f"{PACKAGE}.")}
    assert theirs == {
        ("DatalessWorker", "override-unknown-keyword", "generate"),
        ("GenerateHidingWorker", "override-not-a-method", "generate"),
    }
    [load] = [f for f in report["findings"]
              if f["method"] == "load_model" and f["rule"] == "missing-method"]
    assert {w.rpartition(".")[2] for w in load["workers"]} == {
        "VllmGenerationWorker", "VllmQuantGenerationWorker"}
    hiding = next(f for f in report["findings"] if f["rule"] == "override-not-a-method")
    assert hiding["message"] == (
        "VllmGeneration.generate calls generate on its workers, but "
        f"{PACKAGE}.workers.GenerateHidingWorker binds generate to None, hiding "
        "nemo_rl.models.generation.vllm.vllm_worker.VllmGenerationWorkerImpl.generate: Ray "
        "finds no method generate on its workers")
    roles = {e["class"].rpartition(".")[2]: e["stands_for"].rpartition(".")[2]
             for e in report["extensions"]}
    assert roles["TaggedWorker"] == "VllmGenerationWorker"
    assert roles["TaggedAsyncWorker"] == "VllmAsyncGenerationWorker"


def test_the_revisions_protocols_ask_what_each_worker_has() -> None:
    """What `verify --protocol` (with `audit --emit-protocols`' module) and the workers'
    interpreter judge an extension by: the sync worker's Protocol has no `load_model`, the
    async worker's has. (The guard keeps each Protocol's code, not the emitted module's
    comments.)"""
    from nemo_rl_workers.guard.driver_model import driver_model

    protocols = driver_model(str(TREE)).protocols
    sync, async_ = (protocols["VllmGenerationWorkerProtocol"],
                    protocols["VllmAsyncGenerationWorkerProtocol"])
    assert "def load_model" not in sync and "def generate(" in sync
    assert "def load_model(self) -> None:" in async_
