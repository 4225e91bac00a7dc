"""`audit --output-format` and audit's cache, on small NeMo-RL-shaped trees."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from junitparser import Failure, JUnitXml
from pydantic_sarif.model import StaticAnalysisResultsFormatSarifVersion210JsonSchema as SarifLog

from nemo_rl_workers.checks.audit import run as audit_run
from nemo_rl_workers.commands import audit as audit_cli
from tests.audit.test_rules import WORKERS
from tests.audit.tree import write_tree
from tests.cli_run import run_cli as run

CALLS_NOPE = '''
    def go(self):
        return self.worker_group.run_all_workers_single_data("nope")
'''
# A caller in the tree: the finding is reachable (an error), not latent.
CALLER = {"nemo_rl/algorithms.py": "def train(gen):\n    return gen.go()\n"}
MISSING = (
    "::error file=nemo_rl/driver.py,line=16,title=missing-method::Gen.go calls 'nope' on "
    "nemo_rl.workers.{w}, which has no such method (its MRO ends at {end}){when} "
    "[definition: nemo_rl/workers.py:{line}]"
)



@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    return write_tree(tmp_path, driver_body=CALLS_NOPE, workers=WORKERS, extra=CALLER)


def test_audit_github(tree: Path) -> None:
    code, out, err = run("audit", "--nemo-rl", str(tree), "--no-cache", "--output-format",
                         "github")
    assert (code, err) == (1, "")
    # One cause (both workers lack it where their MRO ends, at Base): one annotation,
    # naming both classes; under every value of the switch, so under no condition.
    assert out.splitlines() == [MISSING.format(
        w="AsyncWorker and nemo_rl.workers.SyncWorker", end="Base", line=5, when="")]


def test_audit_sarif_and_junit(tree: Path) -> None:
    code, out, _ = run("audit", "--nemo-rl", str(tree), "--no-cache", "--output-format", "sarif")
    assert code == 1
    data: dict[str, Any] = json.loads(out)
    SarifLog.model_validate(data)
    jsonschema.validate(data, SarifLog.model_json_schema(by_alias=True))
    (sarif_run,) = data["runs"]
    assert [r["id"] for r in sarif_run["tool"]["driver"]["rules"]] == ["missing-method"]
    assert [r["locations"][0]["physicalLocation"]["region"]["startLine"]
            for r in sarif_run["results"]] == [16]  # one result per cause
    code, out, _ = run("audit", "--nemo-rl", str(tree), "--no-cache", "--output-format", "junit")
    ET.fromstring(out.encode("utf-8"))
    cases = {c.name: c for suite in JUnitXml.fromstring(out.encode("utf-8")) for c in suite}
    assert set(cases) == {"Gen -> nemo_rl.workers.SyncWorker", "Gen -> nemo_rl.workers.AsyncWorker"}
    for case in cases.values():
        (failure,) = case.result
        assert isinstance(failure, Failure) and failure.type == "missing-method"


def test_audit_json_is_output_format_json(tree: Path) -> None:
    assert (run("audit", "--nemo-rl", str(tree), "--no-cache", "--json")
            == run("audit", "--nemo-rl", str(tree), "--no-cache", "--output-format", "json"))


def test_audit_clean_tree_has_no_findings_in_any_format(tree: Path) -> None:
    write_tree(tree, driver_body='''
        def go(self):
            return self.worker_group.run_all_workers_single_data("shared", data=1)
    ''', workers=WORKERS)
    assert run("audit", "--nemo-rl", str(tree), "--no-cache", "--output-format", "github") == (
        0, "", "")
    code, out, _ = run("audit", "--nemo-rl", str(tree), "--no-cache", "--output-format", "junit")
    assert code == 0
    assert all(c.is_passed for s in JUnitXml.fromstring(out.encode("utf-8")) for c in s)


# ------------------------------------------------------------------------------ cache


@pytest.fixture
def audits(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per real audit run (the real run_audit, counted)."""
    real = audit_cli.run_audit
    counted: list[int] = []

    def counting(*args: Any) -> int:
        counted.append(1)
        return real(*args)

    monkeypatch.setattr(audit_cli, "run_audit", counting)
    return counted


