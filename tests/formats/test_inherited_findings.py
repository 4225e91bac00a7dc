"""A recipe refused for a value it inherits through `defaults:`: every CI format puts the
finding on the recipe (the file the user runs `check` on), and its message names the
parent file and line that write the value. On a written recipe, and on the 2026-08
corpus's `prorlv2_1_moe.v2.yaml` (skipped where the corpus is absent), whose
`grpo.batch_multiplier: 1.5` comes from `prorlv2.v2.yaml` and fails the tree's own
`assert batch_multiplier == 1` in `grpo.setup`."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from junitparser import Failure, JUnitXml
from pydantic_sarif.model import StaticAnalysisResultsFormatSarifVersion210JsonSchema as SarifLog

from tests.cli_run import run_cli as run
from tests.corpus import NEMO_RL
from tests.docs.snippets import REPO

pytest_plugins = ("pytester",)

MEGATRON_Q = (
    "nemo_rl.modelopt.models.policy.workers.megatron_quant_policy_worker.MegatronQuantPolicyWorker"
)
# R5 (quantized Automodel policy naming the Megatron quantized worker), set on line 6.
PARENT = f"""\
policy:
  model_name: tiny
  automodel_cfg: {{enabled: true}}
  megatron_cfg: {{enabled: false}}
  quant_cfg: INT8_DEFAULT_CFG
  worker_extension_cls_fqn: {MEGATRON_Q}
"""
PARENT_LINE = 6
# Writes the `policy:` block (line 3) but not the refused key.
RECIPE = """\
# my recipe: the parent's policy, another model name
defaults: ../base/parent.yaml
policy:
  model_name: tiny-too
