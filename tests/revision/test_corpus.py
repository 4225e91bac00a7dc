"""The revision model on the two real trees (upstream at 7ea279a and at 2025-09): each tree
judges its own configs. Skipped where the corpus is absent."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from nemo_rl_workers.checks.config_check import load_for_check
from nemo_rl_workers.commands.cli import main
from nemo_rl_workers.commands.migrate import run_migrate
from nemo_rl_workers.tree.revision import build_revision

REPO = Path(__file__).resolve().parents[2]
CORPORA = {
    "2026-08": REPO.parent / "shared" / "corpus" / "nemo-rl",
    "2025-09": REPO.parent / "shared" / "corpus" / "nemo-rl-2025-09",
}


@pytest.fixture(params=sorted(CORPORA))
def tree(request: pytest.FixtureRequest) -> Path:
    root = CORPORA[request.param]
    if not (root / "nemo_rl").is_dir():
        pytest.skip(f"corpus absent: {root}")
    return root


def _configs(root: Path) -> list[str]:
    return sorted(str(p) for p in (root / "examples" / "configs").rglob("*.yaml"))


def test_the_table_of_each_tree(tree: Path) -> None:
    """Checked by hand against each tree's lm_policy.py and vllm_generation.py."""
    revision = build_revision(tree, "--nemo-rl")
    assert (revision.schema, revision.has_v2) == ("dtensor_cfg", True)
    assert revision.defaults["dtensor_cfg._v2"] is False  # `.get("_v2", False)`: DTensor v1
    policy = {r.switches: r.default_fqn.rsplit(".", 1)[1] for r in revision.rows_of("Policy")}
    assert policy == {
        "megatron_cfg.enabled=true": "MegatronPolicyWorker",
        "dtensor_cfg._v2=true and dtensor_cfg.enabled=true and megatron_cfg.enabled=false":
            "DTensorPolicyWorkerV2",
        "dtensor_cfg._v2=false and dtensor_cfg.enabled=true and megatron_cfg.enabled=false":
            "DTensorPolicyWorker",
    }
    generation = {r.switches: r.default_fqn.rsplit(".", 1)[1]
                  for r in revision.rows_of("VllmGeneration")}
    assert generation == {"async_engine=true": "VllmAsyncGenerationWorker",
                          "async_engine=false": "VllmGenerationWorker"}
    if tree == CORPORA["2026-08"]:
        assert revision.extension_field == "constructor"
        assert revision.vllm_pin == "0.25.1"
        quantized = {r.default_fqn.rsplit(".", 1)[1]: (r.quantized_fqn or "").rsplit(".", 1)[-1]
                     for r in revision.rows_of("Policy")}
        assert quantized == {"MegatronPolicyWorker": "MegatronQuantPolicyWorker",
                             "DTensorPolicyWorkerV2": "DTensorQuantPolicyWorkerV2",
                             "DTensorPolicyWorker": "DTensorQuantPolicyWorker"}
        assert {"generation", "policy", "value", "teacher"} <= set(revision.roles())
        assert {"SGLangGeneration", "TrtllmGeneration", "VllmGeneration"} <= {
            r.driver for r in revision.rows if r.role == "generation"}
    else:
        assert revision.extension_field == "not read"
        assert revision.vllm_pin == "0.10.0"
        assert set(revision.roles()) >= {"generation", "policy"}


def test_check_of_a_tree_s_own_configs(tree: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    files = _configs(tree)
    main(["check", "--no-verify", "--json", *files], out, err)
    reports = json.loads(out.getvalue())["configs"]
    # Each report's file by its place (a report's own name may be redacted: an environment
    # value another test read through ${oc.env:...} can be part of a file name).
    for file, report in zip(files, reports, strict=True):
        report["file"] = file
    usable = [r for r in reports if r["error"] is None]
    assert len(usable) >= 58
    resolved = 0
    for report in usable:
        assert report["nemo_rl"]["path"] == str(tree) and report["nemo_rl"]["schema"] == (
            "dtensor_cfg"), report["config"]
        rules = {p["rule"] for p in report["problems"]}
        assert not any(r.startswith("outdated") for r in rules), report["config"]
        # Every policy and generation section is resolved through the tree's table, or
        # named undecided with the reason: never passed over.
        config, _ = load_for_check(report["file"])
        sections = {w["section"] for w in report["workers"]}
        named = sections | {p["path"] for p in report["problems"] if p["rule"].startswith("tree")}
        # A driver that starts no worker of its own (Megatron generation) is said so.
        named |= {note.split(": ", 1)[0] for note in report["skipped"]
                  if note.endswith("starts no worker class of its own")}
        policy = config.get("policy")
        if isinstance(policy, dict):
            assert "policy" in named, report["config"]
            if isinstance(policy.get("generation"), dict):
                assert "policy.generation" in named, report["config"]
        for worker in report["workers"]:
            assert worker["fqn"].startswith("nemo_rl.") and worker["rule"] == "tree", worker
        resolved += "policy" in sections
    assert resolved >= 51


def test_migrate_check_against_the_tree_changes_nothing(tree: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert run_migrate([str(tree / "examples" / "configs"), "--check"], out, err) == 0
    assert out.getvalue().splitlines()[-1].startswith("0 would change, ")
    assert len(err.getvalue().splitlines()) == 1
    assert "left unchanged: they are on the schema of the NeMo-RL they belong to" in (
        err.getvalue())


def test_list_shows_every_role_and_backend(tree: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert main(["list", "--nemo-rl", str(tree), "--json"], out, err) == 0
    listing = json.loads(out.getvalue())
    drivers = {row["driver"] for row in listing["rows"]}
    assert {"Policy", "VllmGeneration"} <= drivers
    if tree == CORPORA["2026-08"]:
        assert {"SGLangGeneration", "TrtllmGeneration", "Value", "TeacherWorkerGroup"} <= drivers
    out = io.StringIO()
    assert main(["list", "--nemo-rl", str(tree)], out, err) == 0
    assert out.getvalue().splitlines()[0] == (
        f"NeMo-RL: {tree} (dtensor_cfg schema with _v2; --nemo-rl)")