def test_audit_cache_answers_unchanged_trees(tree: Path, audits: list[int]) -> None:
    cache = str(tree / "cache")
    first = run("audit", "--nemo-rl", str(tree), "--cache-dir", cache)
    assert first[0] == 1
    assert run("audit", "--nemo-rl", str(tree), "--cache-dir", cache) == first
    assert len(audits) == 1
    # Another format is another entry.
    github = run("audit", "--nemo-rl", str(tree), "--cache-dir", cache, "--output-format",
                 "github")
    assert github[1].startswith("::error") and len(audits) == 2


def test_audit_cache_sees_a_change_in_the_tree(tree: Path, audits: list[int]) -> None:
    cache = str(tree / "cache")
    assert run("audit", "--nemo-rl", str(tree), "--cache-dir", cache)[0] == 1
    workers = tree / "nemo_rl" / "workers.py"
    workers.write_text(workers.read_text(encoding="utf-8").replace(
        "class Base:\n", "class Base:\n    def nope(self):\n        return 0\n\n"),
        encoding="utf-8")
    fresh = run("audit", "--nemo-rl", str(tree), "--no-cache")
    assert fresh[0] == 0
    assert run("audit", "--nemo-rl", str(tree), "--cache-dir", cache) == fresh
    assert len(audits) == 3


def test_audit_cache_sees_a_change_in_the_baseline(tree: Path, audits: list[int]) -> None:
    cache = str(tree / "cache")
    baseline = tree / "baseline.json"
    assert run("audit", "--nemo-rl", str(tree), "--no-cache", "--write-baseline",
               str(baseline))[0] == 0
    assert run("audit", "--nemo-rl", str(tree), "--cache-dir", cache, "--baseline",
               str(baseline))[0] == 0
    baseline.write_text(json.dumps(json.loads(baseline.read_text(encoding="utf-8")) | {
        "findings": []}), encoding="utf-8")
    again = run("audit", "--nemo-rl", str(tree), "--cache-dir", cache, "--baseline",
                str(baseline))
    assert again == run("audit", "--nemo-rl", str(tree), "--no-cache", "--baseline",
                        str(baseline))


def test_audit_cache_sees_a_change_in_the_stubs(
    tree: Path, audits: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    stubs = tree / "stubs" / "extbase-stubs"
    stubs.mkdir(parents=True)
    (stubs / "__init__.pyi").write_text("class Ext:\n    def other(self) -> int: ...\n",
                                        encoding="utf-8")
    monkeypatch.setattr(audit_run, "stub_roots", lambda: [stubs])
    write_tree(tree, driver_body=CALLS_NOPE, workers="from extbase import Ext\n\n\n"
               "class SyncWorker(Ext):\n    pass\n\n\nclass AsyncWorker(Ext):\n    pass\n")
    cache = str(tree / "cache")
    before = run("audit", "--nemo-rl", str(tree), "--cache-dir", cache)
    (stubs / "__init__.pyi").write_text(
        "class Ext:\n    def nope(self) -> int:\n        return 0\n", encoding="utf-8")
    after = run("audit", "--nemo-rl", str(tree), "--cache-dir", cache)
    assert after == run("audit", "--nemo-rl", str(tree), "--no-cache")
    assert after != before and len(audits) == 3


def test_audit_cache_keys_on_the_audits_own_code() -> None:
    """An upgrade of the tool is a new entry: the key covers the rules and the reader."""
    from nemo_rl_workers.cache.digest import own_files

    package = Path(audit_run.__file__).resolve().parents[2]
    names = {str(f.relative_to(package)) for f in own_files()}
    assert {"checks/audit/rules.py", "tree/drivers.py", "tree/source/build.py",
            "findings/audit_report.py", "commands/audit.py", "errors.py"} <= names
    assert all(f.is_file() for f in own_files())


def test_audit_bad_cache_dir_is_one_line(tree: Path) -> None:
    (tree / "file").write_text("x", encoding="utf-8")
    code, out, err = run("audit", "--nemo-rl", str(tree), "--cache-dir", str(tree / "file"))
    assert (code, out) == (2, "")
    assert err == (f"nemo-rl-workers: --cache-dir: cache folder {tree / 'file'} exists and is "
                   "not a directory\n")
