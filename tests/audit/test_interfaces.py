"""#28 item 3: calls on the interfaces the tree's drivers implement, from algorithms and
entry scripts, against every implementation; each as a pair (found, fixed tree clean)."""

from __future__ import annotations

from pathlib import Path

from tests.audit.tree import audited, keys

NO_CALLS = '''
def nothing(self):
    return None
'''

WORKERS = '''
class SyncWorker:
    def wake_up(self):
        return True


class AsyncWorker(SyncWorker):
    pass
'''


def _generation(trtllm_params: str) -> dict[str, str]:
    """An interface and three drivers implementing it (each starts a worker)."""
    driver = '''
from nemo_rl.distributed.worker_groups import RayWorkerBuilder, RayWorkerGroup
from nemo_rl.generation.interfaces import GenerationInterface


class {name}(GenerationInterface):
    def __init__(self, cfg):
        self.worker_group = RayWorkerGroup(RayWorkerBuilder("nemo_rl.workers.SyncWorker"))

    def update_weights_from_collective(self{params}):
        return self.worker_group.run_all_workers_single_data("wake_up")

    def prepare_for_generation(self, tags=None):
        return tags
'''
    return {
        "nemo_rl/generation/__init__.py": "",
        "nemo_rl/generation/interfaces.py": '''
import abc


class GenerationInterface(abc.ABC):
    @abc.abstractmethod
    def update_weights_from_collective(self):
        ...

    @abc.abstractmethod
    def prepare_for_generation(self, tags=None):
        ...
''',
        "nemo_rl/generation/vllm.py": driver.format(name="VllmGeneration",
                                                     params=", refit_timeout_s=None"),
        "nemo_rl/generation/trtllm.py": driver.format(name="TrtllmGeneration",
                                                       params=trtllm_params),
        "nemo_rl/generation/dynamo.py": driver.format(name="DynamoGeneration",
                                                       params=", *, refit_timeout_s=None"),
    }


ALGORITHM = '''
from typing import Optional

from nemo_rl.generation.interfaces import GenerationInterface


def refit(policy_generation: Optional[GenerationInterface], timeout):
    policy_generation.prepare_for_generation(tags=["weights"])
    if hasattr(policy_generation, "snapshot"):
        policy_generation.snapshot()
    return policy_generation.update_weights_from_collective(refit_timeout_s=timeout)
'''


def test_a_keyword_one_implementation_lacks_is_found(tmp_path: Path) -> None:
    """`refit_timeout_s=` sent to whichever backend the config picked; TRT-LLM's lacks it."""
    report = audited(tmp_path, workers=WORKERS, driver_body=NO_CALLS, extra={
        **_generation(""), "nemo_rl/algorithms/grpo.py": ALGORITHM})
    assert keys(report) == {("unknown-keyword", "refit", "update_weights_from_collective",
                             "TrtllmGeneration")}
    (finding,) = report.findings
    assert finding.call == "nemo_rl/algorithms/grpo.py:11"
    assert finding.definition == "nemo_rl/generation/trtllm.py:10"


def test_every_implementation_taking_the_keyword_is_clean(tmp_path: Path) -> None:
    report = audited(tmp_path, workers=WORKERS, driver_body=NO_CALLS, extra={
        **_generation(", refit_timeout_s=None"), "nemo_rl/algorithms/grpo.py": ALGORITHM})
    assert report.findings == []


def test_an_entry_script_calling_a_method_one_implementation_lacks(tmp_path: Path) -> None:
    script = ALGORITHM.replace("policy_generation.prepare_for_generation(tags=[\"weights\"])",
                               "policy_generation.finish_generation()")
    report = audited(tmp_path, workers=WORKERS, driver_body=NO_CALLS, extra={
        **_generation(", refit_timeout_s=None"), "examples/run_grpo.py": script})
    assert keys(report) == {("missing-method", "refit", "finish_generation", name)
                            for name in ("VllmGeneration", "TrtllmGeneration",
                                         "DynamoGeneration")}
    assert len(report.findings) == 1  # one cause: their MRO ends at the interface
    guarded = script.replace("    policy_generation.finish_generation()",
                             "    if hasattr(policy_generation, \"finish_generation\"):\n"
                             "        policy_generation.finish_generation()")
    clean = audited(tmp_path / "guarded", workers=WORKERS, driver_body=NO_CALLS, extra={
        **_generation(", refit_timeout_s=None"), "examples/run_grpo.py": guarded})
    assert clean.findings == []
