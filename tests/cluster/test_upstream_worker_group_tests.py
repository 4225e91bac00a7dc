"""Upstream's own worker-group tests, guarded and unguarded: the same outcomes.

`tests/unit/distributed/test_worker_groups.py` of the 2026-08 corpus, copied into a scratch
folder and run by pytest in a subprocess with the corpus first on PYTHONPATH (upstream's
`nemo_rl` as the user's), once plainly and once with `NEMO_RL_WORKERS_GUARD=1`. Each run
starts its own local Ray cluster of 2 CPUs; the tests that need more (the 4-bundle, 2-node
cluster: 10 of 27) are deselected in both runs. Upstream's own `tests/unit/conftest.py`
is not used: it imports upstream's logger (mlflow, wandb, swanlab, tensorboard,
matplotlib, prometheus_client, none of which this environment holds); a replacement
conftest of three lines (written here, named as such) gives the one fixture the module
needs, a session Ray cluster. The module itself needs pillow (the `dev` extra), through
`nemo_rl.data.multimodal_utils`.

About 3 minutes a run on two CPUs, so it runs in `make test-cluster`. Skipped where the
corpus is absent.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.corpus import NEMO_RL

TREE = NEMO_RL
MODULE = TREE / "tests" / "unit" / "distributed" / "test_worker_groups.py"
# The replacement for upstream's conftest (see the module docstring).
REPLACEMENT_CONFTEST = """\
import pytest
import ray


@pytest.fixture(scope="session", autouse=True)
def init_ray_cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()
"""
TOO_BIG = "not multi_node and not fewer_data and not 2d and not shutdown_clears"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.cluster,
    pytest.mark.skipif(not MODULE.is_file(), reason="the shared corpus is absent"),
]


def _outcomes(tmp: Path, guarded: bool) -> dict[str, str]:
    folder = tmp / ("guarded" if guarded else "plain")
    folder.mkdir()
    shutil.copy(MODULE, folder / MODULE.name)
    (folder / "conftest.py").write_text(REPLACEMENT_CONFTEST)
    report = folder / "junit.xml"
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEMO_RL_WORKERS_GUARD")}
    env["PYTHONPATH"] = str(TREE)
    if guarded:
        env["NEMO_RL_WORKERS_GUARD"] = "1"
    with tempfile.TemporaryDirectory(prefix="rgu", dir="/tmp") as ray_tmp:
        env["RAY_TMPDIR"] = ray_tmp
        subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", TOO_BIG,
             f"--junitxml={report}", MODULE.name], cwd=folder, env=env, timeout=900,
            capture_output=True, text=True, check=False)
    out: dict[str, str] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        out[case.get("name", "?")] = kinds[0] if kinds else "passed"
    return out


def test_upstreams_worker_group_tests_pass_alike_guarded(tmp_path: Path) -> None:
    plain = _outcomes(tmp_path, guarded=False)
    guarded = _outcomes(tmp_path, guarded=True)
    assert len(plain) >= 15
    assert guarded == plain
    assert sum(1 for v in plain.values() if v == "passed") >= 15
