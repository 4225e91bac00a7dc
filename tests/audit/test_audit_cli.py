"""`nemo-rl-workers audit` as a user and CI see it: lines, JSON, baseline, exit codes."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from tests.audit.tree import write_tree
from tests.cli_run import Ran, run_cli

WORKERS = '''
class SyncWorker:
    def wake_up(self):
        return True


class AsyncWorker:
    async def wake_up_async(self):
        return True
'''
BODY = '''
def wake(self):
    return self.worker_group.run_all_workers_single_data("wake_up")
'''


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def run(argv: list[str], out: io.StringIO | None = None) -> Ran:
    return run_cli(*argv, stdout=out)


# A caller in the tree: its findings are reachable (errors), not latent.
CALLER = {"nemo_rl/algorithms.py": "def train(gen):\n    return gen.wake()\n"}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "checkout", driver_body=BODY, workers=WORKERS, extra=CALLER)


def test_one_line_per_finding_and_exit_1(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    code, out, err = run(["audit", "--nemo-rl", str(tree)], Tty())
    assert (code, err) == (1, "")
    first, summary = out.splitlines()
    assert first == (
        "nemo_rl/driver.py:16: error[missing-method]: Gen.wake calls 'wake_up' on "
        "nemo_rl.workers.AsyncWorker, which has no such method (its MRO ends at AsyncWorker) "
        "when async_engine=true [definition: nemo_rl/workers.py:7]")
    assert summary == ("audit: 1 drivers, 2 worker classes, 1 dispatch call sites "
                       "(1 resolved): 1 errors, 0 warnings")
    assert "\x1b[" not in out


def test_colour_on_a_terminal(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    _, out, _ = run(["audit", "--nemo-rl", str(tree)], Tty())
    assert "\x1b[31merror[missing-method]\x1b[0m" in out
    _, plain, _ = run(["audit", "--nemo-rl", str(tree)])
    assert "\x1b[" not in plain


def test_json_has_findings_call_sites_drivers_and_workers(tree: Path) -> None:
    code, out, _ = run(["audit", "--nemo-rl", str(tree), "--json"])
    data = json.loads(out)
    assert code == 1
    (finding,) = data["findings"]
    assert {k: finding[k] for k in ("rule", "severity", "driver", "method", "worker", "call",
                                    "definition")} == {
        "rule": "missing-method", "severity": "error", "driver": "Gen.wake", "method": "wake_up",
        "worker": "nemo_rl.workers.AsyncWorker", "call": "nemo_rl/driver.py:16",
        "definition": "nemo_rl/workers.py:7"}
    assert data["call_sites"] == {"total": 1, "resolved": 1, "unresolved": 0,
                                  "unresolved_sites": []}
    assert [d["name"] for d in data["drivers"]] == ["Gen"]
    assert [w["fqn"] for w in data["worker_classes"]] == [
        "nemo_rl.workers.AsyncWorker", "nemo_rl.workers.SyncWorker"]


def test_a_baseline_lets_a_tree_with_findings_adopt_the_audit(tree: Path, tmp_path: Path) -> None:
    baseline = tmp_path / "audit-baseline.json"
    code, _, err = run(["audit", "--nemo-rl", str(tree), "--write-baseline", str(baseline)])
    assert code == 0 and "wrote 1 baseline entries" in err
    assert json.loads(baseline.read_text())["findings"] == [{
        "rule": "missing-method", "driver": "Gen.wake", "method": "wake_up",
        "worker": "nemo_rl.workers.AsyncWorker"}]
    code, out, _ = run(["audit", "--nemo-rl", str(tree), "--baseline", str(baseline)])
    assert code == 0 and "no findings (1 more in the baseline)" in out
    # Lines move, the baseline still holds; a new finding is reported.
    driver = tree / "nemo_rl" / "driver.py"
    driver.write_text("\n\n" + driver.read_text().replace(
        '"wake_up")', '"wake_up")\n\n    def other(self):\n'
        '        return self.worker_group.run_all_workers_single_data("nope")'))
    code, out, _ = run(["audit", "--nemo-rl", str(tree), "--baseline", str(baseline), "--json"])
    assert code == 1
    assert [(f["driver"], f["method"]) for f in json.loads(out)["findings"]] == [
        ("Gen.other", "nope"), ("Gen.other", "nope")]


def test_fixed_findings_leave_stale_baseline_entries_that_are_reported(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    baseline = tmp_path / "audit-baseline.json"
    assert run(["audit", "--nemo-rl", str(tree), "--write-baseline", str(baseline)])[0] == 0
    code, out, _ = run(["audit", "--nemo-rl", str(tree), "--baseline", str(baseline)])
    assert code == 0 and "stale" not in out
    # The finding is fixed: its entry matches nothing any more, and is said so.
    workers = tree / "nemo_rl" / "workers.py"
    workers.write_text(workers.read_text() + "\n    def wake_up(self):\n        return True\n")
    code, out, _ = run(["audit", "--nemo-rl", str(tree), "--baseline", str(baseline)])
    assert code == 0
    assert out.splitlines() == [
        "stale baseline entry: missing-method Gen.wake 'wake_up' nemo_rl.workers.AsyncWorker: "
        "no finding matches it any more",
        "audit: 1 drivers, 2 worker classes, 1 dispatch call sites (1 resolved): no findings; "
        "1 stale baseline entries",
    ]
    code, out, _ = run(["audit", "--nemo-rl", str(tree), "--baseline", str(baseline), "--json"])
    assert json.loads(out)["baseline_stale"] == [{
        "rule": "missing-method", "driver": "Gen.wake", "method": "wake_up",
        "worker": "nemo_rl.workers.AsyncWorker"}]
    assert run(["audit", "--nemo-rl", str(tree), "--baseline", str(baseline),
                "--fail-on-stale"])[0] == 1
    code, _, err = run(["audit", "--nemo-rl", str(tree), "--baseline", str(baseline),
                        "--prune-baseline"])
    assert code == 0 and f"removed 1 stale entries from {baseline}" in err
    assert json.loads(baseline.read_text())["findings"] == []
    code, out, _ = run(["audit", "--nemo-rl", str(tree), "--baseline", str(baseline),
                        "--fail-on-stale"])
    assert code == 0 and "stale" not in out


def test_a_cause_the_baseline_holds_for_some_classes_lists_the_others(
    tmp_path: Path
) -> None:
    """One cause, two classes: a baseline written before the second class existed
    keeps the cause, now naming only the new class."""
    workers = "class Base:\n    pass\n\n\nclass SyncWorker(Base):\n    pass\n"
    tree = write_tree(tmp_path / "checkout", driver_body=BODY, workers=workers + (
        "\n\nclass AsyncWorker:\n    def wake_up(self):\n        return True\n"))
    baseline = tmp_path / "audit-baseline.json"
    assert run(["audit", "--nemo-rl", str(tree), "--write-baseline", str(baseline)])[0] == 0
    write_tree(tree, driver_body=BODY, workers=workers + "\n\nclass AsyncWorker(Base):\n    pass\n")
    code, out, _ = run(["audit", "--nemo-rl", str(tree), "--json"])
    (cause,) = json.loads(out)["findings"]
    assert cause["workers"] == ["nemo_rl.workers.AsyncWorker", "nemo_rl.workers.SyncWorker"]
    code, out, _ = run(["audit", "--nemo-rl", str(tree), "--baseline", str(baseline), "--json"])
    assert code == 1
    (cause,) = json.loads(out)["findings"]
    assert cause["workers"] == ["nemo_rl.workers.AsyncWorker"]
    assert "SyncWorker" not in cause["message"]


@pytest.mark.parametrize("text, says", [
    ("not json", "is not JSON"),
    ('{"findings": [{"rule": 1}]}', "findings[0] needs the strings rule, driver"),
    ("[]", "expected an object with a 'findings' list"),
])
def test_a_bad_baseline_is_one_line_and_exit_2(tree: Path, tmp_path: Path, text: str,
                                               says: str) -> None:
    baseline = tmp_path / "b.json"
    baseline.write_text(text)
    code, out, err = run(["audit", "--nemo-rl", str(tree), "--baseline", str(baseline)])
    assert (code, out) == (2, "")
    assert err.startswith("nemo-rl-workers: audit: baseline ") and says in err
    assert len(err.splitlines()) == 1


def test_control_characters_in_names_are_escaped(tmp_path: Path) -> None:
    tree = write_tree(tmp_path / "c", workers=WORKERS, driver_body='''
def wake(self):
    return self.worker_group.run_all_workers_single_data("bad\\x1b[2Jname")
''')
    code, out, _ = run(["audit", "--nemo-rl", str(tree)])
    assert code == 1 and "\x1b" not in out and "bad\\x1b[2Jname" in out


def test_usage_errors_exit_2() -> None:
    code, _, err = run(["audit"])
    assert code == 2 and "--nemo-rl" in err


def test_the_pre_commit_hook_runs_on_the_tree_it_is_started_in(tree: Path) -> None:
    """pre-commit runs `entry [args]` in the repository root, without file names."""
    import shlex
    import subprocess
    import sys

    import yaml

    hooks = yaml.safe_load((Path(__file__).parents[2] / ".pre-commit-hooks.yaml").read_text())
    (hook,) = [h for h in hooks if h["id"] == "nemo-rl-audit"]
    assert hook["pass_filenames"] is False
    argv = shlex.split(hook["entry"])
    command = [str(Path(sys.executable).parent / argv[0]), *argv[1:]]
    failing = subprocess.run(command, cwd=tree, capture_output=True, text=True, timeout=120,
                             check=False)
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert "error[missing-method]" in failing.stdout
    subprocess.run([*command, "--write-baseline", "audit-baseline.json"], cwd=tree,
                   capture_output=True, timeout=120, check=True)
    adopted = subprocess.run([*command, "--baseline", "audit-baseline.json"], cwd=tree,
                             capture_output=True, text=True, timeout=120, check=False)
    assert adopted.returncode == 0, adopted.stdout + adopted.stderr


def test_audit_needs_only_the_core_dependencies(tree: Path) -> None:
    """The hook's environment has no torch, Ray, ModelOpt or vLLM; nor does the tree's."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "for name in ('torch', 'ray', 'modelopt', 'transformers', 'vllm', 'megatron'):\n"
        "    sys.modules[name] = None  # importing it now raises ImportError\n"
        "from nemo_rl_workers.commands.cli import main\n"
        f"sys.exit(main(['audit', '--nemo-rl', {str(tree)!r}]))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "error[missing-method]" in done.stdout