"""
RECIPE_LINE = 3
# Writes nothing on the refused key's path: the finding lands on its `defaults:` line.
BARE_RECIPE = """\
# only the parent's values
defaults: ../base/parent.yaml
"""
BARE_LINE = 2
SCHEMA = REPO / "docs" / "schemas" / "check.schema.json"
CORPUS = NEMO_RL
MOE = CORPUS / "examples" / "configs" / "prorlv2_1_moe.v2.yaml"
MOE_PARENT = MOE.parent / "prorlv2.v2.yaml"



def sarif_of(text: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(text)
    SarifLog.model_validate(data)
    jsonschema.validate(data, SarifLog.model_json_schema(by_alias=True))
    return data


def line_of(file: Path, starts: str) -> int:
    """The 1-based line of `file` that starts (after indentation) with `starts`."""
    lines = file.read_text(encoding="utf-8").splitlines()
    (found,) = [i for i, text in enumerate(lines, 1) if text.lstrip().startswith(starts)]
    return found


@pytest.fixture
def recipes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """recipes/child.yaml and recipes/bare.yaml over base/parent.yaml; run from tmp_path."""
    (tmp_path / "base").mkdir()
    (tmp_path / "base" / "parent.yaml").write_text(PARENT, encoding="utf-8")
    (tmp_path / "recipes").mkdir()
    (tmp_path / "recipes" / "child.yaml").write_text(RECIPE, encoding="utf-8")
    (tmp_path / "recipes" / "bare.yaml").write_text(BARE_RECIPE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    return tmp_path


# ------------------------------------------------------------------------ written recipe


@pytest.mark.parametrize(("recipe", "line"), [("recipes/child.yaml", RECIPE_LINE),
                                              ("recipes/bare.yaml", BARE_LINE)])
def test_github_annotates_the_recipe_naming_the_parent(
    recipes: Path, recipe: str, line: int
) -> None:
    code, out, err = run("check", "--no-verify", "--output-format", "github", recipe)
    assert (code, err) == (1, "")
    (annotation,) = out.splitlines()
    assert annotation.startswith(f"::error file={recipe},line={line},title=R5::quant_cfg requires")
    assert annotation.endswith(f" (value inherited from base/parent.yaml:{PARENT_LINE})")


def test_sarif_locates_the_recipe_and_relates_the_parent(recipes: Path) -> None:
    code, out, _ = run("check", "--no-verify", "--output-format", "sarif", "recipes/child.yaml")
    assert code == 1
    (result,) = sarif_of(out)["runs"][0]["results"]
    assert result["ruleId"] == "R5"
    assert [loc["physicalLocation"] for loc in result["locations"]] == [{
        "artifactLocation": {"uri": "recipes/child.yaml"},
        "region": {"startLine": RECIPE_LINE}}]
    (related,) = result["relatedLocations"]
    assert related["physicalLocation"] == {
        "artifactLocation": {"uri": "base/parent.yaml"}, "region": {"startLine": PARENT_LINE}}
    assert result["message"]["text"].endswith(
        f" (value inherited from base/parent.yaml:{PARENT_LINE})")


def test_junit_case_and_failure_name_the_recipe(recipes: Path) -> None:
    code, out, _ = run("check", "--no-verify", "--output-format", "junit", "recipes/child.yaml")
    assert code == 1
    ((case,),) = [list(suite) for suite in JUnitXml.fromstring(out.encode("utf-8"))]
    assert case.name == "recipes/child.yaml"
    (failure,) = case.result
    assert isinstance(failure, Failure) and failure.type == "R5"
    for text in (failure.message, failure.text):
        assert text is not None and text.startswith(f"recipes/child.yaml:{RECIPE_LINE}: ")
        assert f"(value inherited from base/parent.yaml:{PARENT_LINE})" in text


def test_json_says_where_the_value_is_written_and_where_it_lands(recipes: Path) -> None:
    code, out, _ = run("check", "--no-verify", "--json", "recipes/child.yaml", "base/parent.yaml")
    assert code == 1
    payload = json.loads(out)
    jsonschema.validate(payload, json.loads(SCHEMA.read_text(encoding="utf-8")))
    (child,), (own,) = [c["problems"] for c in payload["configs"]]
    assert (child["file"], child["line"]) == ("base/parent.yaml", PARENT_LINE)
    assert (child["inherited"], child["config_line"]) == (True, RECIPE_LINE)
    # The parent checked itself: the value is its own.
    assert (own["file"], own["line"]) == ("base/parent.yaml", PARENT_LINE)
    assert (own["inherited"], own["config_line"]) == (False, PARENT_LINE)


def test_a_value_the_recipe_writes_itself_names_no_parent(recipes: Path) -> None:
    (recipes / "recipes" / "own.yaml").write_text(
        RECIPE + f"  worker_extension_cls_fqn: {MEGATRON_Q}\n", encoding="utf-8")
    code, out, _ = run("check", "--no-verify", "--output-format", "github", "recipes/own.yaml")
    assert code == 1
    (annotation,) = out.splitlines()
    assert annotation.startswith("::error file=recipes/own.yaml,line=5,title=R5::")
    assert "inherited" not in annotation


def _plugin_project(pytester: pytest.Pytester, patterns: str, check_args: str = "") -> None:
    pytester.makefile(".ini", pytest=textwrap.dedent(f"""\
        [pytest]
        nemo_rl_workers_configs = {patterns}
        nemo_rl_workers_check_args = {check_args}
        nemo_rl_workers_registered = false
        """))


@pytest.mark.slow
def test_pytest_plugin_item_fails_on_the_recipe_naming_the_parent(
    pytester: pytest.Pytester,
) -> None:
    _plugin_project(pytester, "recipes/*.yaml", "--no-verify")
    pytester.mkdir("base")
    pytester.mkdir("recipes")
    (pytester.path / "base" / "parent.yaml").write_text(PARENT, encoding="utf-8")
    (pytester.path / "recipes" / "child.yaml").write_text(RECIPE, encoding="utf-8")
    report = pytester.path / "report.xml"
    result = pytester.runpytest_subprocess(
        "--nemo-rl-workers", "-rN", "-p", "no:cacheprovider", "--noconftest",
        f"--junit-xml={report}",
    )
    result.assert_outcomes(failed=1)
    said = [line for line in result.outlines if "quant_cfg requires" in line]
    assert said and all(line.startswith(f"recipes/child.yaml:{RECIPE_LINE}: ") for line in said)
    assert all(f"(value inherited from base/parent.yaml:{PARENT_LINE}) [R5]" in line
               for line in said)
    ((case,),) = [list(suite) for suite in JUnitXml.fromfile(str(report))]
    assert (case.classname, case.name) == ("recipes.child.yaml", "check")
    (failure,) = case.result
    assert isinstance(failure, Failure) and failure.text is not None
    assert failure.text.startswith(f"recipes/child.yaml:{RECIPE_LINE}: quant_cfg requires")


# ------------------------------------------------------------------------------- corpus

needs_corpus = pytest.mark.skipif(not MOE.is_file(), reason=f"corpus absent: {MOE}")


@pytest.fixture(scope="module")
def moe_outputs() -> dict[str, tuple[int, str, str]]:
    """`check FORMAT prorlv2_1_moe.v2.yaml` in each format, as a user runs it."""
    return {fmt: run("check", "--output-format", fmt, str(MOE))
            for fmt in ("github", "sarif", "junit", "json")}


def _moe_lines() -> tuple[int, int]:
    """(the recipe's `grpo:` line, the parent's `batch_multiplier:` line), read from the
    files: the refused key's closest block the recipe writes, and the inherited value."""
    return line_of(MOE, "grpo:"), line_of(MOE_PARENT, "batch_multiplier:")


