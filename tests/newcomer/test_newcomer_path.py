"""A newcomer's first extension, from the first line to the first run, then the usual mistakes.

One test, in the order a new user meets things: write a worker with one new method,
register it through an entry point (a real `pip install`), select it in YAML, list,
check and verify it with the CLI, run it with the guide's driver script on the session's
Ray cluster, then make the mistakes of issue 16 and read what each one says.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from nemo_rl.distributed.inventory import ray_resources_snapshot
from nemo_rl.distributed.virtual_cluster import RayVirtualCluster
from nemo_rl.models.policy.lm_policy import Policy

from nemo_rl_workers.errors import WorkerConfigError
from nemo_rl_workers.model.registry import build_registry
from nemo_rl_workers.reading.loader import load_config
from tests.docs.snippets import REPO, VENV_BIN

pytestmark = [pytest.mark.ray, pytest.mark.slow]

WORKERS = '''\
"""My first worker extension: the Automodel policy worker, plus one method."""

from __future__ import annotations

from typing import Any

from nemo_rl.models.policy.workers.automodel_policy_worker import AutomodelPolicyWorker


class CountingWorker(AutomodelPolicyWorker):
    def count_parameters(self) -> int:
        return sum(p.numel() for p in self.model.parameters())


class TwoArgWorker(AutomodelPolicyWorker):
    """A mistake: the builder calls Worker(config, rank=..., world_size=...)."""

    def __init__(self, config: dict[str, Any]) -> None:
        super().__init__(config, rank=0, world_size=1)
'''

PROTOCOLS = '''\
"""The contract of my extension: the policy worker's, plus the new method."""

from typing import Protocol

from contracts.protocols import PolicyWorker


class ParameterCounter(PolicyWorker, Protocol):
    def count_parameters(self) -> int: ...
'''

REGISTRATION = '''\
from first_ext.protocols import ParameterCounter
from nemo_rl_workers.model.registry import DRIVER_ENV, WorkerPlugin

PLUGIN = WorkerPlugin(
    environments={"first_ext.workers.CountingWorker": DRIVER_ENV},
    protocols={"first_ext.workers.CountingWorker": ParameterCounter},
)
'''

PYPROJECT = '''\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "first-ext"
version = "0.1.0"

