"""Issue 43's gaps, on a written tree: what `audit --path` says of an extension package
that the tree's driver could not start (not an actor class, registered with no actor
environment), and of a method the driver calls that the extension's whole MRO lacks.
Each as a pair (found, fixed clean), through the CLI as the user runs it."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from nemo_rl_workers.tree.knowledge import makes_actor
from tests.audit.tree import write_tree
from tests.audit_ext.test_extension_mode import audit_json, rules

# The tree's workers, as upstream's: an undecorated base, and @ray.remote workers on it
# that the driver starts by FQN (a sync one and an async one, chosen by a switch).
WORKERS = '''
import ray


class WorkerImpl:
    def train(self, data):
        return data

    def generate(self):
        return None


@ray.remote(num_gpus=1)
class SyncWorker(WorkerImpl):
    def generate(self, data):
        return data

    def sleep(self):
        return None


@ray.remote(num_gpus=1)
class AsyncWorker(WorkerImpl):
    async def generate_async(self, data):
        return data

    async def sleep_async(self):
        return None
'''

DRIVER = '''
def generate(self, data):
    if self.cfg["vllm_cfg"]["async_engine"]:
        self.worker_group.run_all_workers_single_data("sleep_async")
        return self.worker_group.run_all_workers_single_data("generate_async", data=data)
    else:
        self.worker_group.run_all_workers_single_data("sleep")
        return self.worker_group.run_all_workers_single_data("generate", data=data)

def train(self, data):
    return self.worker_group.run_all_workers_single_data("train", data=data)
'''

REGISTRY = {
    "nemo_rl/distributed/virtual_cluster.py": '''
class PY_EXECUTABLES:
    SYSTEM = "python"
    VLLM = "uv run --extra vllm"
''',
    "nemo_rl/distributed/ray_actor_environment_registry.py": '''
from nemo_rl.distributed.virtual_cluster import PY_EXECUTABLES

ACTOR_ENVIRONMENT_REGISTRY = {
    "nemo_rl.workers.SyncWorker": PY_EXECUTABLES.VLLM,
    "nemo_rl.workers.AsyncWorker": PY_EXECUTABLES.VLLM,
}


def get_actor_python_env(fqn):
    if fqn in ACTOR_ENVIRONMENT_REGISTRY:
        return ACTOR_ENVIRONMENT_REGISTRY[fqn]
    raise ValueError(f"No actor environment registered for {fqn}")
''',
}

EXTENSION = "myext.worker.MyWorker"

# The user's worker, correct: decorated as the tree's, every sync method the driver calls.
WORKER = '''
import ray

from nemo_rl.workers import WorkerImpl


@ray.remote(num_gpus=1)
class MyWorker(WorkerImpl):
    def generate(self, data):
        return data

    def sleep(self):
        return None
'''

REGISTRATION = '''
from nemo_rl.distributed.ray_actor_environment_registry import ACTOR_ENVIRONMENT_REGISTRY
from nemo_rl.distributed.virtual_cluster import PY_EXECUTABLES

ACTOR_ENVIRONMENT_REGISTRY["myext.worker.MyWorker"] = PY_EXECUTABLES.VLLM
'''


# The tree's workers with no `generate` on their base: only SyncWorker has one.
NO_BASE_GENERATE = WORKERS.replace("    def generate(self):\n        return None\n", "")


def _audit(tmp_path: Path, *, worker: str = WORKER, registration: str | None = REGISTRATION,
           registry: bool = True, workers: str = WORKERS) -> tuple[int, dict[str, Any]]:
    tree = write_tree(tmp_path / "checkout", driver_body=DRIVER, workers=workers,
                      extra=REGISTRY if registry else None)
    user = tmp_path / "user"
    files = {"myext/__init__.py": "", "myext/worker.py": worker}
    if registration is not None:
        files["myext/registration.py"] = registration
    for name, text in files.items():
        path = user / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return audit_json(tree, user, EXTENSION)


def _only(report: dict[str, Any], rule: str) -> dict[str, Any]:
    (finding,) = [f for f in report["findings"] if f["rule"] == rule]
    assert isinstance(finding, dict)
    return finding


def test_the_correct_package_is_clean(tmp_path: Path) -> None:
    code, report = _audit(tmp_path)
    assert (code, report["findings"]) == (0, [])
    (ext,) = report["extensions"]
    # It stands for the sync worker (whose calls it answers), not the async one its base
    # shares: the async worker's calls are not asked of it.
    assert ext["stands_for"] == "nemo_rl.workers.SyncWorker"


# -- an actor class (`extension-not-actor`)


def test_a_class_without_ray_remote_is_one_finding_naming_the_decorator(
        tmp_path: Path) -> None:
    code, report = _audit(tmp_path, worker=WORKER.replace("@ray.remote(num_gpus=1)\n", ""))
    assert code == 1
    assert rules(report) == {("extension-not-actor", "__init__", EXTENSION)}
    message = _only(report, "extension-not-actor")["message"]
    assert message.startswith(f"{EXTENSION} is not an actor class: ")
    assert "decorate it with @ray.remote(num_gpus=1), as nemo_rl.workers.SyncWorker is" in (
        message)


def test_a_tree_that_starts_plain_classes_asks_for_no_decorator(tmp_path: Path) -> None:
    """Where the worker the extension stands for is itself undecorated (the driver makes
    the actor class), an undecorated extension is what the tree expects."""
    plain = WORKERS.replace("@ray.remote(num_gpus=1)\n", "")
    tree = write_tree(tmp_path / "checkout", driver_body=DRIVER, workers=plain)
    user = tmp_path / "user" / "myext"
    user.mkdir(parents=True)
    (user / "__init__.py").write_text("", encoding="utf-8")
    (user / "worker.py").write_text(textwrap.dedent(WORKER.replace(
        "@ray.remote(num_gpus=1)\n", "")), encoding="utf-8")
    code, report = audit_json(tree, user.parent, EXTENSION)
    assert (code, report["findings"]) == (0, [])


@pytest.mark.parametrize(("written", "actor"), [
    ("ray.remote", True), ("ray.remote(num_gpus=1)", True), ("remote", True),
    ("remote(num_cpus=1)", True), ("r.remote", True),
    ("staticmethod", False), ("functools.cache", False), ("remotely", False),
])
def test_the_guard_and_the_audit_share_one_test_of_an_actor_maker(written: str,
                                                                 actor: bool) -> None:
    assert makes_actor(written) is actor


# -- an actor environment (`extension-unregistered`)


def test_a_class_no_module_registers_names_the_workers_environment(tmp_path: Path) -> None:
    code, report = _audit(tmp_path, registration=None)
    assert code == 1
    assert rules(report) == {("extension-unregistered", "__init__", EXTENSION)}
    finding = _only(report, "extension-unregistered")
    assert 'ACTOR_ENVIRONMENT_REGISTRY["myext.worker.MyWorker"] = PY_EXECUTABLES.VLLM, the ' \
           "environment the tree registers for nemo_rl.workers.SyncWorker" in finding["message"]
    assert finding["definition"].endswith("ray_actor_environment_registry.py")


def test_registering_another_class_does_not_register_this_one(tmp_path: Path) -> None:
    code, report = _audit(tmp_path, registration=REGISTRATION.replace(
        "myext.worker.MyWorker", "myext.worker.MyOtherWorker"))
    assert code == 1
    assert rules(report) == {("extension-unregistered", "__init__", EXTENSION)}


def test_a_tree_without_a_registry_asks_for_no_registration(tmp_path: Path) -> None:
    code, report = _audit(tmp_path, registration=None, registry=False)
    assert (code, report["findings"]) == (0, [])


def test_a_registry_the_source_cannot_read_leaves_it_undecided(tmp_path: Path) -> None:
    unreadable = (REGISTRATION
                  + "\nACTOR_ENVIRONMENT_REGISTRY = dict(**ACTOR_ENVIRONMENT_REGISTRY)\n")
    code, report = _audit(tmp_path, registration=unreadable.replace(
        'ACTOR_ENVIRONMENT_REGISTRY["myext.worker.MyWorker"] = PY_EXECUTABLES.VLLM\n', ""))
    assert (code, report["findings"]) == (0, [])
    (ext,) = report["extensions"]
    assert any("whether ACTOR_ENVIRONMENT_REGISTRY holds it is not known" in u
               for u in ext["unknown"])


# -- the driver's calls against the extension's whole MRO


def test_a_renamed_method_the_base_lacks_is_missing(tmp_path: Path) -> None:
    """The tree's SyncWorker defines `generate(data)`; the user's worker, on WorkerImpl,
    renamed its own: WorkerImpl's `generate()` takes no data, SyncWorker's is gone."""
    code, report = _audit(tmp_path, worker=WORKER.replace("def generate(", "def generate_batch("))
    assert code == 1
    assert rules(report) == {("override-unknown-keyword", "generate", EXTENSION)}
    message = _only(report, "override-unknown-keyword")["message"]
    assert message == ("Gen.generate sends data= to generate (when async_engine=false), but "
                       "the method nemo_rl.workers.WorkerImpl.generate has no parameter data "
                       "and no **kwargs")


def test_a_method_no_class_of_its_mro_defines_is_missing(tmp_path: Path) -> None:
    code, report = _audit(tmp_path, workers=NO_BASE_GENERATE,
                          worker=WORKER.replace("def generate(", "def generate_batch("))
    assert code == 1
    assert rules(report) == {("missing-method", "generate", EXTENSION)}
    finding = _only(report, "missing-method")
    assert finding["message"].startswith(
        f"Gen.generate calls 'generate' on {EXTENSION}, which has no such method (its MRO "
        "ends at WorkerImpl) when async_engine=false; nemo_rl.workers.SyncWorker, whose "
        "place it takes, defines it")


def test_a_renamed_override_the_base_still_provides_is_fine(tmp_path: Path) -> None:
    """Renaming an override of `train`, which WorkerImpl defines: the workers still have
    train, the base's, and it takes what the driver sends."""
    worker = WORKER + '''
    def train(self, data):
        return data
'''
    code, report = _audit(tmp_path, worker=worker.replace("def train(", "def train_fast("))
    assert (code, report["findings"]) == (0, [])


