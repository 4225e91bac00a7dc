"""`check --baseline` / `--write-baseline`: known problems accepted by rule, recipe and
config key (as `audit` accepts findings), new ones still failing, stale entries said."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.cli_run import Ran, run_cli
from tests.docs.snippets import REPO

R5_KEY = "policy.worker_extension_cls_fqn"


def run(argv: list[str]) -> Ran:
    return run_cli(*argv)


@pytest.fixture
def configs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This repository's example configs (one R5 mismatch among them), in a scratch
    folder that is the working directory: recipes are named relative to the baseline."""
    shutil.copytree(REPO / "examples" / "configs", tmp_path / "configs")
    monkeypatch.chdir(tmp_path)
    return tmp_path / "configs"


def check(*args: str) -> tuple[int, str, str]:
    return run(["check", "--no-verify", "--reference", *args])


def test_a_baseline_accepts_known_problems_and_fails_new_ones(configs: Path) -> None:
    assert check("configs")[0] == 1
    code, _, err = check("--write-baseline", "baseline.json", "configs")
    assert (code, err.splitlines()[-1]) == (
        0, "nemo-rl-workers: check: wrote 1 baseline entries to baseline.json")
    assert json.loads(Path("baseline.json").read_text()) == {"version": 1, "findings": [
        {"rule": "R5", "recipe": "configs/mismatched_quant.yaml", "key": R5_KEY}]}
    code, out, err = check("--baseline", "baseline.json", "configs")
    assert code == 0 and "problem:" not in out
    assert err == ("nemo-rl-workers: check: 1 problem(s) accepted by the baseline "
                   "baseline.json\n")
    # The same entry from another working directory, the recipe given by another path.
    code, _, _ = check("--baseline", str(Path("baseline.json").resolve()),
                       str(configs / "mismatched_quant.yaml"))
    assert code == 0
    # A new problem in another recipe (another key of the same recipe) still fails,
    # in every output format; the accepted one is not reported.
    (configs / "other.yaml").write_text((configs / "mismatched_quant.yaml").read_text())
    code, out, _ = check("--baseline", "baseline.json", "--json", "configs")
    assert code == 1
    failing = [(c["config"], p["rule"]) for c in json.loads(out)["configs"]
               for p in c["problems"]]
    assert failing == [("configs/other.yaml", "R5")]
    assert check("--baseline", "baseline.json", "--output-format", "github",
                 "configs")[0] == 1


def test_stale_entries_are_said_and_can_fail_or_be_pruned(configs: Path) -> None:
    assert check("--write-baseline", "baseline.json", "configs")[0] == 0
    (configs / "mismatched_quant.yaml").write_text("defaults: grpo_tiny_int8.yaml\n")
    stale = ("nemo-rl-workers: check: stale baseline entry: R5 configs/mismatched_quant.yaml "
             f"{R5_KEY}: no problem matches it any more")
    code, _, err = check("--baseline", "baseline.json", "configs")
    assert (code, err.splitlines()) == (0, [stale])
    # A run that does not check that recipe (pre-commit passes only changed files) does
    # not call its entry stale.
    assert check("--baseline", "baseline.json", "configs/grpo_tiny.yaml") == (
        0, check("configs/grpo_tiny.yaml")[1], "")
    assert check("--baseline", "baseline.json", "--fail-on-stale", "configs")[0] == 1
    code, _, err = check("--baseline", "baseline.json", "--prune-baseline", "configs")
    assert code == 0 and "removed 1 stale entries from baseline.json" in err
    assert json.loads(Path("baseline.json").read_text())["findings"] == []
    assert check("--baseline", "baseline.json", "--fail-on-stale", "configs") == (
        0, check("configs")[1], "")


@pytest.mark.parametrize(("text", "says"), [
    ("[]", "expected an object with a 'findings' list"),
    ('{"findings": [{"rule": "R5", "driver": "x", "method": "y", "worker": "z"}]}',
     "findings[0] needs the strings rule, recipe, key"),
    ('{"findings": [{"rule": "R5", "recipe": "a\\u0007", "key": "k"}]}',
     "findings[0].recipe holds a control character"),
    ("{", "is not JSON"),
])
def test_an_unusable_baseline_is_one_line_and_exit_2(configs: Path, text: str,
                                                     says: str) -> None:
    Path("baseline.json").write_text(text)
    code, out, err = check("--baseline", "baseline.json", "configs")
    assert (code, out) == (2, "")
    assert err.startswith("nemo-rl-workers: check: baseline baseline.json: ") and says in err
    assert len(err.splitlines()) == 1


def test_usage_errors_and_nothing_written_on_unusable_input(configs: Path) -> None:
    code, _, err = check("--prune-baseline", "configs")
    assert (code, err) == (2, "nemo-rl-workers: check: --prune-baseline needs --baseline "
                              "FILE, the baseline to prune\n")
    (configs / "broken.yaml").write_text("policy: [\n")
    code, _, err = check("--write-baseline", "baseline.json", "configs")
    assert code == 2 and not Path("baseline.json").exists()
    assert err.splitlines()[-1] == ("nemo-rl-workers: check: baseline.json not written: a "
                                    "config could not be used")
    code, _, err = check("--write-baseline", "no/such/dir/baseline.json",
                         "configs/grpo_tiny.yaml")
    assert code == 2 and err.startswith("nemo-rl-workers: check: cannot write no/such/dir/")
