"""Every command judges the NeMo-RL the user has (issue 27), on trees written for it: the
older schema (dtensor_cfg with _v2, override maps, the extension as a constructor argument,
ACTOR_ENVIRONMENT_REGISTRY with ModelOpt's merged in) and a newer tree that selects its own
workers (automodel_cfg, the extension read from the config)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from nemo_rl_workers.tree.checkout import (
    UnusableCheckout,
    config_checkout,
    find_checkout,
    given_checkout,
    vllm_pin,
)
from nemo_rl_workers.tree.revision_build import build_revision
from tests.cli_run import run_cli as run
from tests.revision.trees import config, new_tree, old_tree, worker, write

POLICY = "nemo_rl.models.policy.workers"
OLD_CONFIG = """\
policy:
  model_name: tiny
  dtensor_cfg:
    enabled: true
    tensor_parallel_size: 1
  megatron_cfg: {enabled: false}
  generation:
    backend: vllm
    vllm_cfg: {async_engine: true}
"""


def _check(*argv: str) -> tuple[int, dict[str, Any], str]:
    code, out, err = run("check", "--no-verify", "--json", *argv)
    return code, json.loads(out), err


def _workers(report: dict[str, Any]) -> dict[str, str]:
    return {w["section"]: w["fqn"] for w in report["workers"]}


def test_the_older_tree_is_modelled_from_its_source(tmp_path: Path) -> None:
    revision = build_revision(old_tree(tmp_path), "--nemo-rl")
    assert (revision.schema, revision.has_v2, revision.extension_field) == (
        "dtensor_cfg", True, "constructor")
    assert revision.defaults == {"megatron_cfg.enabled": False, "dtensor_cfg._v2": False}
    assert revision.vllm_pin == "0.20.1"
    rows = {(r.role, r.switches): (r.default_fqn, r.quantized_fqn) for r in revision.rows}
    assert rows == {
        ("policy", "megatron_cfg.enabled=true"): (
            f"{POLICY}.megatron.MegatronPolicyWorker",
            "nemo_rl.modelopt.workers.MegatronQuantPolicyWorker"),
        ("policy", "dtensor_cfg._v2=true and megatron_cfg.enabled=false"): (
            f"{POLICY}.dtensor_v2.DTensorPolicyWorkerV2", None),
        ("policy", "dtensor_cfg._v2=false and megatron_cfg.enabled=false"): (
            f"{POLICY}.dtensor.DTensorPolicyWorker",
            "nemo_rl.modelopt.workers.DTensorQuantPolicyWorker"),
        ("generation", "async_engine=true"): (
            "nemo_rl.models.generation.workers.VllmAsyncGenerationWorker", None),
        ("generation", "async_engine=false"): (
            "nemo_rl.models.generation.workers.VllmGenerationWorker", None),
    }
    # ModelOpt's registry is merged into the main one with `.update(...)`.
    assert revision.environments["nemo_rl.modelopt.workers.DTensorQuantPolicyWorker"] == (
        "MODELOPT_FSDP")
    assert revision.calls == {"Policy": ("train",), "VllmGeneration": ("generate",)}


def test_check_on_the_older_tree_judges_its_own_schema(tmp_path: Path) -> None:
    root = old_tree(tmp_path)
    path = config(root, "grpo.yaml", OLD_CONFIG)
    code, report, err = _check(path)
    assert (code, err) == (0, "")
    # No outdated-key problem: this tree's schema is current here, and the report says so.
    assert report["problems"] == []
    assert any("this NeMo-RL reads dtensor_cfg with _v2" in s for s in report["skipped"])
    # `_v2` unset: the tree's default (false) selects DTensor v1.
    assert _workers(report) == {
        "policy": f"{POLICY}.dtensor.DTensorPolicyWorker",
        "policy.generation": "nemo_rl.models.generation.workers.VllmAsyncGenerationWorker"}
    assert report["nemo_rl"] == {
        "revision": "tree", "name": str(root.resolve()), "path": str(root.resolve()),
        "how": "the config's checkout", "commit": None, "version": None, "schema": "dtensor_cfg",
        "v2": True, "extension_field": "constructor", "vllm_pin": "0.20.1", "undecided": [],
        "unread": [], "project_problem": None}
    code, out, _ = run("check", "--no-verify", path)
    assert out.splitlines()[0] == (
        f"NeMo-RL: {root.resolve()} (dtensor_cfg schema with _v2; the config's checkout)")


@pytest.mark.parametrize(("policy", "fqn"), [
    ("  dtensor_cfg: {enabled: true, _v2: true}\n  megatron_cfg: {enabled: false}\n",
     f"{POLICY}.dtensor_v2.DTensorPolicyWorkerV2"),
    ("  dtensor_cfg: {enabled: true, _v2: false}\n  megatron_cfg: {enabled: false}\n",
     f"{POLICY}.dtensor.DTensorPolicyWorker"),
    ("  dtensor_cfg: {enabled: false}\n  megatron_cfg: {enabled: true}\n",
     f"{POLICY}.megatron.MegatronPolicyWorker"),
    ("  dtensor_cfg: {enabled: true}\n  megatron_cfg: {enabled: false}\n"
     "  quant_cfg: INT8_DEFAULT_CFG\n", "nemo_rl.modelopt.workers.DTensorQuantPolicyWorker"),
    ("  dtensor_cfg: {enabled: false}\n  megatron_cfg: {enabled: true}\n"
     "  quant_cfg: INT8_DEFAULT_CFG\n", "nemo_rl.modelopt.workers.MegatronQuantPolicyWorker"),
])
def test_each_switch_of_the_older_tree_selects_its_class(
    tmp_path: Path, policy: str, fqn: str
) -> None:
    root = old_tree(tmp_path)
    code, report, err = _check(config(root, "c.yaml", f"policy:\n  model_name: tiny\n{policy}"))
    assert (code, err) == (0, ""), report["problems"]
    assert _workers(report) == {"policy": fqn}


def test_quant_cfg_without_an_override_keeps_the_class_and_says_so(tmp_path: Path) -> None:
    root = old_tree(tmp_path)
    code, report, _ = _check(config(root, "c.yaml", (
        "policy:\n  dtensor_cfg: {enabled: true, _v2: true}\n"
        "  quant_cfg: INT8_DEFAULT_CFG\n")))
    assert code == 0
    assert _workers(report) == {"policy": f"{POLICY}.dtensor_v2.DTensorPolicyWorkerV2"}
    assert ("policy: quant_cfg is set, and this tree has no quantized counterpart of "
            f"{POLICY}.dtensor_v2.DTensorPolicyWorkerV2; it starts that class") in (
        report["skipped"])


def test_a_config_extension_field_the_tree_never_reads_is_ignored(tmp_path: Path) -> None:
    root = old_tree(tmp_path)
    text = OLD_CONFIG.replace("  model_name: tiny\n",
                              "  model_name: tiny\n  worker_extension_cls_fqn: my.ext.Worker\n")
    code, report, _ = _check(config(root, "c.yaml", text))
    assert code == 0
    assert _workers(report)["policy"] == f"{POLICY}.dtensor.DTensorPolicyWorker"
    assert report["warnings"] == [
        "policy.worker_extension_cls_fqn=my.ext.Worker is ignored by this NeMo-RL: it reads "
        "no worker_extension_cls_fqn from the config; Policy takes it only as a constructor "
        "argument (nemo_rl/models/policy/lm_policy.py:7), so "
        f"Policy starts {POLICY}.dtensor.DTensorPolicyWorker."]


def test_undecided_is_never_a_pass(tmp_path: Path) -> None:
    """A switch the tree reads with no default, left out; a backend it has no driver for."""
    root = old_tree(tmp_path)
    no_mode = OLD_CONFIG.replace("    vllm_cfg: {async_engine: true}\n", "")
    code, report, _ = _check(config(root, "a.yaml", no_mode))
    assert code == 1
    assert [(p["path"], p["rule"], p["message"]) for p in report["problems"]] == [
        ("policy.generation", "tree.undecided",
         "policy.generation: undecided: async_engine not set in policy.generation, and "
         "VllmGeneration reads it with no default.")]
    other = OLD_CONFIG.replace("backend: vllm", "backend: sglang")
    code, report, _ = _check(config(root, "b.yaml", other))
    assert code == 1
    assert [p["rule"] for p in report["problems"]] == ["tree.undecided"]
    assert "no generation driver of this tree starts workers for it" in (
        report["problems"][0]["message"])


def test_a_switch_that_is_no_boolean_is_one_problem_at_its_path(tmp_path: Path) -> None:
    root = old_tree(tmp_path)
    text = OLD_CONFIG.replace("  megatron_cfg: {enabled: false}\n",
                              "  megatron_cfg: {enabled: maybe}\n")
    code, report, _ = _check(config(root, "c.yaml", text))
    assert code == 1
    assert [p["path"] for p in report["problems"]] == ["policy.megatron_cfg.enabled"]


def test_switches_that_select_nothing_name_what_the_tree_selects(tmp_path: Path) -> None:
    """A TRT-LLM-like driver with an async worker only (upstream asserts async_engine)."""
    root = old_tree(tmp_path)
    write(root, {"nemo_rl/models/generation/trtllm_generation.py": TRTLLM,
                 "nemo_rl/models/generation/trtllm_workers.py": worker(
                     "TrtllmAsyncGenerationWorker", method="generate")})
    text = OLD_CONFIG.replace("    backend: vllm\n    vllm_cfg: {async_engine: true}\n",
                              "    backend: trtllm\n    trtllm_cfg: {async_engine: false}\n"
                              "    vllm_cfg: {async_engine: true}\n")
    code, report, _ = _check(config(root, "c.yaml", text))
    assert code == 1
    assert [(p["path"], p["rule"], p["message"]) for p in report["problems"]] == [
        ("policy.generation", "tree.no-worker",
         "policy.generation: TrtllmGeneration starts no worker under async_engine=false; this "
         "tree selects nemo_rl.models.generation.trtllm_workers.TrtllmAsyncGenerationWorker "
         "when async_engine=true."),
        # The tree's own assertion refuses it too, before any worker starts (issue 34).
        ("policy.generation.trtllm_cfg.async_engine", "tree.refuses",
         "policy.generation.trtllm_cfg.async_engine: this NeMo-RL refuses the config before "
         "any worker starts: assert cfg['trtllm_cfg'].get('async_engine', False) fails "
         "(policy.generation.trtllm_cfg.async_engine=False) at "
         "nemo_rl/models/generation/trtllm_generation.py:7 (TrtllmGeneration.__init__): "
         '"(no message)"')]


TRTLLM = '''
from nemo_rl.distributed.worker_groups import RayWorkerBuilder, RayWorkerGroup


class TrtllmGeneration:
    def __init__(self, cfg):
        assert cfg["trtllm_cfg"].get("async_engine", False)
        worker_cls = "nemo_rl.models.generation.trtllm_workers.TrtllmAsyncGenerationWorker"
        self.worker_group = RayWorkerGroup(RayWorkerBuilder(worker_cls, cfg))
'''


def test_the_newer_tree_reads_the_extension_from_the_config_and_its_registry(
    tmp_path: Path,
) -> None:
    root = new_tree(tmp_path)
    base = """\
