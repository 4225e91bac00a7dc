"""`--static` never passes what it could not judge (issue 27, item 4).

A type checker takes a class it cannot find as `Any`, and a class inheriting from `Any`
as having every member. A fork's extension subclasses a worker our `nemo_rl` does not
have (`DTensorPolicyWorkerV2`); a `--base` may name a class that is not here. Each
verdict must then be *undecided* (exit 1, the name and why), in every output format,
never "implements".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Protocol

import pytest

from nemo_rl_workers.cache.store import FORMAT
from nemo_rl_workers.checks.static.static_check import Subject, judge
from nemo_rl_workers.model.registry import ENTRY_POINT_GROUP

REPO = Path(__file__).resolve().parents[2]
FORK_BASE = "nemo_rl.models.policy.workers.dtensor_policy_worker_v2.DTensorPolicyWorkerV2"
AUTOMODEL = "nemo_rl.models.policy.workers.automodel_policy_worker.AutomodelPolicyWorker"
FORK_WORKER = "fork_ext.workers.ForkWorker"
REEXPORTED = "fork_ext.reexport.ForkOnlyWorker"
COMPLETE = "fork_ext.complete.CompleteWorker"

WORKERS = f'''\
from {FORK_BASE.rpartition(".")[0]} import DTensorPolicyWorkerV2


class ForkWorker(DTensorPolicyWorkerV2):
    def weight_norm(self) -> float:
        return 0.0
'''
REEXPORT = "from fork_only_package import Worker as ForkOnlyWorker  # not installed here\n"
COMPLETE_WORKER = '''\
from contracts import LogprobBatch, LogprobResult, TrainBatch, TrainResult


class CompleteWorker:
    def is_alive(self) -> bool:
        return True

    def get_logprobs(self, batch: LogprobBatch) -> LogprobResult:
        return {"logprobs": []}

    def load_checkpoint(self, path: str) -> None:
        return None

    def train(self, batch: TrainBatch) -> TrainResult:
        return {"loss": 0.0, "grad_norm": 0.0, "num_tokens": 0, "step": 0}

    def save_checkpoint(self, path: str) -> None:
        return None

    def shutdown(self) -> bool:
        return True
'''
REGISTRATION = f'''\
from nemo_rl_workers.model.registry import DRIVER_ENV, WorkerPlugin

PLUGIN = WorkerPlugin(rows=(), environments={{"{FORK_WORKER}": DRIVER_ENV}})
'''
CONFIG = f"""\
policy:
  model_name: tiny
  automodel_cfg:
    enabled: true
  megatron_cfg:
    enabled: false
  worker_extension_cls_fqn: {FORK_WORKER}
