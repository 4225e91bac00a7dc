"""Every rejection happens before allocation: Ray's own record (dead actors and removed
placement groups included) shows nothing was ever created, while the same test's positive
control shows a real start on the same cluster is seen; the caller's config is left exactly
as it was."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from nemo_rl.distributed.verification import clear_verification_cache, verification_report
from nemo_rl.distributed.virtual_cluster import RayVirtualCluster
from nemo_rl.models.generation.vllm.vllm_generation import VllmGeneration
from nemo_rl.models.policy.lm_policy import Policy

from nemo_rl_workers.model.registry import DRIVER_ENV, ActorEnvironment
from nemo_rl_workers.reading.loader import load_config
from tests.ray.fault_workers import (
    BadInitWorker,
    MissingMethodWorker,
    NotASubclassWorker,
    WrongSignatureWorker,
    fault_registry,
    fqn_of,
)
from tests.ray.observed import refused_cleanly

pytestmark = pytest.mark.ray

CONFIGS = Path(__file__).resolve().parents[2] / "examples" / "configs"
FIELD = "policy.worker_extension_cls_fqn"
AUTOMODEL_DEFAULT = (
    "nemo_rl.models.policy.workers.automodel_policy_worker.AutomodelPolicyWorker"
)
AUTOMODEL_QUANT = (
    "nemo_rl.modelopt.models.policy.workers.automodel_quant_policy_worker."
    "AutomodelQuantPolicyWorker"
)
MEGATRON_QUANT = (
    "nemo_rl.modelopt.models.policy.workers.megatron_quant_policy_worker."
    "MegatronQuantPolicyWorker"
)
VLLM_SYNC = "nemo_rl.models.generation.vllm.vllm_worker.VllmGenerationWorker"
VLLM_ASYNC_QUANT = (
    "nemo_rl.modelopt.models.generation.vllm_quant_worker.VllmQuantAsyncGenerationWorker"
)


@pytest.fixture
def cluster(ray_cluster: None) -> Iterator[RayVirtualCluster]:
    cluster = RayVirtualCluster([2], use_gpus=False, name="rejections")
    yield cluster
    cluster.shutdown()


def plain_policy() -> dict[str, Any]:
    section: dict[str, Any] = load_config(CONFIGS / "grpo_tiny.yaml")["policy"]
    return section


def quant_policy() -> dict[str, Any]:
    section: dict[str, Any] = load_config(CONFIGS / "grpo_tiny_int8.yaml")["policy"]
    return section


def test_r5_other_backends_quantized_worker(cluster: RayVirtualCluster) -> None:
    config: dict[str, Any] = load_config(CONFIGS / "mismatched_quant.yaml")["policy"]
    err = refused_cleanly(lambda: Policy(cluster, config), config, cluster)
    assert err.path == FIELD
    assert err.expected == AUTOMODEL_QUANT
    assert err.given == MEGATRON_QUANT
    assert "megatron backend" in str(err)


def test_wrong_vllm_mode(cluster: RayVirtualCluster) -> None:
    generation = quant_policy()["generation"]
    generation["vllm_cfg"]["async_engine"] = True  # the sync quantized worker is named
    err = refused_cleanly(
        lambda: VllmGeneration(cluster, generation, defer_model_load=True), generation, cluster
    )
    assert err.path == "policy.generation.worker_extension_cls_fqn"
    assert err.expected == VLLM_ASYNC_QUANT
    assert "vLLM sync mode" in str(err)


def test_unregistered_fqn(cluster: RayVirtualCluster) -> None:
    config = plain_policy()
    config["worker_extension_cls_fqn"] = "my_pkg.workers.CustomPolicyWorker"
    err = refused_cleanly(lambda: Policy(cluster, config), config, cluster)
    assert err.path == FIELD
    assert err.given == "my_pkg.workers.CustomPolicyWorker"
    assert "not registered" in str(err)


def test_default_worker_of_another_role(cluster: RayVirtualCluster) -> None:
    config = plain_policy()
    config["worker_extension_cls_fqn"] = VLLM_SYNC
    err = refused_cleanly(lambda: Policy(cluster, config), config, cluster)
    assert err.given == VLLM_SYNC
    assert err.expected == f"a subclass of {AUTOMODEL_DEFAULT}"


def test_not_a_subclass_of_the_default_worker(cluster: RayVirtualCluster) -> None:
    config = plain_policy()
    fqn = fqn_of(NotASubclassWorker)
    config["worker_extension_cls_fqn"] = fqn
    err = refused_cleanly(
        lambda: Policy(cluster, config, registry=fault_registry()), config, cluster
    )
    assert {p.path for p in err.problems} == {FIELD}
    assert {p.given for p in err.problems} == {fqn}
    expected = f"a class implementing PolicyWorker and a subclass of {AUTOMODEL_DEFAULT}"
    assert err.expected == expected
    assert any("AutomodelPolicyWorker" in p.message and "subclass" in p.message
               for p in err.problems)


def test_missing_protocol_method(cluster: RayVirtualCluster) -> None:
    config = plain_policy()
    config["worker_extension_cls_fqn"] = fqn_of(MissingMethodWorker)
    err = refused_cleanly(
        lambda: Policy(cluster, config, registry=fault_registry()), config, cluster
    )
    missing = [p for p in err.problems if "PolicyWorker.get_logprobs" in p.message]
    assert len(missing) == 1
    assert missing[0].path == FIELD


def test_wrong_signature(cluster: RayVirtualCluster) -> None:
    config = plain_policy()
    config["worker_extension_cls_fqn"] = fqn_of(WrongSignatureWorker)
    err = refused_cleanly(
        lambda: Policy(cluster, config, registry=fault_registry()), config, cluster
    )
    assert len(err.problems) == 1
    assert "PolicyWorker.train" in err.problems[0].message
    assert "scale" in err.problems[0].message


def test_constructor_cannot_bind_builder_arguments(cluster: RayVirtualCluster) -> None:
    config = plain_policy()
    config["worker_extension_cls_fqn"] = fqn_of(BadInitWorker)
    err = refused_cleanly(
        lambda: Policy(cluster, config, registry=fault_registry()), config, cluster
    )
    assert len(err.problems) == 1
    assert "device" in err.problems[0].message


def test_unknown_quant_cfg(cluster: RayVirtualCluster) -> None:
    config = quant_policy()
    config["quant_cfg"] = "NOT_A_MODELOPT_CFG"
    err = refused_cleanly(lambda: Policy(cluster, config), config, cluster)
    assert err.path == "policy.quant_cfg"
    assert err.given == "NOT_A_MODELOPT_CFG"


def test_outdated_config_and_resolver_problems_come_together(cluster: RayVirtualCluster) -> None:
    config = plain_policy()
    config["dtensor_cfg"] = config.pop("automodel_cfg")
    config["megatron_cfg"]["enabled"] = True
    config["quant_cfg"] = "INT8_DEFAULT_CFG"
    config["worker_extension_cls_fqn"] = AUTOMODEL_QUANT
    err = refused_cleanly(lambda: Policy(cluster, config), config, cluster)
    paths = [p.path for p in err.problems]
    assert "policy.dtensor_cfg" in paths
    assert FIELD in paths  # R5: megatron is the enabled backend now


def test_conflicting_deprecated_argument(cluster: RayVirtualCluster) -> None:
    config = quant_policy()
    config["worker_extension_cls_fqn"] = AUTOMODEL_QUANT

    def make() -> Policy:
        with pytest.warns(DeprecationWarning):
            return Policy(cluster, config, worker_extension_cls_fqn=AUTOMODEL_DEFAULT)  # type: ignore[deprecated]  # R0 under test

    err = refused_cleanly(make, config, cluster)
    assert err.path == FIELD
    assert AUTOMODEL_QUANT in str(err) and AUTOMODEL_DEFAULT in str(err)
    assert err.problems[0].rule == "R0"


def test_preflight_rules_refuse_before_allocation(cluster: RayVirtualCluster) -> None:
    """Issue 7: the preflight rules run inside Policy, all at once, before anything exists."""
    config = plain_policy()
    config["automodel_cfg"]["tensor_parallel_size"] = 3  # does not divide the world size 2
    config["generation"]["vllm_cfg"]["fp32_lm_head"] = "false"  # a string is never a bool
    err = refused_cleanly(lambda: Policy(cluster, config), config, cluster)
    found = {(p.rule, p.path) for p in err.problems}
    assert found == {
        ("preflight.parallelism.fits", "policy.automodel_cfg"),
        ("preflight.fp32_lm_head.type", "policy.generation.vllm_cfg.fp32_lm_head"),
    }
    (parallel,) = [p for p in err.problems if p.rule == "preflight.parallelism.fits"]
    assert "3" in parallel.given and "2" in parallel.message  # the product and the world size


def test_r7_non_vllm_generation_backend_with_a_worker_class(cluster: RayVirtualCluster) -> None:
    generation = plain_policy()["generation"]
    generation["backend"] = "megatron"
    generation["worker_extension_cls_fqn"] = VLLM_SYNC
    err = refused_cleanly(
        lambda: VllmGeneration(cluster, generation, defer_model_load=True), generation, cluster
    )
    assert err.problems[0].rule == "R7"
    assert err.path == "policy.generation.worker_extension_cls_fqn"


def test_missing_interpreter_of_the_workers_environment(cluster: RayVirtualCluster) -> None:
    config = plain_policy()
    fqn = fqn_of(MissingMethodWorker)
    config["worker_extension_cls_fqn"] = fqn
    gone = ActorEnvironment("gone", py_executable="/nonexistent/venv/bin/python")
    err = refused_cleanly(
        lambda: Policy(cluster, config, registry=fault_registry({fqn: gone})), config, cluster
    )
    (problem,) = err.problems
    assert problem.rule == "environment"
    assert "/nonexistent/venv/bin/python" in problem.message


DRIVER_ONLY_MODULE = """
from nemo_rl.models.policy.workers.automodel_policy_worker import AutomodelPolicyWorker