policy:
  model_name: tiny
  automodel_cfg: {enabled: true}
  megatron_cfg: {enabled: false}
"""
    code, report, _ = _check(config(root, "plain.yaml", base))
    assert code == 0 and report["nemo_rl"]["schema"] == "automodel_cfg"
    assert _workers(report) == {"policy": f"{POLICY}.automodel.AutomodelPolicyWorker"}
    registered = base + "  worker_extension_cls_fqn: research.ext.RegisteredWorker\n"
    code, report, _ = _check(config(root, "ext.yaml", registered))
    assert code == 0 and _workers(report)["policy"] == "research.ext.RegisteredWorker"
    unregistered = base + "  worker_extension_cls_fqn: research.ext.Elsewhere\n"
    code, report, _ = _check(config(root, "bad.yaml", unregistered))
    assert code == 1
    assert [(p["path"], p["rule"], p["given"]) for p in report["problems"]] == [
        ("policy.worker_extension_cls_fqn", "R2", "research.ext.Elsewhere")]
    # The outdated-key rules are this tree's own: dtensor_cfg is refused here.
    code, report, _ = _check(config(root, "old.yaml", base.replace("automodel_cfg",
                                                                    "dtensor_cfg")))
    assert code == 1
    assert "outdated.rename" in [p["rule"] for p in report["problems"]]


def test_which_nemo_rl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = old_tree(tmp_path / "fork")
    path = config(root, "c.yaml", OLD_CONFIG)
    own = config_checkout(path)
    assert own is not None and own.root == root.resolve()
    elsewhere = tmp_path / "elsewhere.yaml"
    elsewhere.write_text(OLD_CONFIG)
    other = old_tree(tmp_path / "other")
    found = find_checkout(str(other), [path])
    assert found is not None and (found.root, found.how) == (other.resolve(), "--nemo-rl")
    assert find_checkout(None, [path], reference=True) is None
    # Given the package folder itself, its parent is the checkout.
    assert given_checkout(str(root / "nemo_rl")).root == root.resolve()
    # --reference judges against the reference, whatever checkout holds the config.
    code, out, _ = run("check", "--no-verify", "--reference", path)
    assert out.splitlines()[0].startswith("NeMo-RL: reference: upstream NeMo-RL after PR #4176")
    assert code == 1 and "policy.dtensor_cfg has been renamed to policy.automodel_cfg" in out


@pytest.mark.parametrize(("make", "says"), [
    (lambda p: p / "missing", "no such folder"),
    (lambda p: write(p, {"file.txt": "x"}) / "file.txt", "is not a folder"),
    (lambda p: write(p, {"other/x.py": ""}), "is not a NeMo-RL checkout"),
])
def test_a_nemo_rl_that_is_no_tree_is_one_line_exit_2(
    tmp_path: Path, make: object, says: str
) -> None:
    assert callable(make)
    target = make(tmp_path)
    with pytest.raises(UnusableCheckout, match=says):
        given_checkout(str(target))
    cfg = tmp_path / "c.yaml"
    cfg.write_text(OLD_CONFIG)
    for argv in (["check", "--no-verify", str(cfg)], ["resolve", str(cfg)], ["list"],
                 ["migrate", "--check", str(cfg)]):
        code, out, err = run(*argv, "--nemo-rl", str(target))
        assert (code, out) == (2, ""), argv
        assert len(err.splitlines()) == 1 and says in err, err


def test_a_module_that_may_be_a_driver_and_does_not_parse_leaves_sections_undecided(
        tmp_path: Path) -> None:
    """Judged as if it were not there before (issue 33: a silent verdict): it names a worker
    builder, so it may start any section's workers."""
    root = old_tree(tmp_path)
    write(root, {"nemo_rl/models/broken.py": "def (:\n    RayWorkerBuilder\n"})
    code, report, _ = _check(config(root, "c.yaml", OLD_CONFIG))
    assert code == 1
    assert {(p["path"], p["rule"]) for p in report["problems"]} == {
        ("policy", "tree.undecided"), ("policy.generation", "tree.undecided")}
    assert all("nemo_rl/models/broken.py:1: is not valid Python: invalid syntax" in p["message"]
               for p in report["problems"])


