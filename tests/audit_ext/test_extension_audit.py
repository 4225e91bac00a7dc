"""`audit EXTENSION ...` on trees written for it: every rule once, every non-rule silent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli_run import Ran, run_cli


def run(args: list[str]) -> Ran:
    return run_cli(*args)


def audit_json(trees: Path, *extensions: str, vllm: bool = False) -> tuple[int, dict[str, Any]]:
    more = ["--path", str(trees / "user_vllm")] if vllm else []
    code, out, err = run(["audit", "--nemo-rl", str(trees / "mini"), "--path",
                          str(trees / "user"), *more, "--json", *extensions])
    assert err == "", err
    return code, json.loads(out)


def ext_findings(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(f["rule"], f["method"], f["call"].rpartition("/")[2])
            for f in report["findings"]]


def test_every_extension_rule_once(trees: Path) -> None:
    code, report = audit_json(trees, "myext.drift.DriftPolicyWorker")
    assert code == 1
    assert sorted(ext_findings(report)) == sorted([
        ("extension-unknown-keyword", "prepare_refit_info", "drift.py:10"),
        ("extension-unknown-keyword", "begin_train_step", "drift.py:13"),
        ("extension-missing-method", "renamed_helper", "drift.py:14"),
        ("extension-missing-argument", "_scale", "drift.py:15"),
        ("extension-too-many-positional", "_scale", "drift.py:16"),
        ("override-unknown-keyword", "train", "lm_policy.py:19"),
        ("override-missing-argument", "get_logprobs", "lm_policy.py:27"),
    ])
    by_rule = {f["rule"]: f for f in report["findings"]}
    assert by_rule["override-unknown-keyword"]["message"] == (
        "Policy.train sends eval_mode= to train, but the override "
        "myext.drift.DriftPolicyWorker.train has no parameter eval_mode and no **kwargs")
    assert by_rule["extension-missing-method"]["definition"].endswith(
        "base_policy_worker.py:4")  # where the MRO ends
    assert all(f["worker"] == "myext.drift.DriftPolicyWorker"
               for f in report["findings"])
    (ext,) = report["extensions"]
    assert (ext["role"], ext["stands_for"]) == (
        "Policy", "nemo_rl.models.policy.workers.automodel_policy_worker.AutomodelPolicyWorker")


@pytest.mark.parametrize("cls", [
    "VariadicWorker", "KeywordOnlyWorker", "DiamondWorker", "TypeCheckingWorker",
])
def test_non_rules_are_silent(trees: Path, cls: str) -> None:
    code, report = audit_json(trees, f"myext.clean.{cls}")
    assert (code, report["findings"]) == (0, [])
    (ext,) = report["extensions"]
    assert ext["role"] == "Policy" and ext["unknown"] == []
    assert ext["calls_checked"] + ext["driver_calls_checked"] > 0  # it did look


def test_diamond_mixins_and_the_import_error_fallback_are_in_the_mro(trees: Path) -> None:
    _, report = audit_json(trees, "myext.clean.DiamondWorker")
    own = report["extensions"][0]["own_classes"]
    assert own == ["myext.clean.DiamondWorker", "myext.clean._LeftWorker",
                   "myext.clean.TrainMixin", "myext.clean._RightWorker",
                   "myext.clean.LogprobMixin", "myext.clean._DiamondBase",
                   "myext.clean.FastTrainMixin"]


def test_a_missing_module_of_the_users_package_is_unknown_not_a_failure(trees: Path) -> None:
    code, report = audit_json(trees, "myext.clean.UnknownBaseWorker")
    assert (code, report["findings"]) == (0, [])
    unknown = report["extensions"][0]["unknown"]
    assert any("myext.missing_module.MissingBase" in u for u in unknown)
    assert any("super().prepare_refit_info: may be defined by a base outside" in u
               for u in unknown)


def test_a_config_names_the_extensions_and_vllm_rules_apply(trees: Path) -> None:
    code, report = audit_json(trees, str(trees / "user" / "myext" / "config.yaml"), vllm=True)
    assert code == 1
    rules = sorted({(f["rule"], f["method"]) for f in report["findings"]})
    assert ("vllm-extension-clash", "load_model") in rules
    assert ("vllm-extension-clash", "_maybe_get_memory_pool_context") in rules
    assert ("collective-rpc-missing", "no_such_method") in rules
    assert ("override-unknown-keyword", "train") in rules
    names = {e["class"]: e for e in report["vllm"]["extensions"]}
    assert names["myvllm.gen.ClashingExtension"]["clashes"] == [
        "_maybe_get_memory_pool_context", "load_model"]  # not __private, not rank
    assert names["nemo_rl.models.generation.vllm.vllm_backend.VllmInternalWorkerExtension"][
        "clashes"] == []
    assert report["vllm"]["version"] == "0.33.0"
    origins = {e["class"]: e["origin"] for e in report["extensions"]}
    assert origins["myext.drift.DriftPolicyWorker"].endswith(
        "config.yaml: policy.worker_extension_cls_fqn")
    # sleep is vLLM's own worker method, report_device_id the extension's: no finding.
    assert not any(f["method"] in ("sleep", "report_device_id") for f in report["findings"])


def test_a_vllm_extension_on_the_command_line(trees: Path) -> None:
    code, report = audit_json(trees, "myvllm.gen.ClashingExtension", vllm=True)
    assert code == 1
    clash = next(f for f in report["findings"] if f["method"] == "load_model")
    assert clash["message"].startswith(
        "myvllm.gen.ClashingExtension.load_model clashes with vLLM 0.33.0's "
        "vllm.v1.worker.gpu_worker.Worker.load_model (method of "
        "vllm.v1.worker.gpu_worker.Worker, vllm/v1/worker/gpu_worker.py:594)")


def test_text_output_names_the_extension_and_the_vllm_version(
    trees: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    code, out, err = run(["audit", "--nemo-rl", str(trees / "mini"), "--path",
                          str(trees / "user"), "myext.clean.KeywordOnlyWorker"])
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == (
        "extension myext.clean.KeywordOnlyWorker (command line): extends "
        "nemo_rl.models.policy.workers.automodel_policy_worker.AutomodelPolicyWorker "
        "(Policy's worker); 1 own class(es); 2 super()/self calls and 1 driver calls to its "
        "overrides checked")
    assert lines[1].startswith("vLLM 0.33.0 (installed vllm-stubs): 1 worker_extension_cls "
                               "judged against vllm.v1.worker.gpu_worker.Worker, 0 refused")
    assert lines[-1].endswith("no findings")


def test_baseline_records_extension_findings_too(trees: Path, tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    args = ["audit", "--nemo-rl", str(trees / "mini"), "--path", str(trees / "user"),
            "myext.drift.DriftPolicyWorker"]
    assert run([*args, "--write-baseline", str(baseline)])[0] == 0
    code, out, _ = run([*args, "--baseline", str(baseline)])
    assert code == 0 and "7 more in the baseline" in out


@pytest.mark.parametrize(("args", "says"), [
    (["not a name"], "EXTENSION"),
    (["--path", "/nonexistent-dir", "x.Y"], "--path /nonexistent-dir: is not a folder"),
    (["--vllm-version", "0.1.0"], "--vllm-version 0.1.0: no installed vllm-stubs describes "
                                  "vLLM 0.1.0; installed: 0.33.0"),
    (["missing.yaml"], "missing.yaml: cannot be read as a config"),
])
def test_unusable_arguments_are_one_line_and_exit_2(
    trees: Path, args: list[str], says: str
) -> None:
    code, out, err = run(["audit", "--nemo-rl", str(trees / "mini"), *args])
    assert (code, out) == (2, "")
    assert len(err.splitlines()) == 1 and says in err, err


def test_hostile_extension_inputs(trees: Path, tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("a: &a [*a, *a]\n" * 3, encoding="utf-8")
    fifo = tmp_path / "fifo.yaml"
    import os

    os.mkfifo(fifo)
    odd = tmp_path / "odd.yaml"
    odd.write_bytes(b"policy:\n  worker_extension_cls_fqn: \xff\xfe\n")
    for path in (bomb, fifo, odd, tmp_path):
        code, out, err = run(["audit", "--nemo-rl", str(trees / "mini"), str(path)])
        assert (code, out) == (2, ""), (path, err)
        assert len(err.splitlines()) == 1, err
    emit = tmp_path / "folder"
    emit.mkdir()
    code, _, err = run(["audit", "--nemo-rl", str(trees / "mini"), "--emit-protocols",
                        str(emit)])
    assert code == 2 and "is not a regular file" in err
