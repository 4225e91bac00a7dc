"""#28 item 4: older trees: workers chosen by class object (directly, by a conditional,
through a local), a `nemo_rl` without `__init__.py`, and the second corpus tree
(upstream at 2025-09, another layout). Each as a pair: the defect found, the fixed tree
clean."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from nemo_rl_workers.checks.audit import AuditReport, audit
from tests.audit.tree import audited, keys, mutated_copy, write_tree
from tests.corpus import NEMO_RL_2025_09

OLD = NEMO_RL_2025_09.resolve()

WORKERS = '''
class SyncWorker:
    def generate(self, data):
        return data


class AsyncWorker:
    async def generate_async(self, data):
        return data
'''


def _driver(select: str, method: str) -> str:
    return f'''
from nemo_rl.distributed.worker_groups import RayWorkerBuilder, RayWorkerGroup
from nemo_rl.workers import AsyncWorker, SyncWorker


class Gen:
    def __init__(self, cfg):
        self.cfg = cfg
{select}
        self.worker_group = RayWorkerGroup(builder)

    def generate(self, data):
        if self.cfg["vllm_cfg"]["async_engine"]:
            raise RuntimeError("sync only")
        return self.worker_group.run_all_workers_single_data("{method}", data=data)
'''


DIRECT = "        builder = RayWorkerBuilder(SyncWorker, cfg)"
CONDITIONAL = '''        worker_cls = AsyncWorker if cfg["vllm_cfg"]["async_engine"] else SyncWorker
        builder = RayWorkerBuilder(worker_cls, cfg)'''
BRANCHES = '''        if self.cfg["vllm_cfg"]["async_engine"]:
            worker_cls = AsyncWorker
        else:
            worker_cls = SyncWorker
        builder = RayWorkerBuilder(worker_cls, cfg)'''


@pytest.mark.parametrize("select", [DIRECT, CONDITIONAL, BRANCHES],
                         ids=["class object", "conditional", "if/else local"])
def test_a_worker_chosen_by_class_object_is_judged(tmp_path: Path, select: str) -> None:
    bad = audited(tmp_path / "bad", workers=WORKERS, driver_body="",
                  extra={"nemo_rl/driver.py": _driver(select, "generate_sync")})
    assert keys(bad) == {("missing-method", "Gen.generate", "generate_sync", "SyncWorker")}
    (driver,) = bad.drivers
    assert {c.fqn.rsplit(".", 1)[-1] for c in driver.choices} == (
        {"SyncWorker"} if select == DIRECT else {"SyncWorker", "AsyncWorker"})
    good = audited(tmp_path / "good", workers=WORKERS, driver_body="",
                   extra={"nemo_rl/driver.py": _driver(select, "generate")})
    assert good.findings == [] and good.sites == good.resolved == 1


def _without_inits(root: Path) -> Path:
    for init in root.rglob("__init__.py"):
        init.unlink()
    return root


def test_a_nemo_rl_without_init_is_audited(tmp_path: Path) -> None:
    """A namespace package (no `__init__.py`) is a NeMo-RL checkout, not refused."""
    bad = _without_inits(write_tree(tmp_path / "bad", workers=WORKERS, driver_body="",
                                    extra={"nemo_rl/driver.py": _driver(DIRECT, "nope")}))
    assert not (bad / "nemo_rl" / "__init__.py").exists()
    report = audit(bad, stubs=[])
    assert keys(report) == {("missing-method", "Gen.generate", "nope", "SyncWorker")}
    good = _without_inits(write_tree(tmp_path / "good", workers=WORKERS, driver_body="",
                                     extra={"nemo_rl/driver.py": _driver(DIRECT, "generate")}))
    assert audit(good, stubs=[]).findings == []
    assert audit(good / "nemo_rl", stubs=[]).findings == []  # the package folder itself


# The second corpus tree: exactly these, each checked by hand (`grep -n "def generate"`
# finds it only on the vLLM sync worker and on Megatron's policy worker at 2025-09).
OLD_EXPECTED = {
    ("missing-method", "VllmGeneration.generate", "generate", "VllmAsyncGenerationWorker"),
    ("missing-method", "Policy.generate", "generate", "DTensorPolicyWorker"),
    ("missing-method", "Policy.generate", "generate", "DTensorPolicyWorkerV2"),
}


@pytest.fixture(scope="module")
def old() -> AuditReport:
    if not (OLD / "nemo_rl").is_dir():
        pytest.skip(f"corpus absent: {OLD}")
    return audit(OLD)


def test_the_older_corpus_findings_are_the_verified_ones(old: AuditReport) -> None:
    assert keys(old) == OLD_EXPECTED
    assert old.problems == [] and old.sites == old.resolved


def test_the_older_corpus_without_init_files_gives_the_same(
    old: AuditReport, tmp_path: Path
) -> None:
    copy = tmp_path / "old"
    shutil.copytree(OLD / "nemo_rl", copy / "nemo_rl", symlinks=True)
    assert keys(audit(_without_inits(copy))) == OLD_EXPECTED


def test_a_method_renamed_on_the_worker_side_of_the_older_corpus(
    old: AuditReport, tmp_path: Path
) -> None:
    copy = mutated_copy(OLD, tmp_path, "nemo_rl/models/policy/dtensor_policy_worker_v2.py",
                        "    def get_logprobs(", "    def get_logprobs_renamed(")
    new = keys(audit(copy)) - OLD_EXPECTED
    assert new == {("missing-method", "Policy.get_logprobs", "get_logprobs",
                    "DTensorPolicyWorkerV2")}


def test_a_keyword_added_to_a_call_of_the_older_corpus(old: AuditReport, tmp_path: Path) -> None:
    copy = mutated_copy(OLD, tmp_path, "nemo_rl/models/policy/lm_policy.py",
                        '"get_logprobs",\n', '"get_logprobs",\n            topk=3,\n')
    new = keys(audit(copy)) - OLD_EXPECTED
    assert new == {("unknown-keyword", "Policy.get_logprobs", "get_logprobs", name)
                   for name in ("DTensorPolicyWorker", "DTensorPolicyWorkerV2",
                                "MegatronPolicyWorker")}


def test_an_override_a_base_calls_with_an_argument_in_a_copy_of_the_older_corpus(
    old: AuditReport, tmp_path: Path
) -> None:
    """The worker's `_create_engine(self, llm_kwargs)` made `(self)`: its base's
    `__init__` still calls `self._create_engine(llm_kwargs)` (vllm_worker.py:401). The
    worker a driver starts is judged like the tree's subclasses of it."""
    copy = mutated_copy(OLD, tmp_path, "nemo_rl/models/generation/vllm/vllm_worker.py",
                        "    def _create_engine(self, llm_kwargs: dict[str, Any]) -> None:",
                        "    def _create_engine(self) -> None:")
    new = keys(audit(copy)) - OLD_EXPECTED
    assert new == {("base-call-too-many-positional", "BaseVllmGenerationWorker.__init__",
                    "_create_engine", "VllmGenerationWorker")}