def test_the_vllm_pin_is_read_from_pyproject(tmp_path: Path) -> None:
    """(The commit is read as `audit --emit-protocols` reads it: tests/audit_ext.)"""
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\nversion = "0"\n[project.optional-dependencies]\n'
        'vllm = ["vllm==0.10.0", "flashinfer"]\n')
    assert vllm_pin(tmp_path) == "0.10.0"
    (tmp_path / "pyproject.toml").write_text("not toml [")
    assert vllm_pin(tmp_path) is None
    (tmp_path / "pyproject.toml").unlink()
    assert vllm_pin(tmp_path) is None


def test_hostile_trees_are_judged_or_undecided(tmp_path: Path) -> None:
    """An MRO cycle among classes no driver starts, a registry filled in a loop: the table
    is read where it can be, nothing hangs. A module that is a FIFO is not read, and since
    it may be a driver, no section is passed (issue 33); a tree with no driver at all is
    no NeMo-RL tree the tool can judge."""
    root = old_tree(tmp_path)
    write(root, {
        "nemo_rl/models/policy/workers/cycle.py": "class A(B): ...\nclass B(A): ...\n",
        "nemo_rl/distributed/looped_registry.py": (
            "ACTOR_ENVIRONMENT_REGISTRY = {}\n"
            "for name in ('a.B', 'c.D'):\n    ACTOR_ENVIRONMENT_REGISTRY[name] = 'X'\n"),
    })
    path = config(root, "c.yaml", OLD_CONFIG)
    code, report, _ = _check(path)
    assert code == 0
    assert _workers(report)["policy"] == f"{POLICY}.dtensor.DTensorPolicyWorker"
    os.mkfifo(root / "nemo_rl" / "models" / "pipe.py")
    code, report, _ = _check(path)
    assert code == 1
    assert {(p["path"], p["rule"]) for p in report["problems"]} == {
        ("policy", "tree.undecided"), ("policy.generation", "tree.undecided")}
    assert all("nemo_rl/models/pipe.py: is not a regular file" in p["message"]
               for p in report["problems"])
    bare = write(tmp_path / "bare", {"nemo_rl/__init__.py": "", "nemo_rl/x.py": "A = 1\n"})
    code, out, err = run("check", "--no-verify", "--json", config(bare, "c.yaml", OLD_CONFIG))
    assert (code, out) == (2, "")
    assert "is not a NeMo-RL tree the tool can judge" in err


