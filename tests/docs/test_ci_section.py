"""The guide's CI jobs for annotations, SARIF upload and GitLab, and its pytest ini block:
each job's YAML is parsed and every command in it runs here (but the install), in a
scratch folder that sees the checkout's examples, and what the job uploads is validated
with its library. Also: every rule the SARIF log describes points at a row of the guide."""

from __future__ import annotations

import glob
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from junitparser import JUnitXml
from pydantic_sarif.model import StaticAnalysisResultsFormatSarifVersion210JsonSchema as SarifLog

from nemo_rl_workers.cache.store import FORMAT
from nemo_rl_workers.findings.catalogue import TABLES
from tests.docs.snippets import REPO, TIMEOUT_S, Block, read_blocks, shell_env

GUIDE = REPO / "docs" / "guides" / "worker-extensions.md"
BLOCKS = read_blocks(GUIDE)


def _blocks(directive: str) -> list[Block]:
    found = [b for b in BLOCKS if b.directive(directive) is not None]
    assert found, f"the guide has no {directive} block"
    return found


def _scratch(tmp_path: Path) -> Path:
    """A folder whose examples/, research/ and docs/ are the checkout's: job outputs
    (reports, the cache) land here, not in the checkout."""
    work = tmp_path / "job"
    work.mkdir()
    for name in ("examples", "research", "docs"):
        (work / name).symlink_to(REPO / name)
    return work


def _run(line: str, work: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["bash", "-c", line], cwd=work, env=shell_env(tmp_path), text=True,
                          capture_output=True, timeout=TIMEOUT_S, check=False)
    assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
    return done


def _install_names_real_extras(text: str) -> None:
    import tomllib

    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))[
        "project"]["optional-dependencies"]
    named = re.search(r"-e '\.\[([\w,]+)\]'", text)
    assert named is not None and set(named[1].split(",")) <= set(extras)
    assert "ci" in named[1].split(",") and "./stubs" in text
    assert not {"runtime", "vllm"} & set(named[1].split(","))


def _validate_sarif(path: Path) -> None:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    SarifLog.model_validate(data)
    assert data["version"] == "2.1.0"


@pytest.mark.slow
def test_github_annotations_job(tmp_path: Path) -> None:
    (block,) = _blocks("github-annotations")
    workflow: dict[Any, Any] = yaml.safe_load(block.text)
    assert workflow.get("on", workflow.get(True)) == ["push", "pull_request"]
    assert workflow["permissions"]["security-events"] == "write"
    (job,) = workflow["jobs"].values()
    steps: list[dict[str, Any]] = job["steps"]
    assert steps[0]["uses"].startswith("actions/checkout@")
    work = _scratch(tmp_path)
    ran = 0
    for step in steps:
        if step.get("name") == "Install":
            _install_names_real_extras(step["run"])
            continue
        if "run" not in step:
            continue
        for line in (ln for ln in step["run"].splitlines() if ln.strip()):
            done = _run(line, work, tmp_path)
            ran += 1
            if "--output-format github" in line:  # all good: warnings at most (R3's)
                assert all(a.startswith("::warning ") for a in done.stdout.splitlines()), (
                    done.stdout)
    assert ran >= 5
    (upload,) = [s for s in steps if s.get("uses", "").startswith(
        "github/codeql-action/upload-sarif@")]
    assert upload["if"] == "always()"
    _validate_sarif(work / upload["with"]["sarif_file"])
    (cache,) = [s for s in steps if s.get("uses", "").startswith("actions/cache@")]
    assert cache["with"]["path"] == ".nemo-rl-workers-cache"
    assert (work / ".nemo-rl-workers-cache" / f"v{FORMAT}").is_dir()  # the job's runs filled it
    assert JUnitXml.fromfile(str(work / "nemo-rl-workers-pytest.xml")).tests == 2


@pytest.mark.slow
def test_gitlab_job(tmp_path: Path) -> None:
    (block,) = _blocks("gitlab-ci")
    config: dict[str, Any] = yaml.safe_load(block.text)
    (job,) = config.values()
    _install_names_real_extras("\n".join(job["before_script"]))
    work = _scratch(tmp_path)
    for line in job["script"]:
        _run(line, work, tmp_path)
    assert job["cache"]["paths"] == [".nemo-rl-workers-cache/"]
    assert job["artifacts"]["when"] == "always"
    reports = sorted(glob.glob(str(work / job["artifacts"]["reports"]["junit"])))
    assert [Path(r).name for r in reports] == [
        "nemo-rl-workers-check.xml", "nemo-rl-workers-migrate.xml",
        "nemo-rl-workers-pytest.xml", "nemo-rl-workers-verify.xml"]
    cases = {Path(r).name: [c for s in JUnitXml.fromfile(r) for c in s] for r in reports}
    assert len(cases["nemo-rl-workers-check.xml"]) == 3
    assert len(cases["nemo-rl-workers-verify.xml"]) == 1
    assert all(c.is_passed for found in cases.values() for c in found)


@pytest.mark.slow
def test_pytest_ini_block(tmp_path: Path) -> None:
    (block,) = _blocks("pytest-ini")
    assert block.lang == "ini"
    work = _scratch(tmp_path)
    (work / "pytest.ini").write_text(block.text, encoding="utf-8")
    done = subprocess.run(
        ["pytest", "--nemo-rl-workers", "-p", "no:cacheprovider", "-o",
         "nemo_rl_workers_registered=false", "-q", "-rA", "examples/configs"],
        cwd=work, env=shell_env(tmp_path), text=True, capture_output=True, timeout=TIMEOUT_S,
        check=False)
    out = done.stdout
    assert done.returncode == 1, out + done.stderr  # mismatched_quant.yaml is wrong on purpose
    for passed in ("examples/configs/grpo_tiny.yaml::check",
                   "examples/configs/grpo_tiny_int8.yaml::check",
                   "nemo-rl-workers-verify[template_project.workers.TemplateAutomodelPolicyWorker]",
                   "nemo-rl-workers-verify-static"
                   "[template_project.workers.TemplateAutomodelPolicyWorker]"):
        assert f"PASSED {passed}" in out, out
    assert "FAILED examples/configs/mismatched_quant.yaml::check" in out
    assert "examples/configs/mismatched_quant.yaml:6: quant_cfg requires" in out


def _section(anchor: str) -> str:
    """The text under the heading whose GitHub anchor is `anchor`."""
    for match in re.finditer(r"^(#+) (.+)$", GUIDE.read_text(encoding="utf-8"), re.M):
        slug = re.sub(r"[^\w\- ]", "", match[2].lower()).replace(" ", "-")
        if slug == anchor:
            rest = GUIDE.read_text(encoding="utf-8")[match.end():]
            return re.split(rf"^#{{1,{len(match[1])}}} ", rest, maxsplit=1, flags=re.M)[0]
    return ""


def test_every_sarif_rule_points_at_a_row_of_the_guide() -> None:
    for table in TABLES:
        section = _section(table.anchor)
        assert section, f"{table.what}: no heading with anchor #{table.anchor}"
        for name, *_ in table.rows:
            shown = f"`{name}`" if table.code_names else name
            assert re.search(rf"^\| {re.escape(shown)} \|", section, re.M), (
                f"{name}: no row in #{table.anchor}")
