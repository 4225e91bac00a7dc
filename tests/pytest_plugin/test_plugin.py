"""`pytest --nemo-rl-workers` on a small user project, run by pytester in its own process.

The project has one good and one bad config, and one good and one bad extension (listed
in the ini file); the good ones pass, the bad ones fail with the command's own lines.
"""

from __future__ import annotations

import textwrap

import pytest
from junitparser import Failure, JUnitXml

from tests.cli_run import run_cli
from tests.docs.snippets import REPO

pytest_plugins = ("pytester",)

GOOD_CONFIG = """\
policy:
  model_name: tiny
  automodel_cfg: {enabled: true}
  megatron_cfg: {enabled: false}
"""
MEGATRON_Q = (
    "nemo_rl.modelopt.models.policy.workers.megatron_quant_policy_worker.MegatronQuantPolicyWorker"
)
# R5: quantized Automodel policy naming the Megatron quantized worker (line 6).
BAD_CONFIG = f"""\
policy:
  model_name: tiny
  automodel_cfg: {{enabled: true}}
  megatron_cfg: {{enabled: false}}
  quant_cfg: INT8_DEFAULT_CFG
  worker_extension_cls_fqn: {MEGATRON_Q}
"""
WORKERS = '''\
from __future__ import annotations

from typing import Any

from nemo_rl.models.policy.workers.automodel_policy_worker import AutomodelPolicyWorker


class GoodWorker(AutomodelPolicyWorker):
    def extra(self) -> int:
        return 1


class BadWorker(AutomodelPolicyWorker):
    def train(self) -> None:  # drops the batch the trainer passes
        return None
'''
GOOD = "userext.workers.GoodWorker --protocol PolicyWorker"
BAD = "userext.workers.BadWorker --protocol PolicyWorker"


def _project(pytester: pytest.Pytester, *, static: bool = False, extra_ini: str = "") -> None:
    pytester.makefile(".ini", pytest=textwrap.dedent(f"""\
        [pytest]
        pythonpath = .
        nemo_rl_workers_check_args = --no-verify
        nemo_rl_workers_registered = false
        nemo_rl_workers_static = {"true" if static else "false"}
        nemo_rl_workers_extensions =
            {GOOD}
            {BAD}
        {extra_ini}
        """))
    configs = pytester.mkdir("configs")
    (configs / "good.yaml").write_text(GOOD_CONFIG, encoding="utf-8")
    (configs / "bad.yaml").write_text(BAD_CONFIG, encoding="utf-8")
    package = pytester.mkpydir("userext")
    (package / "workers.py").write_text(WORKERS, encoding="utf-8")
    pytester.makepyfile(test_plain="def test_plain():\n    assert True\n")


BAD_CONFIG_LINE = "configs/bad.yaml:6: quant_cfg requires worker_extension_cls_fqn="
BAD_EXTENSION_LINES = (
    "userext.workers.BadWorker does not implement PolicyWorker.train: call shape: "
    "has no parameter 'batch', the Protocol has [userext/workers.py:14] [shape]",
    "userext.workers.BadWorker does not implement PolicyWorker.train: annotation: "
    "returns None, which is not a TrainResult (the Protocol's return) "
    "[userext/workers.py:14] [annotation]",
)
ITEMS = {
    "configs/bad.yaml::check": "failed",
    "configs/good.yaml::check": "passed",
    "test_plain.py::test_plain": "passed",
    "nemo-rl-workers-verify[userext.workers.GoodWorker]": "passed",
    "nemo-rl-workers-verify[userext.workers.BadWorker]": "failed",
}


def _outcomes(result: pytest.RunResult) -> dict[str, str]:
    """nodeid -> PASSED/FAILED, from -rA's short summary and -v's lines."""
    found: dict[str, str] = {}
    for line in result.outlines:
        for word in ("PASSED", "FAILED"):
            if line.endswith(f" {word}") or f" {word} " in line:
                nodeid = line.split(f" {word}")[0].strip()
                if "::" in nodeid or nodeid.startswith("nemo-rl-workers-"):
                    found[nodeid] = word.lower()
    return found


pytestmark = pytest.mark.slow  # each run imports torch (the extensions' base class)


@pytest.mark.runtime  # the reference runtime's or the template's workers
def test_good_items_pass_and_bad_ones_fail_with_their_lines(pytester: pytest.Pytester) -> None:
    _project(pytester)
    # "-rN": no short summary, whose lines pytest prints untruncated where CI is set, so
    # the count below sees only the failure sections.
    result = pytester.runpytest_subprocess(
        "--nemo-rl-workers", "-v", "-rN", "-p", "no:cacheprovider"
    )
    assert _outcomes(result) == ITEMS
    result.assert_outcomes(passed=3, failed=2)
    text = result.stdout.str()
    assert BAD_CONFIG_LINE in text and text.count(BAD_CONFIG_LINE) == 1
    for line in BAD_EXTENSION_LINES:
        assert line in result.outlines
    # The failure is the command's lines: no traceback, no frame of the plugin or the CLI.
    assert "Traceback" not in text and "pytest_plugin.py" not in text
    assert "cli.py" not in text