[project.entry-points."nemo_rl.workers"]
first_ext = "first_ext.registration:PLUGIN"
'''

FQN = "first_ext.workers.CountingWorker"
TEMPLATE_CONFIG = REPO / "research" / "template_project" / "configs" / "single_update.yaml"
TEMPLATE_FQN = "template_project.workers.TemplateAutomodelPolicyWorker"
DRIVER = REPO / "research" / "template_project" / "driver.py"


@pytest.fixture
def cluster(ray_cluster: None) -> Iterator[RayVirtualCluster]:
    cluster = RayVirtualCluster([2], use_gpus=False, name="newcomer-mistakes")
    yield cluster
    cluster.shutdown()


def _install(tmp_path: Path) -> Path:
    """Write the project and pip-install it into its own site folder (entry point included)."""
    project = tmp_path / "first-ext"
    (project / "first_ext").mkdir(parents=True)
    (project / "first_ext" / "__init__.py").write_text("")
    (project / "first_ext" / "workers.py").write_text(WORKERS)
    (project / "first_ext" / "protocols.py").write_text(PROTOCOLS)
    (project / "first_ext" / "registration.py").write_text(REGISTRATION)
    (project / "pyproject.toml").write_text(PYPROJECT)
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                    "--no-build-isolation", "--target", str(site), str(project)],
                   check=True, capture_output=True, timeout=300)
    assert (site / "first_ext-0.1.0.dist-info" / "entry_points.txt").is_file()
    return site


def _config(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_write_register_select_check_run_and_the_mistakes(
    tmp_path: Path, cluster: RayVirtualCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = _install(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "NO_COLOR")}
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env['PATH']}"
    env["PYTHONPATH"] = str(site)

    def cli(*argv: str) -> tuple[int, str, str]:
        done = subprocess.run(["nemo-rl-workers", *argv], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300, check=False)
        assert "Traceback" not in done.stderr, done.stderr
        return done.returncode, done.stdout, done.stderr

    # Select it in YAML: the template's config with the newcomer's class.
    good_text = TEMPLATE_CONFIG.read_text().replace(TEMPLATE_FQN, FQN)
    good = _config(tmp_path, "first.yaml", good_text)

    # `list` shows it, registered by its entry point, in the driver's environment.
    code, out, _ = cli("list", "--json")
    (mine,) = [e for e in json.loads(out)["extensions"] if e["fqn"] == FQN]
    assert code == 0 and mine["env"] == "driver"
    assert mine["protocol"] == "first_ext.protocols.ParameterCounter"
    assert mine["source"] == "entry point 'first_ext' (first_ext.registration:PLUGIN)"

    # `check` passes, with the world size from `cluster:` (no flag, nothing skipped).
    code, out, _ = cli("check", "-v", str(good))
    assert code == 0, out
    assert "  world size: 2 (cluster.gpus_per_node (2) x cluster.num_nodes (1) = 2)" in out
    assert "skipped" not in out
    assert "R2    config  first_ext.protocols.ParameterCounter  driver  " in out

    # `verify` without flags checks what the builder will do.
    code, out, _ = cli("verify", FQN, "--protocol", "PolicyWorker")
    assert (code, out.splitlines()[0]) == (0, f"{FQN} implements PolicyWorker")
    assert "role policy (from PolicyWorker)" in out

    # Run: the guide's driver, with the newcomer's Protocol and method, on the session's
    # Ray cluster (narrowed to ParameterCounter, the call typed).
    # The job's runtime environment carries the site folder to the workers, as
    # `ray job submit --runtime-env-json` would.
    import ray

    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER.read_text().replace("get_weight_norm", "count_parameters")
                      .replace("template_project.protocols", "first_ext.protocols")
                      .replace("WeightNormWorker", "ParameterCounter")
                      .replace("{norm:.4f}", "{norm}"))
    run_env = dict(env, RAY_ADDRESS=ray.get_runtime_context().gcs_address,
                   RAY_JOB_CONFIG_JSON_ENV_VAR=json.dumps(
                       {"runtime_env": {"env_vars": {"PYTHONPATH": str(site)}}}))
    before = ray_resources_snapshot()
    done = subprocess.run([sys.executable, str(driver), str(good)], cwd=tmp_path, env=run_env,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"{FQN} runs on 2 workers"
    counts = [int(line.rsplit(" = ", 1)[1]) for line in lines[1:]]
    assert len(counts) == 2 and counts[0] == counts[1] > 0
    assert ray_resources_snapshot() == before  # the driver shut down all it started

    # Mistake 1: a misspelled FQN of a registered class gets the right name.
    typo = _config(tmp_path, "typo.yaml", good_text.replace("CountingWorker", "CountingWorkr"))
    code, out, _ = cli("check", "--json", str(typo))
    (problem,) = json.loads(out)["problems"]
    assert (code, problem["rule"], problem["line"]) == (1, "R2", 7)
    assert f"did you mean {FQN}?" in problem["message"]

    # ... and Policy, given the loaded config, says the same at the same file and line.
    monkeypatch.syspath_prepend(str(site))
    with pytest.raises(WorkerConfigError) as err:
        Policy(cluster, load_config(typo)["policy"], registry=build_registry())
    assert str(err.value).startswith(f"{typo}:7: policy.worker_extension_cls_fqn=")
    assert f"did you mean {FQN}?" in str(err.value)

    # Mistake 2: a misspelled key would have silently run the default worker.
    key = _config(tmp_path, "key.yaml", good_text.replace(
        "worker_extension_cls_fqn:", "worker_extention_cls_fqn:"))
    code, out, _ = cli("check", "--json", str(key))
    (problem,) = json.loads(out)["problems"]
    assert (code, problem["rule"], problem["expected"]) == (
        1, "key", "policy.worker_extension_cls_fqn")

    # Mistake 3: a constructor the builder cannot call is refused without --role.
    code, out, _ = cli("verify", "first_ext.workers.TwoArgWorker", "--protocol", "PolicyWorker",
                       "--json")
    assert code == 1 and [v["rule"] for v in json.loads(out)["violations"]] == ["init"]

    # Mistake 4: quant_cfg with a custom extension is refused before allocation (R5).
    quant = _config(tmp_path, "quant.yaml", good_text.replace(
        "  megatron_cfg:", "  quant_cfg: INT8_DEFAULT_CFG\n  megatron_cfg:", 1))
    code, out, _ = cli("check", "--json", "--no-verify", str(quant))
    assert code == 1 and [p["rule"] for p in json.loads(out)["problems"]] == ["R5"]
    assert ray_resources_snapshot() == before
