"""#28 item 5: each finding classed by reachability from the tree's callers and the config
guards on the way: reachable (error), guarded (a note, named guard), latent (warning).
Each class from the analysis, shown by pairs of trees: the guard there, and removed."""

from __future__ import annotations

import json
from pathlib import Path

from tests.audit.tree import audited
from tests.cli_run import run_cli

WORKERS = '''
class SyncWorker:
    def score(self, data):
        return data


class AsyncWorker:
    pass
'''

# Gen.score dispatches 'score', which only the sync worker has: a finding on AsyncWorker
# (chosen when async_engine=true).
SCORE = '''
def score(self, data):
    return self.worker_group.run_all_workers_single_data("score", data=data)
'''


def _reach(root: Path, extra: dict[str, str]) -> list[tuple[str, str, str]]:
    report = audited(root, workers=WORKERS, driver_body=SCORE, extra=extra)
    return [(f.reach, f.severity, f.guard) for f in report.findings]


def test_a_driver_method_no_caller_reaches_is_latent(tmp_path: Path) -> None:
    assert _reach(tmp_path, {}) == [("latent", "warning", "")]


def test_a_caller_makes_it_reachable(tmp_path: Path) -> None:
    algorithm = '''
from nemo_rl.driver import Gen


def train(cfg):
    gen = Gen(cfg)
    return gen.score([1])
'''
    assert _reach(tmp_path, {"nemo_rl/algorithms.py": algorithm}) == [
        ("reachable", "error", "")]


GUARDED_CALLER = '''
from nemo_rl.driver import Gen


def train(cfg, gen):
    assert not cfg["policy"]["generation"]["vllm_cfg"]["async_engine"], "sync only"
    return gen.score([1])
'''


def test_a_guard_at_every_caller_makes_it_guarded(tmp_path: Path) -> None:
    """The caller asserts the switch (a key of another section counts)."""
    assert _reach(tmp_path / "g", {"nemo_rl/algorithms.py": GUARDED_CALLER}) == [
        ("guarded", "note", "nemo_rl/algorithms.py:6")]
    unguarded = GUARDED_CALLER.replace("    assert not", "    # assert not")
    assert _reach(tmp_path / "u", {"nemo_rl/algorithms.py": unguarded}) == [
        ("reachable", "error", "")]
    # One caller that guards and one that does not: reachable.
    both = GUARDED_CALLER + "\n\ndef evaluate(gen):\n    return gen.score([2])\n"
    assert _reach(tmp_path / "b", {"nemo_rl/algorithms.py": both}) == [
        ("reachable", "error", "")]


ENVIRONMENT = '''
from nemo_rl.driver import Gen


class ScoreEnvironment:
    def __init__(self, cfg):
        assert not cfg["vllm_cfg"]["async_engine"], "scoring needs the sync engine"
        self.scorer = Gen(cfg)

    def step(self, batch):
        return self.scorer.score(batch)
'''


def test_a_guard_on_the_config_a_driver_was_built_from_holds_for_its_calls(
    tmp_path: Path
) -> None:
    """The assert is in `__init__`, where the driver is built; the call is in `step`."""
    assert _reach(tmp_path / "g", {"nemo_rl/environment.py": ENVIRONMENT}) == [
        ("guarded", "note", "nemo_rl/environment.py:7")]
    removed = ENVIRONMENT.replace("        assert not", "        # assert not")
    assert _reach(tmp_path / "u", {"nemo_rl/environment.py": removed}) == [
        ("reachable", "error", "")]


def test_guarded_findings_are_notes_shown_on_request_and_counted(tmp_path: Path) -> None:
    report = audited(tmp_path, workers=WORKERS, driver_body=SCORE,
                     extra={"nemo_rl/environment.py": ENVIRONMENT})

    def run(*more: str) -> tuple[int, str]:
        return run_cli("audit", "--no-cache", "--nemo-rl", report.root, *more)[:2]

    code, out = run()
    assert code == 0  # nothing a caller reaches
    assert out.splitlines() == [
        "audit: 1 drivers, 2 worker classes, 1 dispatch call sites (1 resolved): no findings "
        "(1 guarded by their callers)"]
    code, out = run("--show-guarded")
    assert code == 0
    assert out.splitlines()[0].startswith("nemo_rl/driver.py:16: note[missing-method]: ")
    assert "(guarded: every caller in the tree excludes it, at nemo_rl/environment.py:7)" in out
    code, out = run("--json")
    (finding,) = json.loads(out)["findings"]
    assert (finding["reach"], finding["guard"], finding["severity"]) == (
        "guarded", "nemo_rl/environment.py:7", "note")