class DriverOnlyWorker(AutomodelPolicyWorker):
    \"\"\"Correct in every way, but its module lies on the driver's path only.\"\"\"
"""


def test_class_only_on_the_drivers_path_is_refused_before_allocation(
    cluster: RayVirtualCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The driver can import it (its contract check passes in-process); the actors, started
    # by Ray with the cluster's own path, cannot: refused before any placement group.
    (tmp_path / "driver_only_pkg.py").write_text(DRIVER_ONLY_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    fqn = "driver_only_pkg.DriverOnlyWorker"
    config = plain_policy()
    config["worker_extension_cls_fqn"] = fqn
    registry = fault_registry({fqn: DRIVER_ENV})
    clear_verification_cache()
    for _ in range(2):  # once per class: the second refusal is the cached verdict
        err = refused_cleanly(lambda: Policy(cluster, config, registry=registry), config, cluster)
    (problem,) = err.problems
    assert problem.rule == "import.actors"
    assert problem.path == FIELD and problem.given == fqn
    assert "\n" not in problem.message
    assert problem.message.startswith(f"{FIELD}={fqn} is importable in {sys.executable} (pid ")
    assert "but not where its actors run" in problem.message
    assert "no module named 'driver_only_pkg'" in problem.message
    kinds = [(run.kind, run.fqn, run.passed) for run in verification_report()]
    assert kinds.count(("contract", fqn, True)) == 1  # the driver's view: fine
    assert kinds.count(("actors-import", fqn, False)) == 1  # the actors' view, asked once
    (probe,) = [run for run in verification_report()
                if run.kind == "actors-import" and run.fqn == fqn]
    assert probe.where.pid != os.getpid()  # asked in another process, not the driver