@pytest.mark.runtime  # the reference runtime's or the template's workers
def test_static_items_where_configured(pytester: pytest.Pytester) -> None:
    _project(pytester, static=True)
    result = pytester.runpytest_subprocess(
        "--nemo-rl-workers", "-v", "-p", "no:cacheprovider", "-k", "GoodWorker or BadWorker"
    )
    assert _outcomes(result) == {
        "nemo-rl-workers-verify[userext.workers.GoodWorker]": "passed",
        "nemo-rl-workers-verify-static[userext.workers.GoodWorker]": "passed",
        "nemo-rl-workers-verify[userext.workers.BadWorker]": "failed",
        "nemo-rl-workers-verify-static[userext.workers.BadWorker]": "failed",
    }
    assert (
        "userext.workers.BadWorker does not implement PolicyWorker.train: pyrefly: "
        "`BadWorker.train` has type `() -> None`, which is not assignable to "
        "`(batch: TrainBatch) -> TrainResult`, the type of `PolicyWorker.train` [static]"
    ) in result.outlines


@pytest.mark.runtime  # the reference runtime's or the template's workers
def test_k_selects_and_x_stops(pytester: pytest.Pytester) -> None:
    _project(pytester)
    only_good = pytester.runpytest_subprocess(
        "--nemo-rl-workers", "-v", "-p", "no:cacheprovider", "-k", "good or Good"
    )
    assert _outcomes(only_good) == {
        "configs/good.yaml::check": "passed",
        "nemo-rl-workers-verify[userext.workers.GoodWorker]": "passed",
    }
    first = pytester.runpytest_subprocess("--nemo-rl-workers", "-x", "-p", "no:cacheprovider")
    first.assert_outcomes(failed=1)  # configs/bad.yaml::check comes first


@pytest.mark.runtime  # the reference runtime's or the template's workers
def test_junit_xml_has_one_case_per_item(pytester: pytest.Pytester) -> None:
    _project(pytester)
    report = pytester.path / "report.xml"
    result = pytester.runpytest_subprocess(
        "--nemo-rl-workers", "-p", "no:cacheprovider", f"--junit-xml={report}"
    )
    result.assert_outcomes(passed=3, failed=2)
    cases = sorted((c.classname, c.name) for suite in JUnitXml.fromfile(str(report)) for c in suite)
    assert cases == sorted([
        ("configs.bad.yaml", "check"), ("configs.good.yaml", "check"), ("test_plain", "test_plain"),
        ("", "nemo-rl-workers-verify[userext.workers.GoodWorker]"),
        ("", "nemo-rl-workers-verify[userext.workers.BadWorker]"),
    ])
    failures = [r for suite in JUnitXml.fromfile(str(report)) for c in suite for r in c.result
                if isinstance(r, Failure)]
    assert len(failures) == 2
    assert any(BAD_CONFIG_LINE in (f.text or "") for f in failures)
    assert any(BAD_EXTENSION_LINES[0] in (f.text or "") for f in failures)