def test_which_worker_it_takes_the_place_of_undecided_judges_the_common_calls(
        tmp_path: Path) -> None:
    """A worker that answers neither mode's own calls (no sleep, generate renamed) may be
    meant for either: only the calls both modes get are judged, and the note says so."""
    worker = WORKER.replace("def generate(", "def generate_batch(").replace(
        "def sleep(", "def doze(")
    code, report = _audit(tmp_path, worker=worker, workers=NO_BASE_GENERATE)
    assert (code, report["findings"]) == (0, [])
    (ext,) = report["extensions"]
    assert any("whether it takes the place of nemo_rl.workers.AsyncWorker or "
               "nemo_rl.workers.SyncWorker is not known" in u for u in ext["unknown"])


@pytest.mark.parametrize("registration", [
    pytest.param('''
from nemo_rl.distributed.ray_actor_environment_registry import ACTOR_ENVIRONMENT_REGISTRY
from nemo_rl.distributed.virtual_cluster import PY_EXECUTABLES


def register():
    ACTOR_ENVIRONMENT_REGISTRY["myext.worker.MyWorker"] = PY_EXECUTABLES.VLLM
''', id="in-a-function"),
    pytest.param('''
from nemo_rl.distributed.ray_actor_environment_registry import ACTOR_ENVIRONMENT_REGISTRY
from nemo_rl.distributed.virtual_cluster import PY_EXECUTABLES

ACTOR_ENVIRONMENT_REGISTRY.update({"myext.worker.MyWorker": PY_EXECUTABLES.VLLM})
''', id="update"),
])
def test_a_registration_written_otherwise_is_read(tmp_path: Path, registration: str) -> None:
    """In a function a script runs before it starts the workers, or by `.update({...})`."""
    code, report = _audit(tmp_path, registration=registration)
    assert (code, report["findings"]) == (0, [])


def test_an_update_the_source_cannot_read_leaves_it_undecided(tmp_path: Path) -> None:
    code, report = _audit(tmp_path, registration='''
from nemo_rl.distributed.ray_actor_environment_registry import ACTOR_ENVIRONMENT_REGISTRY
from myext.table import MY_WORKERS

ACTOR_ENVIRONMENT_REGISTRY.update(MY_WORKERS)
''')
    assert (code, report["findings"]) == (0, [])
    (ext,) = report["extensions"]
    assert any("ACTOR_ENVIRONMENT_REGISTRY.update(...) adds entries the source does not name"
               in u for u in ext["unknown"])
