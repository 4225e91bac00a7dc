"""The github, sarif and junit writers on findings with and without a location, with
control characters and non-ASCII text, and on no findings; each validated with its
library (SARIF: pydantic-sarif's model, generated from the SARIF 2.1.0 JSON schema, and
that model's JSON schema through jsonschema; JUnit: junitparser and a strict XML parse)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from junitparser import Error, Failure, JUnitXml
from pydantic_sarif.model import StaticAnalysisResultsFormatSarifVersion210JsonSchema as SarifLog

from nemo_rl_workers.findings.catalogue import GUIDE_URL_ENV
from nemo_rl_workers.findings.formats import render
from nemo_rl_workers.findings.results import Case, Finding, Results

HOSTILE = "bad\x1b[31m red\r\nsecond line\x00 100% done, a:b — ünïcödé 日本語 🚀"
ODD_FILE = "configs/a,b:c ü.yaml"


def _results() -> Results:
    located = Finding("R5", "error", "quant_cfg requires X, got Y.", "configs/bad.yaml", 6)
    no_line = Finding("contract", "error", HOSTILE, ODD_FILE)
    nowhere = Finding("missing", "error", "C does not implement P.train: missing")
    warning = Finding("warning", "warning", "quant_cfg requires Q; setting it automatically.",
                      "configs/q.yaml")
    note = Finding("undecidable", "note", "C.x: only __init__ sets it", "w.py", 3, title="t,i:t")
    return Results("check", [
        Case("configs/bad.yaml", "check", [located, no_line], file="configs/bad.yaml"),
        Case("C [P]", "verify", [nowhere, note]),
        Case("configs/q.yaml", "check", [warning], file="configs/q.yaml", notes=["skipped: x"]),
        Case("configs/broken.yaml", "check", error="not valid YAML\x07",
             file="configs/broken.yaml"),
        Case("configs/good.yaml", "check", file="configs/good.yaml"),
    ])


EMPTY = Results("check", [Case("configs/good.yaml", "check", file="configs/good.yaml")])
NOTHING = Results("check", [])


# ------------------------------------------------------------------------------ github


def test_github_one_command_per_finding_escaped() -> None:
    lines = render(_results(), "github").splitlines()
    assert lines == [
        "::error file=configs/bad.yaml,line=6,title=R5::quant_cfg requires X, got Y.",
        "::error file=configs/a%2Cb%3Ac ü.yaml,title=contract::bad\\x1b[31m red%0D%0Asecond "
        "line\\x00 100%25 done, a:b — ünïcödé 日本語 🚀",
        "::error title=missing::C does not implement P.train: missing",
        "::notice file=w.py,line=3,title=t%2Ci%3At::C.x: only __init__ sets it",
        "::warning file=configs/q.yaml,title=warning::quant_cfg requires Q; setting it "
        "automatically.",
        "::error file=configs/broken.yaml,title=unusable::not valid YAML\\x07",
    ]
    for line in lines:  # nothing can end the command early or split the line
        assert line.isprintable()


def test_github_no_findings_is_no_output() -> None:
    assert render(EMPTY, "github") == ""
    assert render(NOTHING, "github") == ""


# ------------------------------------------------------------------------------ sarif


def _sarif(results: Results) -> dict[str, Any]:
    text = render(results, "sarif")
    data: dict[str, Any] = json.loads(text)
    SarifLog.model_validate(data)  # the model refuses unknown members, checks enums, bounds
    jsonschema.validate(data, SarifLog.model_json_schema(by_alias=True))
    return data


def test_sarif_validates_with_rules_and_locations(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(GUIDE_URL_ENV, raising=False)
    data = _sarif(_results())
    assert data["version"] == "2.1.0"
    (run,) = data["runs"]
    rules = run["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules]
    assert ids == ["R5", "contract", "missing", "undecidable", "warning", "unusable"]
    by_id = {r["id"]: r for r in rules}
    assert by_id["R5"]["shortDescription"]["text"].startswith("quant_cfg is set")
    # Where the guide's address is unknown there is no link, and no placeholder one.
    assert not any("helpUri" in r for r in rules)
    assert "informationUri" not in run["tool"]["driver"]
    results = run["results"]
    assert [r["ruleId"] for r in results] == [
        "R5", "contract", "missing", "undecidable", "warning", "unusable"]
    assert [ids[r["ruleIndex"]] for r in results] == [r["ruleId"] for r in results]
    first = results[0]
    assert first["level"] == "error"
    assert first["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "configs/bad.yaml"}, "region": {"startLine": 6}}
    # No line: a location without a region; percent-encoded URI; message text exact.
    assert results[1]["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "configs/a%2Cb%3Ac%20%C3%BC.yaml"}}
    assert results[1]["message"]["text"] == HOSTILE
    assert "locations" not in results[2]  # no file known
    assert results[3]["level"] == "note"
    assert results[4].get("level", "warning") == "warning"  # SARIF's default level
    assert run["invocations"] == [{"executionSuccessful": False}]  # broken.yaml


def test_sarif_carries_each_rules_help_from_the_catalogue() -> None:
    rules = {r["id"]: r for r in _sarif(_results())["runs"][0]["tool"]["driver"]["rules"]}
    r5 = rules["R5"]["help"]
    # The finding's own table first (problem rule), then the selection rule's exact texts.
    assert r5["text"].splitlines()[:3] == [
        "R5: problem rule (Problem rules)",
        "  raised when: quant_cfg is set and the configured class is not the section's "
        "quantized worker",
        "  fix: set it to Q or remove it; to keep an extension, remove quant_cfg",
    ]
    assert "R5: selection rule (How the class is selected)" in r5["text"]
    assert r5["markdown"].startswith(
        "**`R5`: problem rule** (Problem rules)\n\n- raised when: `quant_cfg` is set and the "
        "configured class is not the section's quantized worker\n")
    assert "  - `quant_cfg requires worker_extension_cls_fqn=<Q>, got <X>." in r5["markdown"]
    assert rules["missing"]["help"]["text"].startswith("missing: contract violation")
    assert rules["unusable"]["help"]["text"] == (
        "unusable: output-format rule (Output formats)\n  meaning: the file could not be used "
        "at all (exit code 2): an <error> in JUnit")


def test_sarif_links_to_the_configured_guide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(GUIDE_URL_ENV, "https://docs.example.org/guide.html")
    run = _sarif(_results())["runs"][0]
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert rules["R5"]["helpUri"] == "https://docs.example.org/guide.html#problem-rules"
    assert rules["missing"]["helpUri"].endswith("#contract-violations")
    assert rules["unusable"]["helpUri"].endswith("#output-formats")
    assert run["tool"]["driver"]["informationUri"] == "https://docs.example.org/guide.html"


def test_sarif_links_to_the_guide_the_distribution_names(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A build whose `[project.urls]` has `Documentation` links there, with no setting."""
    monkeypatch.delenv(GUIDE_URL_ENV, raising=False)
    info = tmp_path / "nemo_rl_worker_contracts-9.9.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: nemo-rl-worker-contracts\nVersion: 9.9\n"
        "Project-URL: Source, https://git.example.org/ml/workers\n"
        "Project-URL: Documentation, https://docs.example.org/workers/guide.html\n",
        encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    rules = {r["id"]: r for r in _sarif(_results())["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["R5"]["helpUri"] == "https://docs.example.org/workers/guide.html#problem-rules"


def test_sarif_no_findings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(GUIDE_URL_ENV, "https://docs.example.org/guide.html")
    for results in (EMPTY, NOTHING):
        (run,) = _sarif(results)["runs"]
        assert run.get("results", []) == [] and run["tool"]["driver"].get("rules", []) == []
        assert run["tool"]["driver"]["informationUri"] == "https://docs.example.org/guide.html"
        assert run["invocations"] == [{"executionSuccessful": True}]


def test_sarif_absolute_paths_are_file_uris() -> None:
    results = Results("verify", [Case("C", "verify", [
        Finding("static", "error", "m", "/src/ü pkg/w.py", 2)])])
    (run,) = _sarif(results)["runs"]
    location = run["results"][0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "file:///src/%C3%BC%20pkg/w.py"


# ------------------------------------------------------------------------------ junit


def _junit(results: Results) -> JUnitXml:
    text = render(results, "junit")
    ET.fromstring(text.encode("utf-8"))  # well-formed XML 1.0, or this raises
    return JUnitXml.fromstring(text.encode("utf-8"))


def test_junit_one_case_per_subject() -> None:
    xml = _junit(_results())
    (suite,) = list(xml)
    assert suite.name == "nemo-rl-workers check"
    cases = list(suite)
    assert [(c.name, c.classname) for c in cases] == [
        ("configs/bad.yaml", "nemo-rl-workers.check"),
        ("C [P]", "nemo-rl-workers.verify"),
        ("configs/q.yaml", "nemo-rl-workers.check"),
        ("configs/broken.yaml", "nemo-rl-workers.check"),
        ("configs/good.yaml", "nemo-rl-workers.check"),
    ]
    bad, verify, warned, broken, good = cases
    (failure,) = bad.result
    assert isinstance(failure, Failure) and failure.type == "R5,contract"
    assert failure.message == "configs/bad.yaml:6: quant_cfg requires X, got Y. (and 1 more)"
    assert (failure.text or "").splitlines() == [
        "configs/bad.yaml:6: quant_cfg requires X, got Y.",
        f"{ODD_FILE}: bad\\x1b[31m red\\r",  # CR shown, LF kept: the message's own lines
        "second line\\x00 100% done, a:b — ünïcödé 日本語 🚀",
    ]
    assert [f.type for f in verify.result] == ["missing"]
    assert "w.py:3: C.x: only __init__ sets it" in (verify.system_out or "")
    assert warned.is_passed and "quant_cfg requires Q" in (warned.system_out or "")
    assert "skipped: x" in (warned.system_out or "")
    (error,) = broken.result
    assert isinstance(error, Error) and error.message == "not valid YAML\\x07"
    assert good.is_passed
    assert (suite.tests, suite.failures, suite.errors) == (5, 2, 1)


def test_junit_no_findings() -> None:
    (suite,) = list(_junit(EMPTY))
    assert [c.is_passed for c in suite] == [True]
    (empty,) = list(_junit(NOTHING))
    assert empty.tests == 0
