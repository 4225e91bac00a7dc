"""A baseline is data (issue 35): huge numbers, NaN, control characters and odd shapes are
one line and exit 2, never exit 70; the audit's cache never reads or hashes a file the
guarded reader refuses (a 30 GB sparse baseline is refused by its size at once); and
`--prune-baseline` without `--baseline` is a usage error."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from nemo_rl_workers.tree.source.reading import MAX_SOURCE_BYTES, MAX_SOURCE_ENV
from tests.audit.tree import write_tree
from tests.cli_run import Ran, run_cli
from tests.hardening.test_written_files import BODY, WORKERS

ENTRY = {"rule": "missing-method", "driver": "Gen.wake", "method": "wake_up",
         "worker": "nemo_rl.workers.AsyncWorker"}
HUGE = 30 * 1024**3


def run(argv: list[str]) -> Ran:
    return run_cli(*argv)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "checkout", driver_body=BODY, workers=WORKERS)


def cached(option: list[str], tmp_path: Path) -> list[str]:
    return [str(tmp_path / o) if o == "cache" else o for o in option]


def entry_with(key: str, value: str) -> str:
    return json.dumps({"version": 1, "findings": [{**ENTRY, key: value}]})


@pytest.mark.parametrize(("text", "reason"), [
    ('{"version": ' + "9" * 5000 + ', "findings": []}', "holds a 5000-digit number"),
    ('{"version": -' + "9" * 5000 + ', "findings": []}', "holds a 5000-digit number"),
    ('{"version": 1.' + "5" * 5000 + ', "findings": []}', "holds a 5001-digit number"),
    ('{"version": NaN, "findings": []}', "holds NaN, which JSON does not allow"),
    ('{"version": -Infinity, "findings": []}', "holds -Infinity, which JSON does not allow"),
    (entry_with("rule", "missing-method\u0007"), "findings[0].rule holds a control character"),
    (entry_with("worker", "a\nb"), "findings[0].worker holds a control character"),
    (entry_with("method", "\u202ewake"), "findings[0].method holds a control character"),
    # Arrays alone: where the limit strikes in `[{"findings": [...` depends on the depth
    # of the stack that reads the file, and so whether it names an array or an object.
    ('{"findings": ' + "[" * 100_000, "is not JSON (maximum recursion depth exceeded "
     "while decoding a JSON array from a unicode string)"),
    ('{"findings": "x"}', "expected an object with a 'findings' list, as --write-baseline "
     "writes"),
    ('{"findings": [{"rule": 1}]}', "findings[0] needs the strings rule, driver, method, "
     "worker"),
])
@pytest.mark.parametrize("cache", [["--cache-dir", "cache"], ["--no-cache"]])
def test_a_hostile_baseline_is_one_line_and_exit_2(
    tree: Path, tmp_path: Path, text: str, reason: str, cache: list[str]
) -> None:
    baseline = tmp_path / "baseline.json"
    baseline.write_text(text, encoding="utf-8")
    code, out, err = run(["audit", "--nemo-rl", str(tree), "--baseline", str(baseline),
                          *cached(cache, tmp_path)])
    assert (code, out, err) == (2, "", f"nemo-rl-workers: audit: baseline {baseline}: "
                                       f"{reason}\n")
    assert baseline.read_text(encoding="utf-8") == text


@pytest.mark.parametrize("cache", [["--cache-dir", "cache"], ["--no-cache"]])
def test_a_30_gb_sparse_baseline_is_refused_by_its_size_at_once(
    tree: Path, tmp_path: Path, cache: list[str]
) -> None:
    baseline = tmp_path / "baseline.json"
    with open(baseline, "wb") as f:
        os.truncate(f.fileno(), HUGE)
    started = time.monotonic()
    code, out, err = run(["audit", "--nemo-rl", str(tree), "--baseline", str(baseline),
                          *cached(cache, tmp_path)])
    elapsed = time.monotonic() - started
    assert (code, out, err) == (2, "", f"nemo-rl-workers: audit: baseline {baseline}: is "
                                       f"{HUGE} bytes, over the {MAX_SOURCE_BYTES}-byte limit "
                                       "for a baseline\n")
    assert elapsed < 10, elapsed  # hashed first, it took a minute (58 s measured)


def test_a_30_gb_sparse_module_in_the_tree_is_refused_by_its_size_at_once(
    tree: Path, tmp_path: Path
) -> None:
    module = tree / "nemo_rl" / "huge.py"
    with open(module, "wb") as f:
        os.truncate(f.fileno(), HUGE)
    started = time.monotonic()
    code, out, err = run(["audit", "--nemo-rl", str(tree), "--cache-dir",
                          str(tmp_path / "cache")])
    assert code == 2 and out.endswith("1 warnings\n")  # the rest is audited
    assert err == (f"nemo-rl-workers: audit: nemo_rl/huge.py: is {HUGE} bytes, over the "
                   f"{MAX_SOURCE_BYTES}-byte limit for a module ({MAX_SOURCE_ENV}=<MiB> raises "
                   "it)\n")
    assert time.monotonic() - started < 10


def test_prune_baseline_without_a_baseline_is_a_usage_error(tree: Path) -> None:
    assert run(["audit", "--nemo-rl", str(tree), "--prune-baseline"]) == (
        2, "", "nemo-rl-workers: audit: --prune-baseline needs --baseline FILE, the baseline "
               "to prune\n")


@pytest.mark.parametrize("name", ["x" + "." * 10_000 + "y", "." * 10_000, "a" * 300])
def test_an_extension_name_the_system_refuses_as_a_path_is_judged_as_a_name(
    tree: Path, name: str
) -> None:
    code, out, err = run(["audit", "--nemo-rl", str(tree), "--no-cache", name])
    assert (code, out) == (2, "")
    assert err.startswith("nemo-rl-workers: audit: EXTENSION must be a dotted name "
                          "'package.module.ClassName' of Python identifiers, but is ")
    assert len(err.splitlines()) == 1
