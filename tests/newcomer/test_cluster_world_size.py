"""`check` takes the world size from the config's `cluster:` section; flags override it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from nemo_rl_workers.model.cluster_size import policy_world_size
from tests.cli.test_cli import write
from tests.cli_run import run_cli as run

# TP=2 divides a cluster of 2 or 4 GPUs, not one of 3.
CONFIG = """\
policy:
  megatron_cfg:
    enabled: true
    tensor_model_parallel_size: 2
  automodel_cfg:
    enabled: false
cluster:
  gpus_per_node: {gpus}
  num_nodes: {nodes}
"""


def check(tmp_path: Path, text: str, *flags: str) -> tuple[int, dict[str, Any]]:
    code, out, _ = run("check", "--json", "--no-verify", *flags, write(tmp_path, "c.yaml", text))
    return code, json.loads(out)


def test_the_cluster_section_gives_the_world_size(tmp_path: Path) -> None:
    code, report = check(tmp_path, CONFIG.format(gpus=2, nodes=2))
    assert (code, report["problems"], report["skipped"]) == (0, [], [])
    assert report["world_size"] == 4
    assert report["world_size_from"] == "cluster.gpus_per_node (2) x cluster.num_nodes (2) = 4"
    code, report = check(tmp_path, CONFIG.format(gpus=3, nodes=1))
    assert code == 1 and [p["rule"] for p in report["problems"]] == [
        "preflight.parallelism.divides"]


def test_flags_override_the_section(tmp_path: Path) -> None:
    code, report = check(tmp_path, CONFIG.format(gpus=3, nodes=1), "--world-size", "2")
    assert (code, report["world_size"], report["world_size_from"]) == (0, 2, None)
    code, report = check(tmp_path, CONFIG.format(gpus=2, nodes=1), "--nodes", "1",
                         "--gpus-per-node", "3")
    assert code == 1 and report["world_size"] == 3


def test_text_output_says_how(tmp_path: Path) -> None:
    code, out, _ = run("check", "-v", "--no-verify", write(tmp_path, "c.yaml", CONFIG.format(
        gpus=4, nodes=1)))
    assert code == 0
    assert "  world size: 4 (cluster.gpus_per_node (4) x cluster.num_nodes (1) = 4)" in out


def test_without_a_section_the_rules_are_skipped_as_before(tmp_path: Path) -> None:
    text = CONFIG.split("cluster:")[0]
    code, report = check(tmp_path, text)
    assert code == 0 and report["world_size"] is None
    assert "preflight.parallelism.fits: no world size given" in report["skipped"]


def test_a_bad_section_is_a_located_problem(tmp_path: Path) -> None:
    code, report = check(tmp_path, CONFIG.format(gpus='"two"', nodes=0))
    assert code == 1
    found = [(p["path"], p["given"], p["rule"], p["line"]) for p in report["problems"]]
    assert found == [("cluster.gpus_per_node", "two", "cluster", 8),
                     ("cluster.num_nodes", "0", "cluster", 9)]


def _noncolocated(nodes: int, gpus: int, **resources: int) -> dict[str, Any]:
    return {"cluster": {"gpus_per_node": gpus, "num_nodes": nodes},
            "policy": {"generation": {"colocated": {"enabled": False,
                                                    "resources": resources}}}}


def test_non_colocated_generation_takes_its_share_as_upstream() -> None:
    one = policy_world_size(_noncolocated(1, 8, gpus_per_node=2))
    assert (one.world_size, one.how) == (6, "(cluster.gpus_per_node (8) - policy.generation."
                                            "colocated.resources.gpus_per_node (2)) x "
                                            "cluster.num_nodes (1) = 6")
    assert policy_world_size(_noncolocated(4, 8, num_nodes=1)).world_size == 24
    (problem,) = policy_world_size(_noncolocated(1, 2, gpus_per_node=2)).problems
    assert problem.path == "policy.generation.colocated.resources.gpus_per_node"
    assert "leaves no GPU of the cluster for training" in problem.message
