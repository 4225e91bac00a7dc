"""`verify --static` reads no module larger than the tree stage would (issue 35): a class
whose module imports a 3 GB module (sparse) is refused before any checker runs, one line and
exit 2, in bounded memory (it peaked at 3.2 GB), with the cache on and off."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.bench_support import run_child
from nemo_rl_workers.tree.source.reading import MAX_SOURCE_BYTES

HUGE = 3 * 1024**3
WORKER = """\
from big_table import TABLE
from nemo_rl.models.policy.workers.automodel_policy_worker import AutomodelPolicyWorker


class BigWorker(AutomodelPolicyWorker):
    pass
"""


def verify(folder: Path, fqn: str, *more: str) -> tuple[int, str, str]:
    """The command in its own process, as a user runs it from `folder`."""
    done = subprocess.run(
        [sys.executable, "-m", "nemo_rl_workers", "verify", fqn, "--protocol", "PolicyWorker",
         "--static", *more], cwd=folder, env={**os.environ, "PYTHONPATH": str(folder)},
        capture_output=True, text=True, timeout=300, check=False)
    return done.returncode, done.stdout, done.stderr


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "big_worker.py").write_text(WORKER, encoding="utf-8")
    with open(tmp_path / "big_table.py", "wb") as f:
        os.truncate(f.fileno(), HUGE)
    return tmp_path


@pytest.mark.parametrize("cache", [["--no-cache"], []])
def test_a_class_whose_module_imports_a_3_gb_module_is_refused(
    folder: Path, cache: list[str]
) -> None:
    code, out, err = verify(folder, "big_worker.BigWorker", *cache)
    assert (code, out) == (2, "")
    assert err == (f"nemo-rl-workers: big_worker.BigWorker cannot be judged from source: "
                   f"big_table ({folder / 'big_table.py'}), which big_worker imports, is "
                   f"{HUGE} bytes, over the {MAX_SOURCE_BYTES}-byte limit for a module; the "
                   "checker would read it whole\n")


def test_the_refusal_stays_in_bounded_memory(folder: Path) -> None:
    # Spawned by bench_support's small launcher: a child forked straight from this pytest
    # would report this process's own peak (Linux counts a child's peak from its parent).
    done = run_child(
        [sys.executable, "-m", "nemo_rl_workers", "verify", "big_worker.BigWorker",
         "--protocol", "PolicyWorker", "--static", "--no-cache"], cwd=folder,
        env={**os.environ, "PYTHONPATH": str(folder)}, timeout_s=120)
    assert done.returncode == 2, done.stderr
    assert done.max_rss_mb < 512, done.max_rss_mb  # under 512 MiB, not 3.2 GB
