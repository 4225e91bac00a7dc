"""What a `check` run says about the tree and across configs (issue 34, item 5): the
tree's version and commit in the header, a rule family the tree skips said once per run,
`key=value` overrides as `resolve` takes them, a problem located at the key its sentence
leads with."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.cli_run import run_cli as run
from tests.revision.test_trees import OLD_CONFIG
from tests.revision.trees import config, old_tree, write

PACKAGE_INFO = '''
MAJOR = 1
MINOR = 2
PATCH = 3
PRE_RELEASE = "rc1"

VERSION = (MAJOR, MINOR, PATCH, PRE_RELEASE)
__version__ = ".".join(map(str, VERSION[:3])) + "".join(VERSION[3:])

import subprocess as _subprocess
raise SystemExit("never imported: importing runs git")
'''

SKIP_LINE = ("skipped: outdated-key rules: this NeMo-RL reads dtensor_cfg with _v2, so its "
             "configs' keys are current")


def test_the_header_names_the_tree_s_version(tmp_path: Path) -> None:
    root = write(old_tree(tmp_path), {"nemo_rl/package_info.py": PACKAGE_INFO})
    code, out, err = run("check", "--no-verify", config(root, "c.yaml", OLD_CONFIG))
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == (
        f"NeMo-RL: {root}, version 1.2.3rc1 (dtensor_cfg schema with _v2; the config's "
        "checkout)")
    code, out, _ = run("check", "--no-verify", "--json", config(root, "c.yaml", OLD_CONFIG))
    assert json.loads(out)["nemo_rl"]["version"] == "1.2.3rc1"


def test_the_header_names_the_tree_s_commit(tmp_path: Path) -> None:
    root = write(old_tree(tmp_path), {"nemo_rl/package_info.py": '__version__ = "0.9.1"\n'})
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t"]
    try:
        subprocess.run([*git, "init", "-q"], check=True)
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-qm", "tree"], check=True)
        commit = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True,
                                text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("git is not usable here")
    _, out, _ = run("check", "--no-verify", config(root, "c.yaml", OLD_CONFIG))
    assert out.splitlines()[0].startswith(
        f"NeMo-RL: {root}, version 0.9.1 at {commit[:12]} (dtensor_cfg schema")


def test_a_skipped_rule_family_is_said_once_per_run(tmp_path: Path) -> None:
    root = old_tree(tmp_path)
    first, second = config(root, "a.yaml", OLD_CONFIG), config(root, "b.yaml", OLD_CONFIG)
    code, out, _ = run("check", "--no-verify", first, second)
    lines = out.splitlines()
    assert code == 0
    assert lines[:2] == [f"NeMo-RL: {root} (dtensor_cfg schema with _v2; the config's checkout)",
                         SKIP_LINE]
    assert lines[2].startswith(f"{first}: ok")
    assert sum(SKIP_LINE in line for line in lines) == 1
    # Each config's JSON still carries it: a reader of one report needs it there.
    _, out, _ = run("check", "--no-verify", "--json", first, second)
    assert all(SKIP_LINE.removeprefix("skipped: ") in report["skipped"]
               for report in json.loads(out)["configs"])


def test_check_takes_overrides_as_resolve_does(tmp_path: Path) -> None:
    root = old_tree(tmp_path)
    path = config(root, "c.yaml", OLD_CONFIG)
    code, out, _ = run("check", "--no-verify", "--json", path,
                       "policy.generation.vllm_cfg.async_engine=false")
    assert code == 0
    generation = next(w for w in json.loads(out)["workers"] if w["section"] == "policy.generation")
    assert generation["fqn"] == "nemo_rl.models.generation.workers.VllmGenerationWorker"
    code, _, err = run("check", "--no-verify", path, "policy.generation=[")
    assert code == 2 and "override" in err
    code, _, err = run("check", "--no-verify", "policy.model_name=x")
    assert (code, err) == (
        2, "nemo-rl-workers: check needs a config file or folder, not only overrides\n")


def test_a_problem_leads_with_the_key_of_its_line(tmp_path: Path) -> None:
    """The reference's TP >= 4 rule is located at logprob_batch_size: its sentence starts
    there."""
    path = tmp_path / "tp.yaml"
    path.write_text(
        "policy:\n  model_name: tiny\n  train_micro_batch_size: 4\n  logprob_batch_size: 8\n"
        "  megatron_cfg: {enabled: false}\n"
        "  automodel_cfg: {enabled: true, tensor_parallel_size: 4}\n", encoding="utf-8")
    code, out, _ = run("check", "--no-verify", "--reference", str(path))
    assert code == 1
    problem = next(line for line in out.splitlines() if "problem:" in line)
    assert problem.startswith(
        f"  problem: {path}:4: policy.logprob_batch_size (8) must equal "
        "policy.train_micro_batch_size (4) because policy.automodel_cfg.tensor_parallel_size "
        "is 4")


@pytest.mark.parametrize(("block", "line", "key"), [
    ("  megatron_cfg: {enabled: true, fp32_lm_head: true,\n"
     "                 use_fused_linear_logprobs: true}\n", 4,
     "policy.megatron_cfg.use_fused_linear_logprobs"),
    ("  megatron_cfg: {enabled: true}\n  draft: {enabled: true}\n"
     "  sequence_packing: {enabled: true}\n", 5, "policy.sequence_packing.enabled"),
])
def test_a_reference_problem_leads_with_the_key_of_its_line(
        tmp_path: Path, block: str, line: int, key: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("policy:\n  model_name: tiny\n" + block +
                    "  automodel_cfg: {enabled: false}\n", encoding="utf-8")
    code, out, _ = run("check", "--no-verify", "--reference", str(path))
    assert code == 1
    problems = [x for x in out.splitlines() if "problem:" in x]
    assert problems[0].startswith(f"  problem: {path}:{line}: {key}: true "), problems
