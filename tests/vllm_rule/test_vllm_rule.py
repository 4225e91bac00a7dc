"""vLLM's worker_extension_cls clash rule, against the installed vllm-stubs' manifest."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
from nemo_rl.modelopt.models.generation.vllm_quant_backend import (
    VllmQuantInternalWorkerExtension,
)
from nemo_rl.models.generation.vllm.vllm_backend import VllmInternalWorkerExtension

from contracts.init_call import GENERATION_INIT
from nemo_rl_workers.checks.contract.contract_check import WorkerCheck, check_worker_class
from nemo_rl_workers.checks.vllm.vllm_extension_rule import (
    MAX_MANIFEST_BYTES,
    ExtensionRuleUnavailable,
    installed_manifests,
    load_rule,
    rule_from_manifest,
    runtime_names,
)
from nemo_rl_workers.commands.cli import main
from tests.vllm_rule import extensions

STUBS_MANIFEST = Path(__file__).resolve().parents[2] / "stubs" / "manifest.json"
WORKER = "vllm.v1.worker.gpu_worker.Worker"


def _fqn(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _clashes(cls: type) -> list[tuple[str, str, str]]:
    return [
        (c.name, c.extension_owner, c.defined.owner)
        for c in load_rule().clashes(_fqn(cls), runtime_names(cls))
    ]


def test_the_installed_stubs_are_the_checkouts_and_judge_vllm_0_33() -> None:
    rule = load_rule()
    assert rule.version == "0.33.0"
    assert installed_manifests() == {"0.33.0": rule.manifest}
    assert rule.manifest.read_text() == STUBS_MANIFEST.read_text()
    assert rule.default_worker == WORKER
    assert rule.rule_site == "vllm/v1/worker/worker_base.py:320"
    assert rule.skip_prefix == "__"


def test_our_own_extensions_pass() -> None:
    assert _clashes(VllmInternalWorkerExtension) == []
    assert _clashes(VllmQuantInternalWorkerExtension) == []


def test_a_clash_names_the_member_both_classes_and_where_vllm_defines_it() -> None:
    rule = load_rule()
    cls = extensions.ClashingSynchronizeExtension
    (clash,) = rule.clashes(_fqn(cls), runtime_names(cls))
    assert clash.message() == (
        f"{_fqn(cls)}.synchronize_device clashes with vLLM 0.33.0's {WORKER}.synchronize_device "
        "(method of vllm.v1.worker.worker_base.WorkerBase, vllm/v1/worker/worker_base.py:134): "
        "vLLM asserts that no extension attribute already exists on its worker class "
        "(vllm/v1/worker/worker_base.py:320), in every engine process after the GPUs are "
        "taken; rename it"
    )


def test_inherited_names_and_class_attributes_count() -> None:
    cls = extensions.ClashingInheritedExtension
    assert _clashes(cls) == [
        ("_maybe_get_memory_pool_context", _fqn(extensions._ClashingMixin), WORKER),
        ("sleep_mode_backend", _fqn(cls), WORKER),
    ]


def test_the_metaclass_counts_through_hasattr() -> None:
    assert _clashes(extensions.ClashingMroExtension) == [
        ("mro", _fqn(extensions.ClashingMroExtension), "type")
    ]


def test_dunders_mangled_names_and_worker_instance_attributes_are_no_clash() -> None:
    names = runtime_names(extensions.PassingExtension)
    assert "_PassingExtension__private_counter" in names and "rank" in names
    assert _clashes(extensions.PassingExtension) == []


def test_another_vllm_version_must_be_installed() -> None:
    with pytest.raises(ExtensionRuleUnavailable) as info:
        load_rule("0.32.0")
    assert str(info.value) == (
        "--vllm-version 0.32.0: no installed vllm-stubs describes vLLM 0.32.0; installed: 0.33.0"
    )


@pytest.mark.parametrize("made", ["fifo", "folder", "huge", "deep"])
def test_a_manifest_that_is_not_a_readable_file_is_one_reason(tmp_path: Path, made: str) -> None:
    """The manifest is read through the guarded reader: a FIFO in its place is not waited
    on, a folder or an oversized file is refused, JSON nested past the parser's depth is
    one reason; never a hang or a traceback."""
    manifest = tmp_path / "manifest.json"
    if made == "fifo":
        os.mkfifo(manifest)
    elif made == "folder":
        manifest.mkdir()
    elif made == "huge":
        with manifest.open("wb") as f:
            f.truncate(MAX_MANIFEST_BYTES + 1)
    else:
        manifest.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ExtensionRuleUnavailable) as info:
        rule_from_manifest(manifest)
    reason = str(info.value)
    assert str(manifest) in reason and "\n" not in reason
    assert ("over 16 MiB" in reason) == (made == "huge")


def _check(cls: type, protocol: str = "GenerationWorker") -> list[tuple[str, str, str, str, str]]:
    section = {"quant_cfg": "INT8_DEFAULT_CFG"} if protocol.startswith("Quant") else {}
    return check_worker_class(
        WorkerCheck(_fqn(cls), protocol, None, GENERATION_INIT, "policy.generation", section)
    )


def test_the_pre_allocation_check_refuses_a_clashing_extension_and_passes_ours() -> None:
    from nemo_rl.modelopt.models.generation.vllm_quant_worker import (
        VllmQuantAsyncGenerationWorker,
        VllmQuantGenerationWorker,
    )
    from nemo_rl.models.generation.vllm.vllm_worker import VllmGenerationWorker
    from nemo_rl.models.generation.vllm.vllm_worker_async import VllmAsyncGenerationWorker

    assert _check(VllmGenerationWorker) == []
    assert _check(VllmAsyncGenerationWorker, "AsyncGenerationWorker") == []
    assert _check(VllmQuantGenerationWorker, "QuantGenerationWorker") == []
    assert _check(VllmQuantAsyncGenerationWorker, "QuantAsyncGenerationWorker") == []
    assert _check(extensions.PassingGenerationWorker) == []
    (problem,) = _check(extensions.ClashingGenerationWorker)
    path, _, given, message, rule = problem
    assert (path, given, rule) == (
        "policy.generation.worker_extension_cls_fqn",
        _fqn(extensions.ClashingSynchronizeExtension),
        "vllm-extension-clash",
    )
    assert message.startswith(
        f"policy.generation.worker_extension_cls_fqn={_fqn(extensions.ClashingGenerationWorker)} "
        f"hands vLLM the worker extension {given}, which vLLM refuses: {given}.synchronize_device "
        "clashes with vLLM 0.33.0's"
    )


def test_verify_reports_the_clash_and_exits_1() -> None:
    out, err = io.StringIO(), io.StringIO()
    fqn = _fqn(extensions.ClashingGenerationWorker)
    code = main(["verify", fqn, "--protocol", "GenerationWorker", "--json"], out, err)
    assert code == 1, err.getvalue()
    violations = json.loads(out.getvalue())["violations"]
    assert [(v["rule"], v["member"]) for v in violations] == [
        ("vllm-extension-clash", _fqn(extensions.ClashingSynchronizeExtension))
    ]
    out = io.StringIO()
    default = "nemo_rl.models.generation.vllm.vllm_worker.VllmGenerationWorker"
    assert main(["verify", default, "--protocol", "GenerationWorker"], out, err) == 0