def test_an_audit_condition_is_compatible_with_the_section_s_switches() -> None:
    """On the condition as data (alternatives of switch sets), never its rendering."""
    from nemo_rl_workers.tree.conditions import compatible, describe_either

    megatron = {"megatron_cfg.enabled": True}
    v1 = {"megatron_cfg.enabled": False, "dtensor_cfg._v2": False}
    either = (frozenset({("dtensor_cfg._v2", False), ("megatron_cfg.enabled", False)}),
              frozenset({("megatron_cfg.enabled", True)}))
    assert describe_either(either) == (
        "(dtensor_cfg._v2=false and megatron_cfg.enabled=false) or megatron_cfg.enabled=true")
    assert compatible(either, megatron) and compatible(either, v1)
    assert not compatible(either, {"megatron_cfg.enabled": False, "dtensor_cfg._v2": True})
    assert compatible((), megatron)
    assert compatible((frozenset({("async_engine", True)}),), megatron)
    assert not compatible((frozenset({("megatron_cfg.enabled", False)}),), megatron)


def test_vllm_s_rule_is_judged_for_the_pinned_version_or_says_which(tmp_path: Path) -> None:
    """The tree pins vLLM 0.20.1 and only vllm-stubs 0.33.0 is installed: one line names
    both, and the JSON carries the pin; a tree pinning the installed version gets none."""
    root = old_tree(tmp_path / "old")
    code, out, err = run("audit", "--nemo-rl", str(root), "--no-cache", "--json")
    assert code == 0, err
    assert err.splitlines() == [
        "nemo-rl-workers: audit: the tree pins vLLM 0.20.1, for which no vllm-stubs is "
        "installed; vLLM's extension rule is judged against the installed vllm-stubs 0.33.0"]
    assert json.loads(out)["vllm"] | {"extensions": []} == json.loads(out)["vllm"] | {
        "version": "0.33.0", "pinned": "0.20.1", "extensions": []}
    same = old_tree(tmp_path / "same")
    (same / "pyproject.toml").write_text(
        '[project]\nname = "fork"\nversion = "0"\ndependencies = ["vllm==0.33.0"]\n')
    code, out, err = run("audit", "--nemo-rl", str(same), "--no-cache", "--json")
    assert (code, err) == (0, "")
    assert json.loads(out)["vllm"]["pinned"] == "0.33.0"


