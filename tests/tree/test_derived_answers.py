"""What `check` derives from a tree's model and a config, kept with the model (issue 33,
item 4): the config's load (each file's parse, the resolution) and the tree's own rules'
verdicts. A second check answers from them; what they depend on beyond the files (the
environment variables the tree's code and the interpolations read) makes them asked
again; a damaged entry is one line, never trusted."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from nemo_rl_workers.cache.store import FORMAT
from tests.cli_run import run_cli as run
from tests.cli_run import run_cli_process
from tests.corpus import corpus_tree
from tests.revision.test_tree_rules import POLICY_WITH_RULES, RULES_CONFIG
from tests.revision.trees import GENERATION, OLD_FILES, config, write

# The fork refuses one model by name; the recipe's model comes from the environment.
POLICY = POLICY_WITH_RULES.replace(
    "        shards = ",
    '        assert config["model_name"] != "banned", "this fork refuses the banned model"\n'
    "        shards = ")
INTERPOLATED = RULES_CONFIG.replace("model_name: tiny", "model_name: ${oc.env:MODEL,tiny}")


def _tree(tmp_path: Path) -> Path:
    return write(tmp_path, {**OLD_FILES, "nemo_rl/models/policy/lm_policy.py": POLICY,
                            "nemo_rl/models/generation/vllm_generation.py": GENERATION})



@pytest.fixture()
def checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, ...]]:
    monkeypatch.delenv("FORK_IGNORE_SHARDS", raising=False)
    monkeypatch.delenv("MODEL", raising=False)
    root = _tree(tmp_path)
    path = config(root, "fork.yaml", INTERPOLATED)
    yield ("check", "--no-verify", "--nemo-rl", str(root), "--cache-dir",
           str(tmp_path / "cache"), path)


def _refused(out: str) -> list[str]:
    """The config path each problem names."""
    return [line.split(": ", 3)[2] for line in out.splitlines() if "problem:" in line]


def _entries(cache: Path) -> dict[Path, tuple[int, int, bytes]]:
    """Each derived answer's entry with its inode, modification time and bytes: an answer
    made again is stored over its entry (a new file renamed into place), so a run that
    changes none of these answered from what was there."""
    return {path: (path.stat().st_ino, path.stat().st_mtime_ns, path.read_bytes())
            for path in _derived(cache)}


def test_a_second_check_is_answered_from_what_the_first_derived(
        checked: tuple[str, ...], tmp_path: Path) -> None:
    """A second `check`, in a new process (nothing of the first in its memory): the same
    answer, and the cache as the first left it (nothing made again, nothing stored)."""
    first = run_cli_process(*checked)
    assert first[0] == 1 and _refused(first[1]) == ["policy.train_micro_batch_size"]
    assert "this NeMo-RL refuses the config before any worker starts" in first[1]
    cache = tmp_path / "cache"
    # The parse, the resolution, the rules, the world size, and the whole report.
    assert len(_derived(cache)) == 5
    stored = _entries(cache)
    assert run_cli_process(*checked) == first
    assert _entries(cache) == stored


def test_the_environment_the_tree_reads_asks_again(
        checked: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    """The tree's rules read $FORK_IGNORE_SHARDS: set, the cached refusal does not hold."""
    assert run(*checked)[0] == 1
    monkeypatch.setenv("FORK_IGNORE_SHARDS", "1")
    code, out, err = run(*checked)
    assert (code, _refused(out), err) == (0, [], "")
    monkeypatch.delenv("FORK_IGNORE_SHARDS")
    assert run(*checked)[0] == 1


