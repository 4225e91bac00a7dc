"""#28 item 1: `collective_rpc(name)` where `name` is a worker method's parameter, sent by
the drivers' calls of that method (through a helper of theirs that passes it on), as a
pair: a name the extension lacks is found, the fixed tree is clean. A call of the same
method name on the policy's workers does not count for the generation worker."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from tests.cli_run import run_cli

GENERATION_WORKER = '''
from typing import Any

import ray


class RpcMixin:
    def engine_rpc(self, engine_method: str, method_args: tuple[Any, ...] = ()) -> Any:
        return self.llm.collective_rpc(engine_method, args=method_args)


class VllmGenerationWorkerImpl(RpcMixin):
    def __init__(self, config: dict[str, Any]) -> None:
        self.cfg = config
        self.llm: Any = None

    def _load_model(self) -> None:
        from vllm import LLM

        self.llm = LLM(model=self.cfg["model_name"], worker_extension_cls=(
            "nemo_rl.models.generation.vllm.vllm_backend.VllmInternalWorkerExtension"))

    def report_device_id(self) -> list[str]:
        return self.engine_rpc("report_device_id")


@ray.remote
class VllmGenerationWorker(VllmGenerationWorkerImpl):
    pass
'''

POLICY_WORKER_RPC = '''

    def engine_rpc(self, engine_method: str) -> Any:
        return getattr(self, engine_method)()
'''

SYNCHRONIZER = '''
from typing import Any


class Synchronizer:
    def __init__(self, policy: Any, generation: Any) -> None:
        self._policy = policy
        self._generation = generation

    def _run_policy(self, engine_method: str) -> Any:
        return self._policy.worker_group.run_all_workers_single_data(
            "engine_rpc", engine_method=engine_method)

    def _run_generation(self, engine_method: str, method_args: tuple[Any, ...] = ()) -> Any:
        return self._generation.worker_group.run_all_workers_single_data(
            "engine_rpc", engine_method=engine_method, method_args=method_args)

    def sync(self) -> None:
        self._run_generation("{generation_name}")
        self._run_policy("only_the_policy_has_this")
        self._generation.worker_group.run_all_workers_multiple_data(
            "engine_rpc", method_args=[(0,), (1,)],
            common_kwargs={{"engine_method": "report_device_id"}})
'''


def _tree(tmp_path: Path, trees: Path, generation_name: str) -> Path:
    root = tmp_path / "checkout"
    shutil.copytree(trees / "mini", root)
    vllm = root / "nemo_rl" / "models" / "generation" / "vllm"
    (vllm / "vllm_worker.py").write_text(GENERATION_WORKER)
    worker = root / "nemo_rl" / "models" / "policy" / "workers" / "automodel_policy_worker.py"
    text = worker.read_text()
    head, sep, tail = text.partition("\n\nclass AutomodelPolicyWorker(")
    worker.write_text(head.rstrip("\n") + "\n" + POLICY_WORKER_RPC + sep + tail)
    (root / "nemo_rl" / "weight_sync.py").write_text(
        SYNCHRONIZER.format(generation_name=generation_name))
    return root


def _audit(root: Path) -> tuple[int, dict[str, Any]]:
    code, out, err = run_cli("audit", "--no-cache", "--nemo-rl", str(root), "--json")
    assert err == "", err
    return code, json.loads(out)


def test_a_name_passed_on_that_the_extension_lacks_is_found(
        tmp_path: Path, trees: Path) -> None:
    code, report = _audit(_tree(tmp_path, trees, "report_devise_id"))
    assert code == 1
    rpc = [f for f in report["findings"] if f["rule"] == "collective-rpc-missing"]
    assert [(f["method"], f["call"], f["workers"]) for f in rpc] == [
        ("report_devise_id", "nemo_rl/models/generation/vllm/vllm_worker.py:9", [
            "nemo_rl.models.generation.vllm.vllm_worker.VllmGenerationWorker",
            "nemo_rl.models.generation.vllm.vllm_worker.VllmGenerationWorkerImpl"])]
    assert rpc[0]["message"].startswith(
        "RpcMixin.engine_rpc calls collective_rpc('report_devise_id') through its parameter "
        "engine_method on nemo_rl.models.generation.vllm.vllm_worker.VllmGenerationWorker and "
        "nemo_rl.models.generation.vllm.vllm_worker.VllmGenerationWorkerImpl, but neither")
    assert report["vllm"]["collective_rpc"]["unresolved"] == []


def test_the_fixed_name_is_clean_and_the_policys_calls_do_not_count(
        tmp_path: Path, trees: Path) -> None:
    code, report = _audit(_tree(tmp_path, trees, "report_device_id"))
    assert [f for f in report["findings"] if f["rule"] == "collective-rpc-missing"] == []
    assert report["vllm"]["collective_rpc"] == {"resolved": 1, "unresolved": []}
    assert report["findings"] == []
    assert code == 0, report["findings"]


def test_a_name_no_caller_tells_stays_unresolved(tmp_path: Path, trees: Path) -> None:
    root = _tree(tmp_path, trees, "report_device_id")
    sync = root / "nemo_rl" / "weight_sync.py"
    sync.write_text(sync.read_text().replace(
        'self._run_generation("report_device_id")', "self._run_generation(self.name)"))
    _, report = _audit(root)
    assert [u["function"] for u in report["vllm"]["collective_rpc"]["unresolved"]] == [
        "RpcMixin.engine_rpc"]
