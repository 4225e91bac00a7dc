"""The `actor-environment` refusal's fix names the environment the tree registers for the
class the refused class subclasses (issue 43): a vLLM worker extension is told its base's
(`VLLM_EXECUTABLE`), not `PY_EXECUTABLES.SYSTEM`, at both corpus releases; a class of no
registered base keeps the driver's own. The expected environment is read from each
corpus registry's source as written; the corpus is data (never imported here).

Skipped where the corpus is absent.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from nemo_rl_workers.guard import judgement
from nemo_rl_workers.guard.environment_fix import REGISTRY_MODULE, base_environment_of
from tests.guard.upstream import OLD_TREE, TREE

REGISTRY = "nemo_rl/distributed/ray_actor_environment_registry.py"
VLLM = "nemo_rl.models.generation.vllm"
VLLM_WORKER = f"{VLLM}.vllm_worker.VllmGenerationWorker"
POLICY_V2 = "nemo_rl.models.policy.workers.dtensor_policy_worker_v2"


def _registered(tree: Path, fqn: str) -> str:
    """The environment the tree's registry gives `fqn`, as its source writes it."""
    text = (tree / REGISTRY).read_text(encoding="utf-8")
    found = re.search(rf'"{re.escape(fqn)}": ([\w.]+),', text)
    assert found is not None, fqn
    return found[1]


def tree_lookup_refuses(fqn: str) -> object:
    """What the tree's `get_actor_python_env` does for a class its registry lacks."""
    raise ValueError(f"No actor environment registered for {fqn}")


CASES = [
    # (tree, the extension's base, the registered actor class whose environment it needs)
    pytest.param(TREE, f"{VLLM}.vllm_worker.VllmGenerationWorkerImpl", VLLM_WORKER,
                 id="2026-08-vllm-impl"),
    pytest.param(TREE, f"{VLLM}.vllm_worker.BaseVllmGenerationWorker", VLLM_WORKER,
                 id="2026-08-vllm-base"),
    pytest.param(OLD_TREE, f"{VLLM}.vllm_worker.BaseVllmGenerationWorker", VLLM_WORKER,
                 id="2025-09-vllm-base"),
    pytest.param(TREE, f"{POLICY_V2}.DTensorPolicyWorkerV2Impl",
                 f"{POLICY_V2}.DTensorPolicyWorkerV2", id="2026-08-policy-impl"),
]


def _module(tree: Path, base: str) -> str:
    return re.sub(r"\W", "_", f"ext_{tree.name}_{base.rpartition('.')[2]}")


@pytest.fixture(scope="module")
def user_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The user's folder on the import path, holding every test's extension (a guarded
    process models the folder once: it is written before), the tool's cache in the tests'
    own folder; one for the module, so each tree is modelled once."""
    folder = tmp_path_factory.mktemp("user")
    for case in CASES:
        tree, base, _ = case.values
        assert isinstance(tree, Path) and isinstance(base, str)
        _extension(folder, _module(tree, base), base)
    _extension(folder, "issue_ext", f"{VLLM}.vllm_worker.VllmGenerationWorkerImpl")
    (folder / "plain_ext.py").write_text(
        "import ray\n\n\n@ray.remote\nclass EchoWorker:\n    pass\n")
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(folder))
        patch.setenv("NEMO_RL_WORKERS_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        yield folder


def _extension(folder: Path, module: str, base: str) -> str:
    """A worker extension of `base` (module.Class) in the user's folder; its FQN."""
    base_module, _, name = base.rpartition(".")
    (folder / f"{module}.py").write_text(
        f"import ray\nfrom {base_module} import {name}\n\n\n"
        f"@ray.remote\nclass MyWorker({name}):\n    def extra(self) -> int:\n        return 1\n")
    return f"{module}.MyWorker"




@pytest.mark.parametrize(("tree", "base", "actor"), CASES)
def test_the_fix_names_the_environment_of_the_base(tree: Path, base: str, actor: str,
                                                   user_folder: Path) -> None:
    if not tree.is_dir():
        pytest.skip("the corpus is absent")
    fqn = f"{_module(tree, base)}.MyWorker"
    environment = _registered(tree, actor)
    verdict = judgement.judge_environment(fqn, tree_lookup_refuses, str(tree))
    assert verdict.rule == "actor-environment"
    assert verdict.fix.startswith(
        f'register it before the group is made: ACTOR_ENVIRONMENT_REGISTRY["{fqn}"] = '
        f"{environment} ({REGISTRY_MODULE}): the environment the tree registers for "
        f"{actor.rpartition('.')[2]}, the actor class of its base "), verdict.fix
    assert "PY_EXECUTABLES.SYSTEM" not in verdict.fix
    found = base_environment_of(fqn, str(tree))
    assert found is not None and found.base == base and found.registered == (
        (actor, environment),)


@pytest.mark.skipif(not TREE.is_dir(), reason="the corpus is absent")
def test_a_vllm_extension_is_told_vllms_environment_not_the_drivers(user_folder: Path) -> None:
    """The issue's case, as the registry of both releases writes it."""
    for tree in (TREE, OLD_TREE):
        assert _registered(tree, VLLM_WORKER) == "VLLM_EXECUTABLE"
    fqn = "issue_ext.MyWorker"
    assert "= VLLM_EXECUTABLE (" in judgement.judge_environment(
        fqn, tree_lookup_refuses, str(TREE)).fix


@pytest.mark.parametrize("tree", [TREE, OLD_TREE], ids=["2026-08", "2025-09"])
def test_a_class_of_no_registered_base_keeps_the_drivers_own(tree: Path,
                                                             user_folder: Path) -> None:
    if not tree.is_dir():
        pytest.skip("the corpus is absent")
    fix = judgement.judge_environment("plain_ext.EchoWorker", tree_lookup_refuses,
                                      str(tree)).fix
    assert fix == ('register it before the group is made: ACTOR_ENVIRONMENT_REGISTRY['
                   f'"plain_ext.EchoWorker"] = PY_EXECUTABLES.SYSTEM ({REGISTRY_MODULE})')


def test_without_the_tree_the_fix_is_the_drivers_own(user_folder: Path) -> None:
    fix = judgement.judge_environment("nowhere.Worker", tree_lookup_refuses, None).fix
    assert fix.endswith(f"= PY_EXECUTABLES.SYSTEM ({REGISTRY_MODULE})")
