"""A config naming an unregistered module is refused without that module ever being imported.

`tests.hardening.untrusted_side_effect` writes a marker file when imported, and is
importable by the driver, by a CLI subprocess (the repository is on its PYTHONPATH)
and by the Ray workers (the session cluster puts the repository on theirs). Every
refusal below must leave the marker absent; the positive controls show that an import
would have written it.
"""

from __future__ import annotations

import copy
import os
import sys
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import ray
from nemo_rl.distributed.inventory import ray_record
from nemo_rl.distributed.virtual_cluster import RayVirtualCluster
from nemo_rl.models.policy.lm_policy import Policy

from bench.bench_support import child_env, run_child
from nemo_rl_workers.errors import WorkerConfigError
from nemo_rl_workers.reading.loader import load_config
from tests.ray.observed import control_start_is_seen

MODULE = "tests.hardening.untrusted_side_effect"
FQN = f"{MODULE}.SideEffectWorker"
MARKER = Path(tempfile.gettempdir()) / f"nemo_rl_untrusted_import_{os.getuid()}.marker"
CONFIGS = Path(__file__).resolve().parents[2] / "examples" / "configs"
FIELD = "policy.worker_extension_cls_fqn"


@pytest.fixture(autouse=True)
def no_marker() -> Iterator[None]:
    MARKER.unlink(missing_ok=True)
    assert MODULE not in sys.modules
    yield
    MARKER.unlink(missing_ok=True)


def untrusted_policy() -> dict[str, Any]:
    section: dict[str, Any] = load_config(CONFIGS / "grpo_tiny.yaml")["policy"]
    section["worker_extension_cls_fqn"] = FQN
    return section


def write_config(folder: Path) -> Path:
    path = folder / "untrusted.yaml"
    path.write_text(
        f"defaults: {CONFIGS / 'grpo_tiny.yaml'}\npolicy:\n  worker_extension_cls_fqn: {FQN}\n"
    )
    return path


def test_the_module_would_write_the_marker_if_imported() -> None:
    """Positive control, in a subprocess so that this process never imports it."""
    run = run_child([sys.executable, "-c", f"import {MODULE}"], env=child_env())
    assert run.returncode == 0, run.stderr
    assert MARKER.exists()


@pytest.mark.parametrize("command", ["check", "resolve"])
def test_cli_refuses_without_importing(command: str, tmp_path: Path) -> None:
    cli = [sys.executable, "-m", "nemo_rl_workers", command, str(write_config(tmp_path))]
    run = run_child(cli, env=child_env())
    assert run.returncode == 1, (run.stdout, run.stderr)
    assert f"{FIELD}={FQN} is not registered" in run.stdout
    assert not MARKER.exists()


@pytest.mark.ray
def test_policy_refuses_without_importing_in_driver_or_worker(ray_cluster: None) -> None:
    cluster = RayVirtualCluster([1], use_gpus=False, name="untrusted")
    named = untrusted_policy()  # the FQN in the config
    unnamed = untrusted_policy()  # the FQN as the deprecated constructor argument (R0)
    del unnamed["worker_extension_cls_fqn"]
    configs_before = copy.deepcopy((named, unnamed))
    before = ray_record()
    try:
        with pytest.raises(WorkerConfigError) as in_config:
            Policy(cluster, named, name_prefix="untrusted")
        with pytest.raises(WorkerConfigError) as as_argument, warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            Policy(cluster, unnamed, name_prefix="untrusted",  # type: ignore[deprecated]  # R0 under test
                   worker_extension_cls_fqn=FQN)
    finally:
        cluster.shutdown()
    for err in (in_config.value, as_argument.value):
        assert (err.path, err.given) == (FIELD, FQN)
        assert "not registered" in str(err)
    assert (named, unnamed) == configs_before
    created = ray_record().since(before)  # Ray's record: dead actors, removed groups too
    assert created.empty, created.describe()  # no worker and no placement group, ever
    assert MODULE not in sys.modules
    assert not MARKER.exists()
    control_start_is_seen(cluster)  # the same measure sees a real start on this cluster


@pytest.mark.ray
def test_a_ray_worker_could_import_it(ray_cluster: None) -> None:
    """Positive control: the workers of this cluster can import the module (and write the
    marker), so the refusal above is what kept them from it."""

    @ray.remote(num_cpus=0)
    def import_it() -> bool:
        import importlib

        importlib.import_module(MODULE)
        return True

    assert ray.get(import_it.remote(), timeout=120) is True
    assert MARKER.exists()