def test_xdist_runs_the_same_items(pytester: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    _project(pytester)
    result = pytester.runpytest_subprocess(
        "--nemo-rl-workers", "-n", "2", "-p", "no:cacheprovider", "-rA"
    )
    result.assert_outcomes(passed=3, failed=2)
    assert BAD_CONFIG_LINE in result.stdout.str()


def test_without_the_option_no_yaml_is_collected(pytester: pytest.Pytester) -> None:
    _project(pytester)
    result = pytester.runpytest_subprocess("-v", "-p", "no:cacheprovider")
    assert _outcomes(result) == {"test_plain.py::test_plain": "passed"}


@pytest.mark.runtime  # the reference runtime's or the template's workers
def test_registered_extensions_are_items(pytester: pytest.Pytester) -> None:
    """The template project registers its worker with its Protocol (entry point)."""
    _project(pytester, extra_ini="nemo_rl_workers_registered = true")
    (pytester.path / "pytest.ini").write_text(
        (pytester.path / "pytest.ini").read_text().replace(
            "nemo_rl_workers_registered = false\n", ""), encoding="utf-8")
    result = pytester.runpytest_subprocess(
        "--nemo-rl-workers", "--collect-only", "-q", "-p", "no:cacheprovider"
    )
    assert (
        "nemo-rl-workers-verify[template_project.workers.TemplateAutomodelPolicyWorker]"
        in result.outlines
    )


@pytest.mark.runtime  # the reference runtime's or the template's workers
def test_worker_contract_fixture_fails_with_the_report(pytester: pytest.Pytester) -> None:
    _project(pytester)
    pytester.makepyfile(test_contracts="""
        from contracts import PolicyWorker
        from userext.workers import BadWorker, GoodWorker


        def test_good(worker_contract):
            worker_contract(GoodWorker, PolicyWorker)


        def test_bad(worker_contract):
            worker_contract(BadWorker, PolicyWorker)
        """)
    result = pytester.runpytest_subprocess("test_contracts.py", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    text = result.stdout.str()
    assert "userext.workers.BadWorker does not implement PolicyWorker.train: call shape" in text
    assert "contracts/testing.py" not in text and "Traceback" not in text


def test_this_projects_own_run_collects_no_yaml() -> None:
    """`make test` runs plain pytest: the examples' YAML is not collected without the flag."""
    import subprocess
    import sys

    def collect(*flags: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
             *flags, "examples/configs"],
            cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
        )
        return done.stdout

    assert "no tests collected" in collect()
    assert "examples/configs/grpo_tiny.yaml::check" in collect("--nemo-rl-workers")


def test_audited_trees_are_items_with_their_baseline(pytester: pytest.Pytester) -> None:
    from tests.audit.test_rules import WORKERS
    from tests.audit.tree import write_tree

    calls = '''
        def go(self):
            return self.worker_group.run_all_workers_single_data({args})
    '''
    write_tree(pytester.path / "good", driver_body=calls.format(args='"shared", data=1'),
               workers=WORKERS)
    caller = {"nemo_rl/algorithms.py": "def train(gen):\n    return gen.go()\n"}  # reachable
    write_tree(pytester.path / "bad", driver_body=calls.format(args='"nope"'), workers=WORKERS,
               extra=caller)
    write_tree(pytester.path / "adopted", driver_body=calls.format(args='"nope"'),
               workers=WORKERS)
    baseline = pytester.path / "adopted.baseline.json"
    assert exit_code("audit", "--nemo-rl", str(pytester.path / "adopted"), "--no-cache",
                   "--write-baseline", str(baseline)) == 0
    pytester.makefile(".ini", pytest=textwrap.dedent("""\
        [pytest]
        nemo_rl_workers_registered = false
        nemo_rl_workers_trees =
            good
            bad
            adopted --baseline adopted.baseline.json
        """))
    result = pytester.runpytest_subprocess("--nemo-rl-workers", "-v", "-p", "no:cacheprovider")
    assert _outcomes(result) == {
        "nemo-rl-workers-audit[good]": "passed",
        "nemo-rl-workers-audit[bad]": "failed",
        "nemo-rl-workers-audit[adopted]": "passed",
    }
    assert ("nemo_rl/driver.py:16: error[missing-method]: Gen.go calls 'nope' on "
            "nemo_rl.workers.AsyncWorker and nemo_rl.workers.SyncWorker, which has no such "
            "method (its MRO ends at Base) [definition: nemo_rl/workers.py:5]") in result.outlines


def exit_code(*argv: str) -> int:
    return run_cli(*argv).code


def test_guarded_findings_pass_and_stale_baseline_entries_warn_or_fail(
        pytester: pytest.Pytester) -> None:
    """A tree whose only finding every caller guards passes (as `audit` exits 0); a
    baseline entry no finding matches any more is a warning naming it, and a failure
    under `--fail-on-stale`, as the command has it."""
    from tests.audit.test_reach import ENVIRONMENT, SCORE, WORKERS
    from tests.audit.tree import write_tree

    write_tree(pytester.path / "guarded", driver_body=SCORE, workers=WORKERS,
               extra={"nemo_rl/environment.py": ENVIRONMENT})
    unguarded = ENVIRONMENT.replace("        assert not", "        # assert not")
    write_tree(pytester.path / "fixed", driver_body=SCORE, workers=WORKERS,
               extra={"nemo_rl/environment.py": unguarded})
    baseline = pytester.path / "fixed.baseline.json"
    assert exit_code("audit", "--nemo-rl", str(pytester.path / "fixed"), "--no-cache",
                   "--write-baseline", str(baseline)) == 0
    # The finding fixed: the async worker gains the method, the entry is stale.
    workers = pytester.path / "fixed" / "nemo_rl" / "workers.py"
    workers.write_text(workers.read_text().replace(
        "class AsyncWorker:\n    pass", "class AsyncWorker:\n    def score(self, data):\n"
        "        return data"))
    pytester.makefile(".ini", pytest=textwrap.dedent("""\
        [pytest]
        nemo_rl_workers_registered = false
        nemo_rl_workers_trees =
            guarded
            fixed --baseline fixed.baseline.json
        """))
    result = pytester.runpytest_subprocess("--nemo-rl-workers", "-v", "-p", "no:cacheprovider")
    assert _outcomes(result) == {
        "nemo-rl-workers-audit[guarded]": "passed",
        "nemo-rl-workers-audit[fixed]": "passed",
    }
    stale = ("stale baseline entry: missing-method Gen.score 'score' "
             "nemo_rl.workers.AsyncWorker: no finding matches it any more")
    assert any("1 stale baseline entry" in line and stale in line for line in result.outlines)

    (pytester.path / "pytest.ini").write_text(textwrap.dedent("""\
        [pytest]
        nemo_rl_workers_registered = false
        nemo_rl_workers_trees =
            fixed --baseline fixed.baseline.json --fail-on-stale
        """))
    result = pytester.runpytest_subprocess("--nemo-rl-workers", "-v", "-p", "no:cacheprovider")
    assert _outcomes(result) == {"nemo-rl-workers-audit[fixed]": "failed"}
    assert stale in result.outlines
