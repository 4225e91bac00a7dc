"""The audit on upstream NeMo-RL at 7ea279a (the corpus): exactly the findings verified
by hand against the source, and at least 90% of dispatch call sites resolved.

Each was checked by hand: for a missing method, no class of the worker's MRO defines it
(grep for `def <method>` over the tree finds it only on the other backend's workers);
for a stub, the definition named is `raise NotImplementedError` (in the worker itself,
in `AbstractPolicyWorker` or in `ColocatablePolicyInterface`); for a base call, the base's
call and the override's parameters, both read at the lines named.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nemo_rl_workers.checks.audit import AuditReport, audit
from tests.audit.tree import mutated_copy
from tests.corpus import NEMO_RL

CORPUS = NEMO_RL.resolve()

DTENSOR_V1 = {"DTensorPolicyWorker", "DTensorQuantPolicyWorker"}
DTENSOR = DTENSOR_V1 | {"DTensorPolicyWorkerV2", "DTensorQuantPolicyWorkerV2"}
MEGATRON = {"MegatronPolicyWorker", "MegatronQuantPolicyWorker"}
# (rule, driver function, worker method) -> the worker classes (by class name).
EXPECTED: dict[tuple[str, str, str], set[str]] = {
    ('missing-method', 'Policy.finish_inference',
     'finish_inference'): DTENSOR_V1,
    ('missing-method', 'Policy.generate',
     'generate'): DTENSOR,
    ('missing-method', 'Policy.get_full_logits_ipc',
     'get_full_logits_ipc'): DTENSOR_V1 | MEGATRON,
    ('missing-method', 'Policy.init_collective_mcore_generation',
     'init_collective_mcore_generation'): DTENSOR,
    ('missing-method', 'Policy.preinit_nvshmem',
     'preinit_nvshmem_collective'): DTENSOR,
    ('missing-method', 'Policy.release_ipc_buffer',
     'release_ipc_buffer'): DTENSOR_V1 | MEGATRON,
    ('missing-method', 'Policy.score',
     'score'): MEGATRON,
    ('missing-method', 'Policy.swap_weights_via_reshard',
     'swap_weights_via_reshard'): DTENSOR,
    ('missing-method', 'VllmGeneration.generate',
     'generate'): {'VllmAsyncGenerationWorker', 'VllmQuantAsyncGenerationWorker'},
    ('missing-method', 'VllmGeneration.load_and_start',
     'load_model'): {'VllmGenerationWorker', 'VllmQuantGenerationWorker'},
    ('missing-method', 'VllmRemoteSparseWeightSynchronizer._run_policy_workers',
     'stream_remote_sparse_weights'): DTENSOR,
    ('missing-method', 'VllmRemoteSparseWeightSynchronizer.start_baseline',
     'init_remote_sparse_delta_baseline'): DTENSOR,
    ('missing-method', 'VllmRemoteSparseWeightSynchronizer.sync_weights',
     'finish_remote_sparse_delta_sync'): DTENSOR,
    ('stub-body', 'MegatronGeneration.generate',
     'generate'): {'MegatronQuantPolicyWorker'},
    # A worker class a driver starts, judged as the tree's own subclasses are: the base's
    # `_broadcast_misc_params_packed` (megatron_policy_worker.py:2919) passes
    # `conversion_tasks=` to `self._iter_params_with_optional_kv_scales`, which the
    # ModelOpt worker overrides as `(self, kv_scales=None)` (megatron_quant_policy_worker.py:606).
    ('base-call-unknown-keyword', 'MegatronPolicyWorkerImpl._broadcast_misc_params_packed',
     '_iter_params_with_optional_kv_scales'): {'MegatronQuantPolicyWorker'},
    ('stub-body', 'Policy.calibrate_qkv_fp8_scales',
     'calibrate_qkv_fp8_scales'): DTENSOR,
    ('stub-body', 'Policy.generate',
     'generate'): {'MegatronQuantPolicyWorker'},
    ('stub-body', 'Policy.nccl_reshard_refit',
     'nccl_reshard_refit'): DTENSOR,
    ('stub-body', 'Policy.prepare_nccl_reshard_refit_info',
     'prepare_nccl_reshard_refit_info'): DTENSOR,
    ('stub-body', 'Policy.set_rollout_num_gpus_per_engine',
     'set_rollout_num_gpus_per_engine'): DTENSOR_V1 | MEGATRON,
    ('stub-body', 'Policy.stream_weights_via_http',
     'stream_weights_via_http'): DTENSOR_V1 | MEGATRON,
}


@pytest.fixture(scope="module")
def report() -> AuditReport:
    if not (CORPUS / "nemo_rl").is_dir():
        pytest.skip(f"corpus absent: {CORPUS}")
    return audit(CORPUS)


def test_the_corpus_findings_are_exactly_the_verified_ones(report: AuditReport) -> None:
    found: dict[tuple[str, str, str], set[str]] = {}
    for f in report.findings:
        found.setdefault((f.rule, f.driver, f.method), set()).update(
            w.rsplit(".", 1)[-1] for w in f.classes)
    assert found == EXPECTED
    assert len(report.per_class) == sum(map(len, EXPECTED.values()))
    assert report.problems == []


def test_each_cause_is_one_finding_listing_its_classes(report: AuditReport) -> None:
    """A gap the quantized variants inherit is one line: same call, method and the class
    where the method is missing (the MRO's end) or the stub is."""
    causes = {(f.rule, f.call, f.method, f.definition) for f in report.per_class}
    assert len(report.findings) == len(causes) == 22
    load = next(f for f in report.findings if f.method == "load_model")
    assert [w.rsplit(".", 1)[-1] for w in load.workers] == [
        "VllmQuantGenerationWorker", "VllmGenerationWorker"]
    assert "VllmQuantGenerationWorker and " in load.message
    assert set(load.keys) == {k for k in (f.key for f in report.per_class)
                              if k[2] == "load_model"}


def test_at_least_90_percent_of_dispatch_call_sites_resolve(report: AuditReport) -> None:
    assert report.sites >= 100
    assert report.resolved / report.sites >= 0.9
    assert {u.function for u in report.unresolved} == {
        "Policy.run_all_workers_single_data",  # public pass-throughs: no caller in the tree
        "Policy.run_all_workers_multiple_data",
        "SingleControllerActor._probe_generation_fleet.probe",  # a group of unknown owner
    }


def test_the_drivers_and_their_switches(report: AuditReport) -> None:
    drivers = {d.name: d for d in report.drivers}
    for name in ("Policy", "VllmGeneration", "TeacherWorkerGroup", "Value",
                 "TrtllmGeneration", "SGLangGeneration"):
        assert name in drivers
    vllm = {c.fqn.rsplit(".", 1)[-1]: c.condition for c in drivers["VllmGeneration"].choices}
    assert vllm == {
        "VllmAsyncGenerationWorker": frozenset({("async_engine", True)}),
        "VllmQuantAsyncGenerationWorker": frozenset({("async_engine", True)}),
        "VllmGenerationWorker": frozenset({("async_engine", False)}),
        "VllmQuantGenerationWorker": frozenset({("async_engine", False)}),
    }
    policy = {c.fqn.rsplit(".", 1)[-1] for c in drivers["Policy"].choices}
    assert policy == {"MegatronPolicyWorker", "MegatronQuantPolicyWorker", "DTensorPolicyWorker",
                      "DTensorQuantPolicyWorker", "DTensorPolicyWorkerV2",
                      "DTensorQuantPolicyWorkerV2"}
    assert all(w.definition is not None for w in report.workers)


def test_a_keyword_typo_in_a_copy_of_the_corpus_is_found(report: AuditReport,
                                                         tmp_path: Path) -> None:
    """The same tree with one driver keyword misspelt: exactly the new findings appear."""
    copy = mutated_copy(CORPUS, tmp_path, "nemo_rl/models/policy/lm_policy.py",
                        '"get_topk_logits",\n', '"get_topk_logits",\n                topk=k,\n')
    mutated = audit(copy)
    new = {(f.rule, f.driver, f.method, f.worker.rsplit(".", 1)[-1])
           for f in mutated.per_class} - {
        (f.rule, f.driver, f.method, f.worker.rsplit(".", 1)[-1]) for f in report.per_class}
    assert {(r, d, m) for r, d, m, _ in new} == {
        ("unknown-keyword", "Policy.get_topk_logits", "get_topk_logits")}
    assert len(new) == 6  # every policy worker the driver can start
    # One cause per class where the parameter is rejected (three definitions), each
    # listing its quantized variant.
    lines = [f for f in mutated.findings if f.rule == "unknown-keyword"]
    assert len(lines) == 3 and all(len(f.workers) == 2 for f in lines)


def _new(report: AuditReport, mutated: AuditReport) -> set[tuple[str, str, str, str]]:
    def of(r: AuditReport) -> set[tuple[str, str, str, str]]:
        return {(f.rule, f.driver, f.method, f.worker.rsplit(".", 1)[-1]) for f in r.per_class}
    return of(mutated) - of(report)


def test_a_super_target_removed_in_a_copy_of_the_corpus_is_found(
    report: AuditReport, tmp_path: Path
) -> None:
    """The base `maybe_init_zmq` renamed: the ModelOpt extension's super() call is found
    (an in-tree subclass of the class the tree hands vLLM), and nothing else."""
    copy = mutated_copy(CORPUS, tmp_path, "nemo_rl/models/generation/vllm/vllm_backend.py",
                        "    def maybe_init_zmq(self)", "    def maybe_init_zmq_gone(self)")
    assert _new(report, audit(copy)) == {(
        "extension-missing-method", "VllmQuantInternalWorkerExtension.maybe_init_zmq",
        "maybe_init_zmq", "VllmQuantInternalWorkerExtension")}


def test_a_keyword_sent_through_the_generation_interface_in_a_copy_of_the_corpus(
    report: AuditReport, tmp_path: Path
) -> None:
    """`refit_timeout_s=` added to GRPO's `policy_generation.update_weights_from_collective()`:
    every generation backend lacks it at 7ea279a (each `def update_weights_from_collective(self)`;
    Policy and TQPolicy inherit GenerationInterface's), except SGLang's, which the function
    refuses just above (`if isinstance(policy_generation, SGLangGeneration): raise`)."""
    copy = mutated_copy(
        CORPUS, tmp_path, "nemo_rl/algorithms/grpo.py",
        "policy_generation.update_weights_from_collective()",
        "policy_generation.update_weights_from_collective(refit_timeout_s=60)")
    assert _new(report, audit(copy)) == {
        ("unknown-keyword", "refit_policy_generation", "update_weights_from_collective", name)
        for name in ("VllmGeneration", "MegatronGeneration", "TrtllmGeneration",
                     "DynamoGeneration", "Policy", "TQPolicy")}


def test_findings_guarded_by_their_callers_are_guarded(report: AuditReport) -> None:
    """Checked by hand: `Policy.score` is only called by the reward-model environment
    (reward_model_environment.py:262), whose `__init__` asserts `dtensor_cfg.enabled`
    (line 116) before building that Policy (line 170), and Policy refuses Megatron and
    DTensor together (lm_policy.py:121); the IPC path is only called by xtoken
    distillation, whose setup asserts DTensor v2 (line 251) before building the teacher
    (line 388). PPO's `finish_inference` (ppo.py:1557) has no such guard."""
    reach = {(f.driver, f.method): (f.reach, f.severity, f.guard) for f in report.findings}
    assert reach[("Policy.score", "score")] == (
        "guarded", "note", "nemo_rl/environments/reward_model_environment.py:116")
    for method in ("get_full_logits_ipc", "release_ipc_buffer"):
        assert reach[(f"Policy.{method}", method)] == (
            "guarded", "note", "nemo_rl/algorithms/xtoken_off_policy_distillation.py:251")
    assert reach[("Policy.finish_inference", "finish_inference")][:2] == (
        "reachable", "error")
    assert {f.reach for f in report.findings} <= {"reachable", "guarded", "latent"}


def test_removing_the_guard_makes_the_guarded_finding_an_error(
    report: AuditReport, tmp_path: Path
) -> None:
    copy = mutated_copy(CORPUS, tmp_path, "nemo_rl/environments/reward_model_environment.py",
                        '        assert self.config["dtensor_cfg"]["enabled"], (',
                        '        assert True, (')
    (score,) = [f for f in audit(copy).findings if f.method == "score"]
    assert (score.reach, score.severity) == ("reachable", "error")


def test_a_worker_method_renamed_in_a_copy_of_the_corpus_is_one_cause(
    report: AuditReport, tmp_path: Path
) -> None:
    """Megatron's `get_topk_logits` renamed: `Policy.get_topk_logits` (lm_policy.py:672)
    now reaches only PolicyInterface's `@abstractmethod` (interfaces.py:89, a `pass` body)
    on the Megatron worker and its quantized variant: a stub, one cause."""
    copy = mutated_copy(CORPUS, tmp_path,
                        "nemo_rl/models/policy/workers/megatron_policy_worker.py",
                        "    def get_topk_logits(", "    def get_top_k_logits(")
    mutated = audit(copy)
    assert _new(report, mutated) == {
        ("stub-body", "Policy.get_topk_logits", "get_topk_logits", name)
        for name in ("MegatronPolicyWorker", "MegatronQuantPolicyWorker")}
    (cause,) = [f for f in mutated.findings if f.method == "get_topk_logits"]
    assert len(cause.workers) == 2


def test_a_keyword_sent_through_an_interface_attribute_in_a_copy_of_the_corpus(
    report: AuditReport, tmp_path: Path
) -> None:
    """The async trajectory collector holds its generation as an attribute
    (`self.policy_generation = policy_generation`, the parameter typed
    GenerationInterface): `wait=` added to its `invalidate_kv_cache()` is refused by every
    backend (each `def invalidate_kv_cache(self)`), not by Policy and TQPolicy, whose
    `invalidate_kv_cache(self, *args, **kwargs)` takes anything."""
    copy = mutated_copy(
        CORPUS, tmp_path, "nemo_rl/algorithms/async_utils/trajectory_collector.py",
        "self.policy_generation.invalidate_kv_cache()",
        "self.policy_generation.invalidate_kv_cache(wait=True)")
    new = _new(report, audit(copy))
    assert new == {("unknown-keyword", "AsyncTrajectoryCollector.resume_after_refit",
                    "invalidate_kv_cache", name)
                   for name in ("VllmGeneration", "SGLangGeneration", "MegatronGeneration",
                                "TrtllmGeneration", "DynamoGeneration")}