@pytest.mark.slow  # four checks, each a new process: about 6 s
def test_the_environment_the_config_interpolates_asks_again(
        checked: tuple[str, ...], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """${oc.env:MODEL,tiny}: the fork refuses the model $MODEL names; a value read from the
    environment is redacted in the output, answered from the cache or not. Each check is a
    new process, as a user runs them."""
    monkeypatch.setenv("FORK_IGNORE_SHARDS", "1")
    assert run_cli_process(*checked)[0] == 0
    monkeypatch.setenv("MODEL", "banned")
    code, out, _ = run_cli_process(*checked)
    assert (code, _refused(out)) == (1, ["policy.model_name"])
    assert "banned" not in out and "<redacted $MODEL>" in out
    stored = _entries(tmp_path / "cache")
    assert run_cli_process(*checked) == (code, out, "")
    assert _entries(tmp_path / "cache") == stored  # answered from the cache, still redacted
    monkeypatch.setenv("MODEL", "tiny")
    assert run_cli_process(*checked)[0] == 0


def _derived(cache: Path) -> list[Path]:
    """The answers derived from the model (not the model, nor the index of digests,
    which `test_digest_index` damages)."""
    return [p for p in (cache / f"v{FORMAT}").glob("*.json")
            if json.loads(p.read_text())["computation"] not in ("revision", "digest-index")]


def test_damaged_answers_are_one_line_each_and_never_trusted(
        checked: tuple[str, ...], tmp_path: Path) -> None:
    # Both runs in new processes, as two CI steps: this one's import path (Ray, imported by
    # other tests, adds a folder) would key the installed libraries otherwise.
    fresh = run_cli_process(*checked)
    entries = _derived(tmp_path / "cache")
    # The file's parse, its resolution, the tree's rules' verdicts, its world size, the
    # whole report.
    assert len(entries) == 5
    for entry in entries:
        entry.write_bytes(entry.read_bytes()[:40])
    # A new process: nothing of the first run in memory can answer in the entries' place.
    code, out, err = run_cli_process(*checked)
    assert (code, out) == fresh[:2]
    lines = err.splitlines()
    assert len(lines) == 5 and all(
        line.startswith("nemo-rl-workers: warning: cache entry ") and
        "is not whole JSON (truncated or damaged); ignored, the " in line for line in lines)
    assert sum(line.endswith("the config is loaded again") for line in lines) == 2
    assert sum(line.endswith("the tree's own rules are run again") for line in lines) == 1
    assert sum(line.endswith("the world size is computed again") for line in lines) == 1
    assert sum(line.endswith("the config is judged again") for line in lines) == 1
    assert run_cli_process(*checked) == fresh  # stored over: silent again


def test_a_config_json_cannot_hold_is_judged_every_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An integer key: JSON would give it back as a string, so nothing derived from the
    config is kept; the report on it is (it holds no config value)."""
    monkeypatch.delenv("FORK_IGNORE_SHARDS", raising=False)
    root = _tree(tmp_path)
    path = config(root, "ints.yaml", RULES_CONFIG + "extra:\n  1: one\n")
    argv = ("check", "--no-verify", "--nemo-rl", str(root), "--cache-dir",
            str(tmp_path / "cache"), path)
    first = run(*argv)
    assert [json.loads(p.read_text())["computation"]
            for p in _derived(tmp_path / "cache")] == ["check-report"]
    assert run(*argv) == first


def test_the_audit_s_findings_a_recipe_reaches_are_kept_too(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without --no-verify a check scopes the audit's findings to the config; the lines are
    kept, and what the audit reads beside the package (an entry script) is in their key."""
    from nemo_rl_workers.checks.config import revision_rules
    from tests.revision.test_scoped_check import FINISH, RECIPE
    from tests.revision.test_scoped_check import _tree as scoped_tree

    root = scoped_tree(tmp_path / "tree")
    path = config(root, "ppo.yaml", RECIPE.format(key="ppo", finish="false"))
    argv = ("check", "--nemo-rl", str(root), "--cache-dir", str(tmp_path / "cache"), path)
    first = run(*argv)
    assert first[0] == 0 and f"{FINISH}: error[missing-method] (reached by this config" in first[1]

    scoped = revision_rules.scoped_findings
    calls: list[str] = []

    def counted(*args: Any, **kwargs: Any) -> tuple[list[str], list[str]]:
        calls.append("scoped")
        return scoped(*args, **kwargs)

    monkeypatch.setattr(revision_rules, "scoped_findings", counted)
    assert run(*argv) == first and calls == []
    (root / "examples/run.py").write_text("print('an entry script the audit reads')\n")
    assert run(*argv) == first and calls == ["scoped"]
    assert run(*argv) == first and calls == ["scoped"]


def test_a_config_its_entry_leaves_partly_unknown_is_kept_too(tmp_path: Path) -> None:
    """A recipe its suite script launches through GRPO's entry, which sets `logger.log_dir`
    from the time and the pad token from the tokenizer: the rules see those values as
    unknown, and an unknown value keys the entry by its reason. Before, such a config was
    never kept (241 of 295 corpus configs), so a warm `check` of the corpus walked their
    setups again."""
    recipe = (corpus_tree() / "examples" / "configs" / "recipes" / "llm" /
              "grpo-llama3.2-1b-instruct-1n8g-fsdp2tp1.v3.yaml")
    cache = tmp_path / "cache"
    first = run("check", "--no-verify", "--json", "--cache-dir", str(cache), str(recipe))
    kept = sorted(json.loads(p.read_text())["computation"] for p in _derived(cache))
    assert "tree-rules" in kept and "world-size" in kept, kept
    assert run("check", "--no-verify", "--json", "--cache-dir", str(cache), str(recipe)) \
        == first
