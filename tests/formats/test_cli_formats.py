"""`--output-format` on check, verify, migrate --check, check --static and verify --static:
each format validated with its library, the exit codes of the text output, and hostile
combinations of the flag (one line, exit code 2)."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from junitparser import Failure, JUnitXml
from pydantic_sarif.model import StaticAnalysisResultsFormatSarifVersion210JsonSchema as SarifLog

from tests.cli_run import run_cli as run
from tests.docs.snippets import REPO

MISMATCHED = "examples/configs/mismatched_quant.yaml"
TINY = "examples/configs/grpo_tiny.yaml"
VLLM = "nemo_rl.models.generation.vllm.vllm_worker.VllmGenerationWorker"
TEMPLATE = "template_project.workers.TemplateAutomodelPolicyWorker"
R5_LINE = (
    "::error file=examples/configs/mismatched_quant.yaml,line=6,title=R5::quant_cfg requires "
    "worker_extension_cls_fqn=nemo_rl.modelopt.models.policy.workers."
    "automodel_quant_policy_worker.AutomodelQuantPolicyWorker, got "
)
OUTDATED = """\
policy:
  model_name: m
  dtensor_cfg:
    enabled: true
    _v2: true
  megatron_cfg: {enabled: false}
"""



@pytest.fixture(autouse=True)
def _in_repo(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(REPO)  # paths in annotations are relative to the checkout
    monkeypatch.setenv("NO_COLOR", "1")


def sarif_of(text: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(text)
    SarifLog.model_validate(data)
    jsonschema.validate(data, SarifLog.model_json_schema(by_alias=True))
    return data


def junit_of(text: str) -> JUnitXml:
    ET.fromstring(text.encode("utf-8"))
    return JUnitXml.fromstring(text.encode("utf-8"))


# ------------------------------------------------------------------------------ check


def test_check_github() -> None:
    code, out, err = run("check", "--no-verify", "--output-format", "github", MISMATCHED, TINY)
    assert (code, err) == (1, "")
    (line,) = out.splitlines()
    assert line.startswith(R5_LINE)


def test_check_sarif_and_junit() -> None:
    code, out, _ = run("check", "--no-verify", "--output-format", "sarif", MISMATCHED, TINY)
    assert code == 1
    (run_,) = sarif_of(out)["runs"]
    (result,) = run_["results"]
    assert result["ruleId"] == "R5"
    assert result["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": MISMATCHED}, "region": {"startLine": 6}}
    code, out, _ = run("check", "--no-verify", "--output-format", "junit", MISMATCHED, TINY)
    assert code == 1
    (suite,) = list(junit_of(out))
    bad, good = list(suite)
    assert (bad.name, good.name) == (MISMATCHED, TINY)
    assert isinstance(bad.result[0], Failure) and bad.result[0].type == "R5"
    assert good.is_passed


def test_check_json_is_the_same_as_output_format_json() -> None:
    plain = run("check", "--no-verify", "--json", MISMATCHED)
    assert run("check", "--no-verify", "--output-format", "json", MISMATCHED) == plain
    assert run("check", "--no-verify", "--output-format", "json", "--json", MISMATCHED) == plain
    assert plain[0] == 1 and json.loads(plain[1])["problems"][0]["rule"] == "R5"


def test_check_unusable_file_is_exit_2_in_every_format(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("policy: [unclosed\n", encoding="utf-8")
    for fmt in ("github", "sarif", "junit"):
        code, out, err = run("check", "--no-verify", "--output-format", fmt, str(broken))
        assert code == 2 and len(err.splitlines()) == 1, (fmt, err)
    code, out, _ = run("check", "--no-verify", "--output-format", "junit", str(broken))
    (case,) = list(next(iter(junit_of(out))))
    assert case.is_error


@pytest.mark.runtime  # the reference runtime's or the template's workers
def test_check_static_formats() -> None:
    for fmt in ("github", "sarif", "junit"):
        code, out, err = run("check", "--static", "--no-cache", "--output-format", fmt, TINY)
        assert code == 0, err
        if fmt == "github":
            assert out == ""
        elif fmt == "sarif":
            assert sarif_of(out)["runs"][0].get("results", []) == []
        else:
            (case,) = list(next(iter(junit_of(out))))
            assert case.is_passed and "skipped" not in (case.system_out or "x")


# ------------------------------------------------------------------------------ verify


@pytest.mark.runtime  # the reference runtime's or the template's workers
@pytest.mark.slow  # imports the vLLM worker's module (torch)
def test_verify_formats_locate_the_class() -> None:
    code, out, _ = run("verify", VLLM, "--protocol", "PolicyWorker", "--output-format", "github")
    assert code == 1
    lines = out.splitlines()
    assert lines and all(
        line.startswith("::error file=runtime/nemo_rl/models/generation/vllm/vllm_worker.py,line=")
        for line in lines)
    assert any("title=missing::" in line and "PolicyWorker.train: missing" in line
               for line in lines)
    code, out, _ = run("verify", VLLM, "--protocol", "PolicyWorker", "--output-format", "sarif")
    (run_,) = sarif_of(out)["runs"]
    rule_ids = [r["id"] for r in run_["tool"]["driver"]["rules"]]
    assert sorted(rule_ids) == ["base", "missing"]  # one descriptor per rule name
    assert {r["ruleId"] for r in run_["results"]} == {"base", "missing"}
    code, out, _ = run("verify", VLLM, "--protocol", "PolicyWorker", "--output-format", "junit")
    (case,) = list(next(iter(junit_of(out))))
    assert case.name == f"{VLLM} [PolicyWorker]" and case.is_failure
    code, out, _ = run("verify", TEMPLATE, "--protocol", "PolicyWorker", "--output-format",
                       "junit")
    assert code == 0
    (case,) = list(next(iter(junit_of(out))))
    assert case.is_passed


@pytest.mark.runtime  # the reference runtime's or the template's workers
def test_verify_static_formats() -> None:
    args = ("verify", VLLM, "--protocol", "PolicyWorker", "--static", "--no-cache")
    code, out, _ = run(*args, "--output-format", "github")
    assert code == 1
    assert any(line.startswith(
        "::error file=runtime/nemo_rl/models/generation/vllm/vllm_worker.py,line=")
        and "title=static::" in line and "PolicyWorker.train" in line
        for line in out.splitlines())
    code, out, _ = run(*args, "--output-format", "sarif")
    assert {r["ruleId"] for r in sarif_of(out)["runs"][0]["results"]} == {"static"}
    code, out, _ = run(*args, "--output-format", "junit")
    (case,) = list(next(iter(junit_of(out))))
    assert case.is_failure and "PolicyWorker.train" in (case.result[0].text or "")


# ------------------------------------------------------------------------------ migrate


def test_migrate_check_formats(tmp_path: Path) -> None:
    old = tmp_path / "old.yaml"
    old.write_text(OUTDATED, encoding="utf-8")
    new = tmp_path / "new.yaml"
    new.write_text("policy:\n  model_name: m\n", encoding="utf-8")
    code, out, err = run("migrate", "--check", str(old), str(new), "--output-format", "github")
    assert (code, err) == (1, "")
    assert out.splitlines() == [
        f"::error file={old},line=3,title=migrate::outdated config, migrate would change: "
        "policy.dtensor_cfg -> policy.automodel_cfg",
        f"::error file={old},line=5,title=migrate::outdated config, migrate would change: "
        "dropped policy.automodel_cfg._v2",
    ]
    code, out, _ = run("migrate", "--check", str(old), str(new), "--output-format", "sarif")
    results = sarif_of(out)["runs"][0]["results"]
    assert [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results] == [3, 5]
    code, out, _ = run("migrate", "--check", str(old), str(new), "--output-format=junit")
    cases = list(next(iter(junit_of(out))))
    assert [(c.name, c.is_failure) for c in cases] == [(str(old), True), (str(new), False)]
    code, out, _ = run("migrate", "--check", "--json", str(old), str(new))
    assert code == 1
    assert [f["status"] for f in json.loads(out)["files"]] == ["changed", "unchanged"]
    assert old.read_text(encoding="utf-8") == OUTDATED  # --check writes nothing
    # text stays migrate's own output
    assert run("migrate", "--check", str(new), "--output-format", "text")[0] == 0


# ------------------------------------------------------------------------------ hostile


@pytest.mark.parametrize("argv, says", [
    (("check", "--no-verify", "--json", "--output-format", "sarif", TINY),
     "nemo-rl-workers: --json and --output-format sarif disagree; give one"),
    (("verify", TEMPLATE, "--protocol", "PolicyWorker", "--json", "--output-format", "junit"),
     "nemo-rl-workers: --json and --output-format junit disagree; give one"),
    (("migrate", "--output-format", "github", TINY),
     "nemo-rl-workers migrate: error: --output-format github needs --check"),
    (("migrate", "--check", "-i", "--output-format", "github", TINY),
     "nemo-rl-workers migrate: error: unrecognized arguments: -i "
     "(--output-format goes with --check only)"),
    (("migrate", "--check", "--json", "--output-format", "sarif", TINY),
     "nemo-rl-workers migrate: error: --json and --output-format sarif disagree; give one"),
])
def test_conflicting_format_flags_are_one_line(argv: tuple[str, ...], says: str) -> None:
    code, out, err = run(*argv)
    assert (code, out, err) == (2, "", says + "\n")


@pytest.mark.parametrize("fmt", ["xml", "", "GITHUB", "sarif\n"])
def test_unknown_format_is_a_usage_error(fmt: str) -> None:
    code, out, err = run("check", "--no-verify", "--output-format", fmt, TINY)
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert "invalid choice" in err


@pytest.mark.parametrize("fmt, package", [("sarif", "pydantic_sarif"), ("junit", "junitparser")])
def test_format_without_its_library_is_one_line(
    fmt: str, package: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fault injected on purpose: the library made unimportable (as on a light install)."""
    monkeypatch.setitem(sys.modules, package, None)
    code, out, err = run("check", "--no-verify", "--output-format", fmt, TINY)
    extra = "nemo-rl-worker-contracts[ci]"
    dist = package.replace("_", "-")
    assert (code, out) == (2, "")
    assert err == (f"nemo-rl-workers: --output-format {fmt} needs the {dist} package, which is "
                   f"not installed here (pip install '{extra}')\n")
    code, _, err = run("migrate", "--check", TINY, "--output-format", fmt)
    assert code == 2 and len(err.splitlines()) == 1
