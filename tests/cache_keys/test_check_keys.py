"""Every input of what `check` keeps beside a tree's model (`derived_answers`) is in its
key: the config's files (a `defaults:` parent), the tree's modules, and for a kept load
the libraries that parse and resolve it (the installed distributions). Through the real
CLI entry, on a fork's tree whose own rules refuse a config (tests/tree/
test_derived_answers.py covers the environment variables)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from nemo_rl_workers.checks import derived_answers
from nemo_rl_workers.reading import loader
from tests.cache_keys.tree import edit
from tests.cli_run import run_cli as run
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
    loader._PARSE_CACHE.clear()  # this process's own memo of parses: not the cache
    loader._MERGED.clear()
    return run(*argv)


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
    distribution on the path (its RECORD, as pip rewrites it) changes, the file is parsed
    again."""
    site = tmp_path / "env" / "site-packages"
    record = site / "pyyaml-6.0.dist-info" / "RECORD"
    record.parent.mkdir(parents=True)
    record.write_text("yaml/__init__.py,,\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(site))
    derived_answers._libraries_on.cache_clear()  # a new process
    first = _fresh(checked)
    parsed: list[str] = []
    real = loader._parse_text

    def counting(text: str, shown: str) -> object:
        parsed.append(shown)
        return real(text, shown)

    monkeypatch.setattr(loader, "_parse_text", counting)
    assert _fresh(checked) == first and parsed == []  # kept: nothing parsed again
    record.write_text("yaml/__init__.py,,\nyaml/_yaml.py,,\n", encoding="utf-8")  # upgraded
    derived_answers._libraries_on.cache_clear()  # a new process
    assert _fresh(checked) == first
    assert sorted(Path(p).name for p in parsed) == ["parent.yaml", "recipe.yaml"]


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
