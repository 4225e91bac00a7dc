"""The class judgement on the corpus trees' own source (read as data, nothing imported):
upstream's own classes are never refused, at either release; upstream's own extension
template passes; a subclass of upstream's actor class is refused, naming the base.

Skipped where the corpus is absent.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nemo_rl_workers.guard import judgement
from nemo_rl_workers.tree.source import DemandTree, ImportRoots
from tests.guard.upstream import OLD_TREE, TREE

REGISTRY = "nemo_rl/distributed/ray_actor_environment_registry.py"


def _index(*roots: Path) -> DemandTree:
    return judgement.source_model(ImportRoots(tuple(str(r) for r in roots)))


def _registered(tree: Path) -> list[str]:
    """The FQNs the tree's own registry names (its source, as written)."""
    text = (tree / REGISTRY).read_text(encoding="utf-8")
    return sorted(set(re.findall(r'"(nemo_rl\.[\w.]+)":', text)))


@pytest.mark.parametrize("tree", [TREE, OLD_TREE], ids=["2026-08", "2025-09"])
def test_upstreams_own_classes_are_never_refused(tree: Path) -> None:
    if not tree.is_dir():
        pytest.skip("the corpus is absent")
    index = _index(tree)
    own = judgement.own_root_of(str(tree / "nemo_rl" / "__init__.py"))
    fqns = _registered(tree)
    assert len(fqns) >= 10
    for fqn in fqns:
        assert judgement.own_class(fqn, index, own), fqn
        assert not judgement.judge_source(fqn, index, own).refused, fqn
    # Judged as if they were a user's (no own root), every one passes on its merits too.
    refused = {fqn: judgement.judge_source(fqn, index, None) for fqn in fqns}
    assert {f: v.rule for f, v in refused.items() if v.refused} == {}


@pytest.mark.skipif(not TREE.is_dir(), reason="the corpus is absent")
def test_upstreams_extension_template_passes() -> None:
    index = _index(TREE / "research" / "template_project", TREE)
    fqn = "template_project.worker_extension.DTensorPolicyWorkerV2Extension"
    assert judgement.judge_source(fqn, index, None) == judgement.PASS


@pytest.mark.skipif(not TREE.is_dir(), reason="the corpus is absent")
def test_a_subclass_of_upstreams_actor_class_is_refused(tmp_path: Path) -> None:
    (tmp_path / "my_ext.py").write_text(
        "import ray\n"
        "from nemo_rl.models.policy.workers.dtensor_policy_worker import DTensorPolicyWorker\n"
        "\n\n@ray.remote\nclass MyWorker(DTensorPolicyWorker):\n    pass\n")
    verdict = judgement.judge_source("my_ext.MyWorker", _index(tmp_path, TREE), None)
    assert verdict.rule == "actor-subclass"
    base = TREE / "nemo_rl" / "models" / "policy" / "workers" / "dtensor_policy_worker.py"
    assert verdict.what.startswith(f"subclasses the actor class DTensorPolicyWorker ({base}:")
