"""The guard's own-code rules on a user's classes over the corpus trees' source (read as
data, nothing imported): an override that does not bind what its base calls, and an
extension handed to vLLM whose name vLLM's worker already has, are refused with the
audit's words; upstream's own classes, judged as if they were a user's, fit their bases at
both releases; a second class of the same folder reads no file of the tree again.

Skipped where the corpus is absent.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nemo_rl_workers.guard import class_rules
from nemo_rl_workers.guard.class_model import folder_model
from tests.guard.upstream import OLD_TREE, TREE, USER

REGISTRY = "nemo_rl/distributed/ray_actor_environment_registry.py"
VLLM_WORKER = TREE / "nemo_rl" / "models" / "generation" / "vllm" / "vllm_worker.py"
needs_tree = pytest.mark.skipif(not TREE.is_dir(), reason="the corpus is absent")


@needs_tree
def test_an_override_that_cannot_take_its_bases_call_is_refused() -> None:
    model = folder_model(str(USER), str(TREE))
    fqn = "guard_vllm_workers.NoKwargsEngineWorker"
    found = class_rules.override_findings(model, fqn)
    assert [f.rule for f in found] == ["base-call-too-many-positional"]
    assert class_rules.override_sentence(found) == (
        "has code that does not fit what its NeMo-RL bases call or define: "
        "BaseVllmGenerationWorker._load_model calls self._create_engine(...) with 1 positional "
        f"arguments, but the override {fqn}._create_engine takes 0 "
        f"({USER / 'guard_vllm_workers.py'}:22, called at {VLLM_WORKER}:609); audit rule(s) "
        "base-call-too-many-positional")
    assert class_rules.vllm_clashes(model, fqn, str(TREE)) == []


@needs_tree
def test_an_extension_handed_to_vllm_that_clashes_is_refused() -> None:
    model = folder_model(str(USER), str(TREE))
    fqn = "guard_vllm_workers.OwnExtensionWorker"
    assert class_rules.override_findings(model, fqn) == []
    handed = class_rules.vllm_clashes(model, fqn, str(TREE))
    if not handed:
        pytest.skip("no vllm-stubs installed: vLLM's rule is not applied")
    sentence = class_rules.clash_sentence(handed)
    assert sentence.startswith(
        "hands vLLM the worker extension guard_vllm_workers.ClashingExtension "
        f"({USER / 'guard_vllm_workers.py'}:31), which vLLM's attribute-clash rule refuses "
        "for 1 name(s) (load_model): guard_vllm_workers.ClashingExtension.load_model clashes "
        "with vLLM ")
    assert "in every engine process after the GPUs are taken; rename it" in sentence
    if handed[0].pinned is not None:  # judged by the installed stubs' vLLM: said so
        assert sentence.endswith(f"rename it (the tree pins vLLM {handed[0].pinned}, for "
                                 "which no vllm-stubs is installed)")
    else:
        assert sentence.endswith("rename it")
    # Its other method, and the good worker of the same folder, are not refused.
    assert "report_checksum" not in sentence
    assert class_rules.vllm_clashes(model, "guard_workers.EchoWorker", str(TREE)) == []


@needs_tree
def test_a_class_is_modelled_from_a_few_files() -> None:
    model = folder_model(str(USER), str(TREE))
    class_rules.override_findings(model, "guard_vllm_workers.OwnExtensionWorker")
    read = model.tree.files_read
    assert read <= 10  # its module, its bases' and what they import: not the tree's 300
    class_rules.override_findings(model, "guard_vllm_workers.NoKwargsEngineWorker")
    assert model.tree.files_read == read  # the same bases: nothing read again


@pytest.mark.parametrize("tree", [TREE, OLD_TREE], ids=["2026-08", "2025-09"])
def test_upstreams_own_classes_fit_their_bases(tree: Path) -> None:
    if not tree.is_dir():
        pytest.skip("the corpus is absent")
    text = (tree / REGISTRY).read_text(encoding="utf-8")
    fqns = sorted(set(re.findall(r'"(nemo_rl\.[\w.]+)":', text)))
    model = folder_model(str(tree), str(tree))  # judged as if they were a user's
    assert len(fqns) >= 10
    assert {f: [x.rule for x in class_rules.override_findings(model, f)] for f in fqns
            if class_rules.override_findings(model, f)} == {}
    assert all(model.info(f) is not None for f in fqns)