def test_verify_takes_the_class_from_the_tree_given(tmp_path: Path) -> None:
    """The environment's `nemo_rl` (this repository's runtime) has no such module; with
    --nemo-rl the class and its bases come from the fork, in both paths, and PolicyWorker
    is the fork's own Protocol of its policy workers (what its Policy calls: `train`), not
    the reference's, which the fork's classes do not have (issue 43, item 5)."""
    root = old_tree(tmp_path / "fork")
    fqn = f"{POLICY}.megatron.MegatronPolicyWorker"
    code, out, err = run("verify", fqn, "--protocol", "PolicyWorker", "--static", "--no-cache")
    assert (code, out) == (2, "") and "no such class (" in err
    code, out, err = run("verify", fqn, "--protocol", "PolicyWorker", "--static", "--no-cache",
                         "--nemo-rl", str(root), "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["ok"] and report["tree_protocol"] == {
        "name": "MegatronPolicyWorkerProtocol", "driver": "Policy", "worker": fqn}
    code, out, err = run("verify", fqn, "--protocol", "PolicyWorker", "--base", fqn,
                         "--nemo-rl", str(root), "--json")
    assert code == 0, err
    assert json.loads(out)["tree_protocol"]["name"] == "MegatronPolicyWorkerProtocol"
    code, out, err = run("verify", fqn, "--protocol", "PolicyWorker", "--nemo-rl",
                         str(tmp_path / "missing"))
    assert (code, out) == (2, "") and err.count("\n") == 1 and "no such folder" in err
