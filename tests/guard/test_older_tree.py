"""The guard on the 2025-09 corpus tree: the same hooks on an older upstream (one
initializer actor per worker there, not per node), the same outcomes.

Skipped where that corpus is absent.
"""

from __future__ import annotations

import pytest

from tests.guard.upstream import CLI, OLD_TREE, SCRIPT, run_upstream

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not OLD_TREE.is_dir(), reason="the 2025-09 corpus is absent"),
]


def test_the_older_tree_is_guarded_alike() -> None:
    run = run_upstream([CLI, "run", str(SCRIPT), "good", "undecorated", "boom"], tree=OLD_TREE)
    assert run.scenarios["good"]["results"] == [[0, 7], [1, 7]]
    refused = run.scenarios["undecorated"]
    assert refused["refused"]["type"] == "WorkerContractError"
    assert "guard_workers.PlainWorker is not an actor class: " in refused["refused"]["text"]
    assert refused["ray"] == []
    [note] = run.scenarios["boom"]["ray_get"]["notes"]
    assert note.startswith("nemo-rl-workers guard: worker call boom failed on rank 1 of 2 ")
    assert run.guard_lines() == []