"""
UNDECIDED_FORK = (
    f"{FORK_WORKER} is undecided for PolicyWorker: {{checker}} takes {FORK_WORKER} as unknown "
    f"(Any), which passes every member: base {FORK_BASE} (of {FORK_WORKER}) cannot be "
    f"resolved here: no source file for {FORK_BASE.rpartition('.')[0]} (looked in "
)


@pytest.fixture
def fork(tmp_path: Path) -> Path:
    """An extension package written for a fork, registered through its entry point."""
    package = tmp_path / "fork_ext"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "workers.py").write_text(WORKERS)
    (package / "reexport.py").write_text(REEXPORT)
    (package / "complete.py").write_text(COMPLETE_WORKER)
    (tmp_path / "fork_ext_registration.py").write_text(REGISTRATION)
    info = tmp_path / "fork_ext-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fork-ext\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\nfork = fork_ext_registration:PLUGIN\n"
    )
    (tmp_path / "job.yaml").write_text(CONFIG)
    return tmp_path


def _cli(tree: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), str(REPO),
                                                         str(REPO / "runtime")]),
           "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "nemo_rl_workers", *args, "--no-cache"],
        env=env, cwd=tree, capture_output=True, text=True, timeout=300, check=False,
    )


@pytest.mark.parametrize("checker", ["pyrefly", "mypy"])
def test_a_class_whose_base_is_not_here_is_undecided(fork: Path, checker: str) -> None:
    done = _cli(fork, "verify", "--static", FORK_WORKER, "--protocol", "PolicyWorker",
                "--checker", checker)
    assert (done.returncode, done.stderr) == (1, ""), done.stdout
    (line,) = done.stdout.splitlines()
    assert line.startswith(UNDECIDED_FORK.format(checker=checker)), line
    assert "implements" not in done.stdout


def test_a_class_that_is_itself_not_here_is_undecided(fork: Path) -> None:
    done = _cli(fork, "verify", "--static", REEXPORTED, "--protocol", "PolicyWorker")
    assert done.returncode == 1
    (line,) = [x for x in done.stdout.splitlines() if not x.startswith("skipped: ")]
    assert line.startswith(
        f"{REEXPORTED} is undecided for PolicyWorker: pyrefly takes {REEXPORTED} as unknown "
        f"(Any), which passes every member: {REEXPORTED} cannot be resolved here: no folder "
        "on the import path has a module or package named 'fork_only_package' (through "
        "fork_only_package.Worker)"
    ), line


def test_a_base_the_class_does_not_have(fork: Path) -> None:
    # A class the checker knows: the missing base is found, a decided failure.
    known = _cli(fork, "verify", "--static", COMPLETE, "--protocol", "PolicyWorker",
                 "--base", AUTOMODEL)
    assert known.returncode == 1
    assert known.stdout.splitlines() == [
        f"{COMPLETE} does not implement PolicyWorker: not a subclass of {AUTOMODEL} "
        f"(pyrefly: `type[CompleteWorker]` is not assignable to `type[AutomodelPolicyWorker]`)"
    ]
    # Without the base, the same class passes: the base was judged, not assumed.
    assert _cli(fork, "verify", "--static", COMPLETE, "--protocol", "PolicyWorker").stdout == (
        f"{COMPLETE} implements PolicyWorker\n")
    # A class inheriting from Any "has" every base: undecided, never implements.
    unknown = _cli(fork, "verify", "--static", FORK_WORKER, "--protocol", "PolicyWorker",
                   "--base", AUTOMODEL)
    assert unknown.returncode == 1
    (line,) = unknown.stdout.splitlines()
    assert line.startswith(UNDECIDED_FORK.format(checker="pyrefly")), line


def test_a_base_that_is_not_here_is_undecided(fork: Path) -> None:
    done = _cli(fork, "verify", "--static", COMPLETE, "--protocol", "PolicyWorker",
                "--base", FORK_BASE)
    assert (done.returncode, done.stderr) == (1, "")
    (line,) = done.stdout.splitlines()
    assert line.startswith(
        f"{COMPLETE} is undecided for PolicyWorker: pyrefly takes --base {FORK_BASE} as "
        f"unknown (Any), so the subclass check passes: {FORK_BASE} cannot be resolved here: "
        f"no source file for {FORK_BASE.rpartition('.')[0]} (looked in "
    ), line


def test_every_output_format_says_undecided(fork: Path) -> None:
    args = ("verify", "--static", FORK_WORKER, "--protocol", "PolicyWorker")
    as_json = _cli(fork, *args, "--json")
    payload = json.loads(as_json.stdout)
    assert (as_json.returncode, payload["ok"]) == (1, False)
    assert [(v["member"], v["rule"]) for v in payload["violations"]] == [("", "undecided")]
    assert payload["violations"][0]["message"].startswith(
        UNDECIDED_FORK.format(checker="pyrefly"))

    github = _cli(fork, *args, "--output-format", "github")
    assert github.returncode == 1
    (annotation,) = github.stdout.splitlines()
    assert annotation.startswith("::error ") and ",title=undecided::" in annotation

    sarif = _cli(fork, *args, "--output-format", "sarif")
    assert sarif.returncode == 1
    run = json.loads(sarif.stdout)["runs"][0]
    assert [(r["ruleId"], r["level"]) for r in run["results"]] == [("undecided", "error")]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == ["undecided"]

    junit = _cli(fork, *args, "--output-format", "junit")
    assert junit.returncode == 1
    failures = ET.fromstring(junit.stdout).findall(".//failure")
    assert len(failures) == 1 and "is undecided for PolicyWorker" in (failures[0].text or "")


def test_check_static_reports_the_section_undecided(fork: Path) -> None:
    done = _cli(fork, "check", "--static", "--json", "--world-size", "2", "job.yaml")
    assert done.returncode == 1, done.stderr
    (problem,) = json.loads(done.stdout)["problems"]
    path = "policy.worker_extension_cls_fqn"
    assert problem["message"].startswith(
        f"{path}={FORK_WORKER} is undecided for the PolicyWorker contract (never a pass): "
        f"pyrefly takes {FORK_WORKER} as unknown (Any), which passes every member: base "
        f"{FORK_BASE} (of {FORK_WORKER}) cannot be resolved here"
    ), problem["message"]
    assert (problem["rule"], problem["line"]) == ("contract", 7)

    text = _cli(fork, "check", "--static", "--world-size", "2", "job.yaml")
    assert text.returncode == 1
    assert "  ok" not in text.stdout.splitlines()
    assert any(f"{path}={FORK_WORKER} is undecided" in line for line in text.stdout.splitlines())


class GhostProtocol(Protocol):
    def is_alive(self) -> bool: ...


def test_a_protocol_the_checker_cannot_find_is_undecided(fork: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # Fault injected on purpose: the Protocol claims a module that exists nowhere, as an
    # extension Protocol importable in the driver but not on the checker's path would.
    monkeypatch.setattr(GhostProtocol, "__module__", "ghost_protocols_nowhere")
    monkeypatch.syspath_prepend(str(fork))
    (report,) = judge([Subject(COMPLETE, "GhostProtocol")],
                      protocols={"GhostProtocol": GhostProtocol})
    assert not report.ok
    assert [f.rule for f in report.findings] == ["undecided"]
    assert report.lines() == [
        f"{COMPLETE} is undecided for GhostProtocol: pyrefly takes the Protocol GhostProtocol "
        "as unknown (Any), so no member is checked: ghost_protocols_nowhere.GhostProtocol "
        "cannot be resolved here: no folder on the import path has a module or package named "
        "'ghost_protocols_nowhere'"
    ]


def test_a_cached_verdict_stays_undecided(fork: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(fork), str(REPO),
                                                        str(REPO / "runtime")])}
    runs = [
        subprocess.run(
            [sys.executable, "-m", "nemo_rl_workers", "verify", "--static", FORK_WORKER,
             "--protocol", "PolicyWorker", "--cache-dir", str(fork / "cache")],
            env=env, cwd=fork, capture_output=True, text=True, timeout=300, check=False)
        for _ in range(2)
    ]
    assert [(r.returncode, r.stdout) for r in runs] == [(1, runs[0].stdout)] * 2
    assert runs[0].stdout.startswith(UNDECIDED_FORK.format(checker="pyrefly"))
    assert len(list((fork / "cache" / f"v{FORMAT}").glob("*.json"))) == 1
