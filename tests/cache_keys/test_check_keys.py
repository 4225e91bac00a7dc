"""Every input of what `check` keeps beside a tree's model (`derived_answers`) is in its
key: the config's files (a `defaults:` parent), the tree's modules, and for a kept load
the libraries that parse and resolve it (the installed distributions). Through the real
CLI entry, on a fork's tree whose own rules refuse a config (tests/tree/
test_derived_answers.py covers the environment variables)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cache_keys.tree import edit
from tests.cli_run import run_cli_process
from tests.revision.test_tree_rules import RULES_CONFIG
from tests.revision.trees import config
from tests.tree.test_derived_answers import _refused, _tree


@pytest.fixture
def checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, ...]]:
    """`check` of a recipe whose parent holds the values the fork's rules judge."""
    monkeypatch.delenv("FORK_IGNORE_SHARDS", raising=False)
    root = _tree(tmp_path)
    config(root, "parent.yaml", RULES_CONFIG)
    child = config(root, "recipe.yaml", "defaults: parent.yaml\nloss_fn:\n  note: x\n")
    yield ("check", "--no-verify", "--nemo-rl", str(root), "--cache-dir",
           str(tmp_path / "cache"), child)


def _fresh(argv: tuple[str, ...]) -> tuple[int, str, str]:
    """A check in a new interpreter: nothing of an earlier run in memory answers for it."""
    return run_cli_process(*argv)


def _kept(cache: Path, computation: str) -> dict[Path, tuple[int, int]]:
    """The store's entries of one computation, by inode and modification time (an answer
    made again is written over its entry: a new file renamed into place)."""
    return {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in cache.rglob("*.json")
            if json.loads(p.read_text()).get("computation") == computation}


def test_a_defaults_parent_is_in_the_key(checked: tuple[str, ...]) -> None:
    first = _fresh(checked)
    assert first[0] == 1 and _refused(first[1]) == ["policy.train_micro_batch_size"]
    parent = Path(checked[-1]).with_name("parent.yaml")
    edit(parent, "train_micro_batch_size: 6", "train_micro_batch_size: 16")
    again = _fresh(checked)
    assert again == _fresh((*checked[:-3], "--no-cache", checked[-1]))
    assert (again[0], _refused(again[1])) == (0, [])


def test_a_module_of_the_tree_is_in_the_key(checked: tuple[str, ...]) -> None:
    assert _fresh(checked)[0] == 1
    policy = Path(checked[-1]).parents[2] / "nemo_rl" / "models" / "policy" / "lm_policy.py"
    edit(policy, "shards > 4", "shards > 8")  # the fork relaxes its rule
    again = _fresh(checked)
    assert again == _fresh((*checked[:-3], "--no-cache", checked[-1]))
    assert again[0] == 0


def test_the_installed_distributions_are_in_a_kept_load_s_key(
        checked: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A parse kept under one install of the YAML library is not taken under another: a
    distribution on the path (its RECORD, as pip rewrites it) changes, the files are parsed
    again (new entries); unchanged, nothing is parsed or stored again."""
    site = tmp_path / "env" / "site-packages"
    record = site / "pyyaml-6.0.dist-info" / "RECORD"
    record.parent.mkdir(parents=True)
    record.write_text("yaml/__init__.py,,\n", encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(site), *filter(None, [os.environ.get("PYTHONPATH")])]))
    cache = tmp_path / "cache"
    first = _fresh(checked)
    parses = _kept(cache, "config-parse")
    assert len(parses) == 2  # the recipe and its parent
    assert _fresh(checked) == first and _kept(cache, "config-parse") == parses
    record.write_text("yaml/__init__.py,,\nyaml/_yaml.py,,\n", encoding="utf-8")  # upgraded
    assert _fresh(checked) == first
    again = _kept(cache, "config-parse")
    assert len(again) == 4 and set(parses) < set(again)


def test_what_the_model_reads_afresh_is_never_kept(checked: tuple[str, ...]) -> None:
    """The tree model's entry holds none of what changes without its modules changing:
    the git commit (named in every report) and the vLLM pin are read on every run."""
    root = Path(checked[3])
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("a" * 40 + "\n", encoding="utf-8")
    (root / "pyproject.toml").write_text(
        '[project]\nname = "fork"\ndependencies = ["vllm==0.10.0"]\n', encoding="utf-8")
    assert f"at {'a' * 12}" in _fresh(checked)[1]
    (root / ".git" / "HEAD").write_text("b" * 40 + "\n", encoding="utf-8")
    edit(root / "pyproject.toml", "vllm==0.10.0", "vllm==0.11.0")
    again = _fresh(checked)
    assert again == _fresh((*checked[:-3], "--no-cache", checked[-1]))
    assert f"at {'b' * 12}" in again[1]
