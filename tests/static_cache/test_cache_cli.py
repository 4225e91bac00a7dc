"""`--cache-dir` / `--no-cache` from the command line: hostile folders get one line and
exit code 2; two processes sharing one cache at once both finish with right verdicts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from nemo_rl_workers.cache.store import FORMAT
from tests.cli_run import run_cli as run
from tests.docs.snippets import REPO

GOOD = ("verify", "template_project.workers.TemplateAutomodelPolicyWorker",
        "--protocol", "PolicyWorker", "--static")
BAD = ("verify", "nemo_rl.models.generation.vllm.vllm_worker.VllmGenerationWorker",
       "--protocol", "PolicyWorker", "--static")
TINY = "examples/configs/grpo_tiny.yaml"



@pytest.fixture(autouse=True)
def _in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("NO_COLOR", "1")


def _one_line_exit_2(argv: tuple[str, ...], says: str) -> None:
    code, out, err = run(*argv)
    assert (code, out) == (2, ""), err
    assert err == says + "\n"


def test_cache_dir_that_is_a_file(tmp_path: Path) -> None:
    file = tmp_path / "a-file"
    file.write_text("x", encoding="utf-8")
    says = f"nemo-rl-workers: --cache-dir: cache folder {file} exists and is not a directory"
    _one_line_exit_2((*GOOD, "--cache-dir", str(file)), says)
    _one_line_exit_2(("check", "--static", "--cache-dir", str(file), TINY), says)


def test_cache_dir_below_a_file(tmp_path: Path) -> None:
    file = tmp_path / "a-file"
    file.write_text("x", encoding="utf-8")
    below = file / "cache"
    _one_line_exit_2((*GOOD, "--cache-dir", str(below)),
                     f"nemo-rl-workers: --cache-dir: cache folder {below} cannot be used: "
                     "Not a directory")


def test_cache_dir_that_cannot_be_created() -> None:
    # /proc refuses new folders even to root (a chmod would not stop root).
    code, out, err = run(*GOOD, "--cache-dir", "/proc/nemo-rl-cache")
    assert (code, out) == (2, "")
    assert err.startswith("nemo-rl-workers: --cache-dir: cache folder /proc/nemo-rl-cache "
                          "cannot be used: ")
    assert len(err.splitlines()) == 1


def test_cache_dir_with_a_newline_in_its_name(tmp_path: Path) -> None:
    odd = tmp_path / "odd\nname"
    odd.write_text("x", encoding="utf-8")
    code, out, err = run(*GOOD, "--cache-dir", str(odd))
    assert code == 2 and len(err.splitlines()) == 1 and "odd\\nname" in err


def test_empty_cache_dir() -> None:
    _one_line_exit_2((*GOOD, "--cache-dir", ""),
                     "nemo-rl-workers: --cache-dir: the cache folder's name is empty")


def test_no_cache_with_cache_dir_is_a_usage_error(tmp_path: Path) -> None:
    code, out, err = run(*GOOD, "--no-cache", "--cache-dir", str(tmp_path))
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert "not allowed with argument" in err


@pytest.mark.runtime  # the reference runtime's or the template's workers
def test_no_cache_stores_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(*GOOD, "--no-cache")
    assert code == 0 and out.startswith("template_project.workers.TemplateAutomodelPolicyWorker "
                                        "implements PolicyWorker")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.runtime  # the reference runtime's or the template's workers
def test_default_cache_folder_blocked_only_warns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".nemo-rl-workers-cache").write_text("not a folder", encoding="utf-8")
    code, out, err = run(*GOOD)
    assert code == 0 and "implements PolicyWorker" in out
    assert err == ("nemo-rl-workers: warning: cache folder .nemo-rl-workers-cache exists and "
                   "is not a directory; running without the cache\n")


@pytest.mark.runtime  # the reference runtime's or the template's workers
def test_default_cache_folder_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert run(*GOOD)[0] == 0
    assert len(list((tmp_path / ".nemo-rl-workers-cache" / f"v{FORMAT}").glob("*.json"))) == 1


@pytest.mark.runtime  # the reference runtime's or the template's workers
@pytest.mark.slow
def test_processes_sharing_a_cache_at_once_all_get_right_verdicts(tmp_path: Path) -> None:
    """Rounds of four real processes (two per subject) started together on one cache:
    first all miss and write the same entries at once, then all read them."""
    cache = tmp_path / "shared-cache"
    expected = {GOOD: (0, run(*GOOD, "--no-cache")[1]), BAD: (1, run(*BAD, "--no-cache")[1])}
    env = {**os.environ, "NO_COLOR": "1"}
    for _ in range(3):
        procs = [
            (argv, subprocess.Popen(
                [sys.executable, "-m", "nemo_rl_workers", *argv, "--cache-dir", str(cache)],
                cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
            for argv in (GOOD, BAD, GOOD, BAD)
        ]
        for argv, proc in procs:
            out, err = proc.communicate(timeout=300)
            assert (proc.returncode, out) == expected[argv], err
            assert err == ""
    entries = list((cache / f"v{FORMAT}").glob("*.json"))
    assert len(entries) == 2
    assert not list((cache / f"v{FORMAT}").glob(".tmp-*"))  # no temporary file left behind


def test_a_run_that_stores_nothing_makes_no_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default folder is made with the first entry: not by an unusable input."""
    monkeypatch.chdir(tmp_path)
    code, _, err = run("verify", "no_such_module_xyz.W", "--protocol", "PolicyWorker", "--static")
    assert code == 2 and len(err.splitlines()) == 1
    code, _, err = run("audit", "--nemo-rl", "missing-folder")
    assert code == 2 and len(err.splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


@pytest.mark.runtime  # the reference runtime's or the template's workers
def test_a_damaged_entry_is_one_warning_line(tmp_path: Path) -> None:
    """The static verdicts are entries of the one content cache, said as the others are."""
    cache = tmp_path / "cache"
    fresh = run(*GOOD, "--cache-dir", str(cache))
    (entry,) = (cache / f"v{FORMAT}").glob("*.json")
    entry.write_bytes(entry.read_bytes()[:40])
    code, out, err = run(*GOOD, "--cache-dir", str(cache))
    assert (code, out) == fresh[:2]
    assert err == (f"nemo-rl-workers: warning: cache entry {entry} is not whole JSON (truncated "
                   "or damaged); ignored, template_project.workers.TemplateAutomodelPolicyWorker "
                   "is judged again\n")
    assert run(*GOOD, "--cache-dir", str(cache)) == fresh  # stored over: silent again
