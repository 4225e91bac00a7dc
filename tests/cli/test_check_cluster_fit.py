"""`check --cluster-resources FILE` gives the fit verdict a real start would, without a
cluster; hostile descriptions are one line and exit 2."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from nemo_rl.distributed.virtual_cluster import RayVirtualCluster

from nemo_rl_workers.checks.cluster.cluster_check import GPU_BUNDLE
from tests.cli_run import run_cli as run

REPO = Path(__file__).resolve().parents[2]
TINY = str(REPO / "examples" / "configs" / "grpo_tiny.yaml")  # cluster: 1 node x 2 GPUs



def nodes_file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "nodes.json"
    path.write_text(text)
    return str(path)


def test_the_bundle_judged_is_the_one_a_gpu_cluster_reserves() -> None:
    assert RayVirtualCluster([2]).bundle_resources() == dict(GPU_BUNDLE)


def test_a_cluster_too_small_for_the_config_is_a_problem_naming_need_and_largest_node(
    tmp_path: Path,
) -> None:
    path = nodes_file(tmp_path, json.dumps([{"CPU": 4, "GPU": 1}, {"CPU": 2}]))
    code, out, err = run("check", TINY, "--no-verify", "--json", "--cluster-resources", path)
    assert (code, err) == (1, "")
    problems = [p for p in json.loads(out)["problems"] if p["rule"] == "cluster.fit"]
    assert [p["message"] for p in problems] == [
        "cluster: node group 0 needs 2 bundles x {CPU: 1, GPU: 1} = 2 CPU, 2 GPU on one node; "
        f"the largest live node has 4 CPU, 1 GPU (the 2 node(s) of {path})"
    ]
    assert (problems[0]["path"], problems[0]["given"]) == ("cluster", "1 node(s) x 2 GPU bundle(s)")


def test_a_cluster_that_fits_passes_and_the_flags_override_the_shape(tmp_path: Path) -> None:
    path = nodes_file(tmp_path, json.dumps({"nodes": [{"CPU": 8, "GPU": 2}]}))
    assert run("check", TINY, "--no-verify", "--cluster-resources", path)[0] == 0
    code, out, _ = run("check", TINY, "--no-verify", "--cluster-resources", path,
                       "--nodes", "2", "--gpus-per-node", "2")
    assert code == 1
    assert "the 2 node groups need 4 GPU in all; the 1 live node has 2 GPU in all" in out


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (None, "is not a regular file"),  # a directory
        ("{", "not valid JSON"),
        ('[{"GPU": 1e999}]', "must be a number from 0 to"),
        ('[{"GPU": "8"}]', "is str, not a number"),
        ("[[1, 2]]", "node 0 is list"),
        (b"\xff\xfe", "is not UTF-8"),
    ],
    ids=["directory", "bad-json", "huge", "wrong-type", "wrong-shape", "odd-bytes"],
)
def test_a_hostile_description_is_one_line_and_exit_2(
    tmp_path: Path, content: str | bytes | None, says: str
) -> None:
    if content is None:
        path = str(tmp_path)
    elif isinstance(content, bytes):
        (tmp_path / "nodes.json").write_bytes(content)
        path = str(tmp_path / "nodes.json")
    else:
        path = nodes_file(tmp_path, content)
    code, out, err = run("check", TINY, "--no-verify", "--cluster-resources", path)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and says in err, err
    assert err.startswith("nemo-rl-workers: --cluster-resources ")


def test_a_fifo_and_a_missing_file_do_not_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path in (str(fifo), str(tmp_path / "absent.json")):
        code, _, err = run("check", TINY, "--no-verify", "--cluster-resources", path)
        assert code == 2 and err.count("\n") == 1


def test_both_sources_at_once_are_a_usage_error(tmp_path: Path) -> None:
    path = nodes_file(tmp_path, "[]")
    code, _, err = run("check", TINY, "--cluster-resources", path, "--address", "auto")
    assert code == 2 and "not allowed with argument" in err
