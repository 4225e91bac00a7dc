"""The extension side of `audit` on upstream NeMo-RL at the corpus commit (skipped where
the corpus is absent): the vLLM rule on its own extensions, its template project, and
the Protocols emitted for that revision, type-checked by mypy and pyrefly."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from nemo_rl_workers.checks.audit.context import AuditContext
from nemo_rl_workers.checks.audit.protocols_emit import protocols_source
from nemo_rl_workers.checks.audit.run import audit
from tests.audit.tree import mutated_copy
from tests.cli_run import run_cli

COMMITTED = Path(__file__).resolve().parent / "corpus_protocols.py.txt"
BIN = Path(sys.executable).parent
BACKEND = "nemo_rl/models/generation/vllm/vllm_backend.py"


def corpus_json(corpus: Path, *args: str) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(
        run_cli("audit", "--nemo-rl", str(corpus), "--json", *args).out)
    return report


def test_upstreams_vllm_extensions_clash_with_vllm_0_33(upstream: Path) -> None:
    report = corpus_json(upstream)
    clashes = [f for f in report["findings"] if f["rule"] == "vllm-extension-clash"]
    # Checked by hand: vllm_backend.py:787 defines synchronize_device on
    # VllmInternalWorkerExtension (the other three inherit it); vLLM 0.33's
    # WorkerBase.synchronize_device is vllm/v1/worker/worker_base.py:134, and
    # init_worker asserts `not hasattr(worker_class, attr)` (worker_base.py:320).
    assert sorted((f["worker"].rpartition(".")[2], f["method"], f["definition"])
                  for f in clashes) == [
        ("VllmInternalWorkerExtension", "synchronize_device", f"{BACKEND}:787"),
        ("VllmInternalWorkerExtensionWithCheckpointEngine", "synchronize_device",
         f"{BACKEND}:787"),
        ("VllmQuantInternalWorkerExtension", "synchronize_device", f"{BACKEND}:787"),
        ("VllmQuantInternalWorkerExtensionWithCheckpointEngine", "synchronize_device",
         f"{BACKEND}:787"),
    ]
    assert {f["call"] for f in clashes} == {
        "nemo_rl/models/generation/vllm/vllm_worker.py:570",
        "nemo_rl/modelopt/models/generation/vllm_quant_worker.py:54",
    }
    vllm = report["vllm"]
    assert (vllm["version"], vllm["worker"]) == ("0.33.0", "vllm.v1.worker.gpu_worker.Worker")
    assert all(e["known"] for e in vllm["extensions"])
    assert vllm["worker_classes"] == [
        "nemo_rl.modelopt.models.generation.vllm_quant_patch.FakeQuantWorker",
        "nemo_rl.models.generation.vllm.vllm_backend.NixlVllmWorker",
    ]
    # Every resolved collective_rpc names a method of the extension or of vLLM's worker.
    assert not [f for f in report["findings"] if f["rule"] == "collective-rpc-missing"]
    # The checkpoint-engine mixins pass on the name the synchronizer sends them
    # (`_run_generation("prepare_checkpoint_engine")`, `common_kwargs={...}`): resolved
    # through the drivers' calls, the policy's calls of the same name not counted.
    assert vllm["collective_rpc"]["resolved"] == 31
    assert vllm["collective_rpc"]["unresolved"] == []


def test_upstreams_template_project(upstream: Path) -> None:
    template = upstream / "research" / "template_project"
    plain = corpus_json(upstream)
    report = corpus_json(upstream, "--path", str(template),
                         "template_project.worker_extension.DTensorPolicyWorkerV2Extension")
    (ext,) = report["extensions"]
    assert ext["role"] == "Policy"
    assert ext["stands_for"] == (
        "nemo_rl.models.policy.workers.dtensor_policy_worker_v2.DTensorPolicyWorkerV2")
    assert ext["own_classes"] == [
        "template_project.worker_extension.DTensorPolicyWorkerV2Extension"]
    # single_update.py's two calls by name reach the extension's own two methods.
    assert ext["driver_calls_checked"] == 2
    assert report["findings"] == plain["findings"]  # the extension adds no finding


def _context(corpus: Path) -> AuditContext:
    found: list[AuditContext] = []

    def grab(ctx: AuditContext) -> tuple[list[Any], Any]:
        found.append(ctx)
        return [], None

    audit(corpus, extend=grab)
    return found[0]


def test_emitted_protocols_are_the_committed_copy(upstream: Path) -> None:
    text = protocols_source(_context(upstream))
    assert text == COMMITTED.read_text(encoding="utf-8"), (
        "regenerate: nemo-rl-workers audit --nemo-rl ../shared/corpus/nemo-rl "
        "--emit-protocols tests/audit_ext/corpus_protocols.py.txt")
    assert text == protocols_source(_context(upstream))  # deterministic


def _checked_classes(ctx: AuditContext, text: str) -> list[tuple[str, str]]:
    """(Protocol, the class to check against it): the default worker, or the class its
    `@ray.remote` wraps (a remote class's type is Ray's, not the class's)."""
    from nemo_rl_workers.tree.source import resolve_fqn

    out = []
    for name, fqn in re.findall(r'class (\w+)\(Protocol\):\n    """[^\n]*\n    ([\w.]+) \(',
                                text):
        info = resolve_fqn(ctx.tree, fqn)
        assert info is not None
        mro = ctx.resolver.mro(info).classes
        if info.decorators and len(mro) > 1 and not info.methods:
            info = mro[1]
        out.append((name, info.fqn))
    return out


@pytest.mark.slow
def test_mypy_and_pyrefly_accept_the_protocols_and_upstreams_default_workers(
    upstream: Path, tmp_path: Path
) -> None:
    ctx = _context(upstream)
    text = protocols_source(ctx)
    (tmp_path / "protocols.py").write_text(text, encoding="utf-8")
    pairs = _checked_classes(ctx, text)
    lines = ["from __future__ import annotations", ""]
    for index, (protocol, fqn) in enumerate(pairs):
        module, _, cls = fqn.rpartition(".")
        lines += [f"from {module} import {cls} as W{index}", f"from protocols import {protocol}"]
    for index, (protocol, _) in enumerate(pairs):
        lines += ["", "", f"def check_{index}(worker: W{index}) -> {protocol}:",
                  "    return worker"]
    (tmp_path / "check.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    env["MYPYPATH"] = str(upstream)
    # upstream's heavy dependencies (torch, ray, vllm, ...) are not installed: Any.
    mypy = subprocess.run(
        [str(BIN / "mypy"), "--ignore-missing-imports", "--follow-imports=silent",
         "--python-version", "3.11", "--no-incremental", "check.py", "protocols.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert mypy.returncode == 0, mypy.stdout + mypy.stderr
    (tmp_path / "pyrefly.toml").write_text(
        f'project-includes = ["*.py"]\nsearch-path = [".", "{upstream}"]\n'
        'python-version = "3.11"\n', encoding="utf-8")
    pyrefly = subprocess.run([str(BIN / "pyrefly"), "check"], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=600, check=False)
    errors = [line for line in pyrefly.stdout.splitlines() + pyrefly.stderr.splitlines()
              if line.startswith("ERROR") and "check.py" not in line]
    assert pyrefly.returncode == 0, pyrefly.stdout + pyrefly.stderr
    assert errors == []
    assert len(pairs) == 18


def test_a_checkpoint_engine_name_misspelt_in_a_copy_of_the_corpus(
        upstream: Path, tmp_path: Path) -> None:
    """The synchronizer's `_run_generation("prepare_checkpoint_engine")` misspelt: the
    name reaches `collective_rpc` through `checkpoint_engine_rpc`'s parameter, and
    neither extension the vLLM workers hand vLLM has it (checked by hand: the mixins
    with the checkpoint engine define `prepare_checkpoint_engine` only)."""
    copy = mutated_copy(upstream, tmp_path,
                        "nemo_rl/weight_sync/checkpoint_engine_weight_synchronizer.py",
                        'self._run_generation("prepare_checkpoint_engine")',
                        'self._run_generation("prepare_checkpoint_engin")')
    before = {(f["rule"], f["call"], f["method"]) for f in corpus_json(upstream)["findings"]}
    after = corpus_json(copy, "--no-cache")
    new = [f for f in after["findings"] if (f["rule"], f["call"], f["method"]) not in before]
    sync_call, async_call = (f"nemo_rl/models/generation/vllm/checkpoint_engine.py:{line}"
                             for line in (182, 198))
    quant = "nemo_rl.modelopt.models.generation.vllm_quant_worker."
    plain = "nemo_rl.models.generation.vllm."
    assert sorted((f["rule"], f["method"], f["call"], tuple(f["workers"])) for f in new) == [
        ("collective-rpc-missing", "prepare_checkpoint_engin", sync_call,
         (f"{quant}VllmQuantGenerationWorker",)),
        ("collective-rpc-missing", "prepare_checkpoint_engin", sync_call,
         (f"{plain}vllm_worker.VllmGenerationWorker",
          f"{plain}vllm_worker.VllmGenerationWorkerImpl")),
        ("collective-rpc-missing", "prepare_checkpoint_engin", async_call,
         (f"{quant}VllmQuantAsyncGenerationWorker",)),
        ("collective-rpc-missing", "prepare_checkpoint_engin", async_call,
         (f"{plain}vllm_worker_async.VllmAsyncGenerationWorker",
          f"{plain}vllm_worker_async.VllmAsyncGenerationWorkerImpl")),
    ]