@needs_corpus
def test_corpus_moe_recipe_github(moe_outputs: dict[str, tuple[int, str, str]]) -> None:
    code, out, _ = moe_outputs["github"]
    assert code == 1
    recipe_line, value_line = _moe_lines()
    refused = [a for a in out.splitlines() if "assert batch_multiplier == 1" in a]
    assert refused == [a for a in refused if a.startswith(
        f"::error file={MOE},line={recipe_line},title=tree.refuses::grpo.batch_multiplier: ")]
    assert len(refused) == 1
    assert refused[0].endswith(f" (value inherited from {MOE_PARENT}:{value_line})")
    assert f"file={MOE_PARENT}" not in out


@needs_corpus
def test_corpus_moe_recipe_sarif(moe_outputs: dict[str, tuple[int, str, str]]) -> None:
    code, out, _ = moe_outputs["sarif"]
    assert code == 1
    recipe_line, value_line = _moe_lines()
    (result,) = [r for r in sarif_of(out)["runs"][0]["results"]
                 if "assert batch_multiplier == 1" in r["message"]["text"]]
    assert [loc["physicalLocation"] for loc in result["locations"]] == [{
        "artifactLocation": {"uri": MOE.as_uri()}, "region": {"startLine": recipe_line}}]
    assert [loc["physicalLocation"] for loc in result["relatedLocations"]] == [{
        "artifactLocation": {"uri": MOE_PARENT.as_uri()}, "region": {"startLine": value_line}}]
    assert f"{MOE_PARENT}:{value_line}" in result["message"]["text"]


@needs_corpus
def test_corpus_moe_recipe_junit_and_json(moe_outputs: dict[str, tuple[int, str, str]]) -> None:
    recipe_line, value_line = _moe_lines()
    code, out, _ = moe_outputs["junit"]
    assert code == 1
    ((case,),) = [list(suite) for suite in JUnitXml.fromstring(out.encode("utf-8"))]
    assert case.name == str(MOE)
    (failure,) = [r for r in case.result if isinstance(r, Failure)]
    (line,) = [t for t in (failure.text or "").splitlines() if "batch_multiplier == 1" in t]
    assert line.startswith(f"{MOE}:{recipe_line}: grpo.batch_multiplier: ")
    assert line.endswith(f" (value inherited from {MOE_PARENT}:{value_line})")
    code, out, _ = moe_outputs["json"]
    assert code == 1
    payload = json.loads(out)
    jsonschema.validate(payload, json.loads(SCHEMA.read_text(encoding="utf-8")))
    (problem,) = [p for p in payload["problems"] if p["path"] == "grpo.batch_multiplier"]
    assert (problem["file"], problem["line"]) == (str(MOE_PARENT), value_line)
    assert (problem["inherited"], problem["config_line"]) == (True, recipe_line)


@needs_corpus
@pytest.mark.slow
def test_corpus_moe_recipe_pytest_item(pytester: pytest.Pytester) -> None:
    _plugin_project(pytester, "*.yaml")
    recipe_line, value_line = _moe_lines()
    # The corpus's own pytest settings and conftests are not this run's.
    result = pytester.runpytest_subprocess(
        "--nemo-rl-workers", "-rN", "-p", "no:cacheprovider", "--noconftest", "-c", "pytest.ini",
        "--rootdir", str(pytester.path), str(MOE),
    )
    result.assert_outcomes(failed=1)
    (said,) = [line for line in result.outlines if "assert batch_multiplier == 1" in line]
    assert said.startswith(f"{MOE}:{recipe_line}: grpo.batch_multiplier: ")
    assert said.endswith(f" (value inherited from {MOE_PARENT}:{value_line}) [tree.refuses]")
