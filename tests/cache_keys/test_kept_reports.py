"""`check`'s whole report on a config is kept with the tree's model, with the record of
everything judging it read (`checks/config/kept_reports`, `reading/recorded_reads`): a kept report
is shown only while each recorded thing reads the same. Each test changes one thing a
report depends on beyond the config and the tree's package (the entry script, a suite
script appearing, the file every suite script sources) and asks for the answer a check
without the cache gives; the corpus test holds kept reports to fresh ones on every
shipped config and every nightly launch."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nemo_rl_workers.checks.config.config_report import ConfigReport
from nemo_rl_workers.checks.config.kept_reports import NOT_KEPT, StoredReport
from tests.cli_run import run_cli as run
from tests.corpus import corpus_tree
from tests.launches.test_entry_walk import REFUSED, _tree_with_entry
from tests.launches.test_written_scripts import COMMON_ENV, HEADER
from tests.revision.test_tree_rules import RULES_CONFIG
from tests.revision.trees import write

ESCAPE = '    config["loss_fn"]["escape_shards"] = True'


@pytest.fixture(autouse=True)
def _no_escape(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FORK_IGNORE_SHARDS", raising=False)


def _cached(cache: Path, *argv: str) -> tuple[int, str, str]:
    return run("check", "--no-verify", "--cache-dir", str(cache), *argv)


def _fresh(*argv: str) -> tuple[int, str, str]:
    return run("check", "--no-verify", "--no-cache", *argv)


def test_a_kept_report_holds_every_field_of_a_report() -> None:
    """A field added to `ConfigReport` and not kept would be lost from every cached run."""
    kept = {f.name for f in dataclasses.fields(StoredReport)}
    assert {f.name for f in dataclasses.fields(ConfigReport)} == kept | NOT_KEPT


def test_an_edited_entry_script_is_judged_again(tmp_path: Path) -> None:
    _, recipe, entry = _tree_with_entry(tmp_path, "    pass")
    cache = tmp_path / "cache"
    first = _cached(cache, "--entry", entry, recipe)
    assert first[0] == 1 and REFUSED in first[1]
    assert _cached(cache, "--entry", entry, recipe) == first
    Path(entry).write_text(Path(entry).read_text().replace("    pass", ESCAPE))
    again = _cached(cache, "--entry", entry, recipe)
    assert again == _fresh("--entry", entry, recipe) and again[0] == 0


def _suite_tree(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A recipe in upstream's layout, its entry script escaping the fork's refusal; no
    suite script yet. (The root, the recipe, where its suite script goes.)"""
    root, _, _ = _tree_with_entry(tmp_path, ESCAPE)
    recipe = root / "examples/configs/recipes/llm/fork-recipe.yaml"
    write(root, {"examples/configs/recipes/llm/fork-recipe.yaml": RULES_CONFIG,
                 "tests/test_suites/llm/common.env": COMMON_ENV})
    return root, recipe, root / "tests/test_suites/llm/fork-recipe.sh"


def test_a_suite_script_that_appears_is_the_recipe_s_entry_from_then_on(
        tmp_path: Path) -> None:
    """Whether a recipe has a suite script chose how it is judged: a script written after
    a check is read by the next one, cache or not."""
    root, recipe, suite = _suite_tree(tmp_path)
    cache = tmp_path / "cache"
    bare = _cached(cache, str(recipe))
    assert bare[0] == 1 and REFUSED in bare[1]  # the shape's entry: no escape
    suite.write_text(HEADER + "cd $PROJECT_ROOT\nuv run examples/run_fork.py "
                              "--config $CONFIG_PATH\n")
    launched = _cached(cache, str(recipe))
    assert launched == _fresh(str(recipe)) and launched[0] == 0, launched
    assert "examples/run_fork.py" in run("check", "-v", "--no-verify", "--cache-dir",
                                         str(cache), str(recipe))[1]
    suite.unlink()
    assert _cached(cache, str(recipe)) == bare


def test_a_variable_the_sourced_file_exports_is_read_again(tmp_path: Path) -> None:
    """Every suite script sources common.env: an export added there reaches the launch a
    bare recipe's check reads (its refusal then names the escape the launch sets)."""
    root, recipe, suite = _suite_tree(tmp_path)
    (root / "examples/run_fork.py").write_text(
        (root / "examples/run_fork.py").read_text().replace(ESCAPE, "    pass"))
    suite.write_text(HEADER + "cd $PROJECT_ROOT\nuv run examples/run_fork.py "
                              "--config $CONFIG_PATH\n")
    cache = tmp_path / "cache"
    first = _cached(cache, str(recipe))
    assert first[0] == 1 and REFUSED in first[1] and " exported" not in first[1]
    common = root / "tests/test_suites/llm/common.env"
    common.write_text(common.read_text() + "export FORK_IGNORE_SHARDS=1\n")
    again = _cached(cache, str(recipe))
    assert again == _fresh(str(recipe)), again
    assert "with FORK_IGNORE_SHARDS=1 exported" in again[1]


def test_a_check_from_a_removed_working_folder_is_judged_not_kept(tmp_path: Path) -> None:
    """Paths as given are read from the working folder: with none, nothing is kept (and
    nothing fails)."""
    _, recipe, entry = _tree_with_entry(tmp_path, ESCAPE)
    gone = tmp_path / "gone"
    gone.mkdir()
    cache = tmp_path / "cache"
    script = (f'cd "{gone}" && rmdir "{gone}" && exec "{sys.executable}" -m nemo_rl_workers '
              f'check --no-verify --cache-dir "{cache}" --entry "{entry}" "{recipe}"')
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=300,
                          check=False)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr[-2000:]
    assert not [p for p in cache.rglob("*.json") if '"check-report"' in p.read_text()]


@pytest.mark.slow  # the corpus judged three times: about 40 s
def test_kept_reports_are_the_fresh_ones_on_the_corpus(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every shipped config and every launch of nightly.txt: the second, cached check says
    what a check without the cache says, to the byte (JSON: every field of every report)."""
    tree = corpus_tree("2026-08")
    monkeypatch.chdir(tree)
    monkeypatch.delenv("NRL_IGNORE_TP_ACCURACY_CHECK", raising=False)
    inputs = ("examples/configs", "tests/test_suites/nightly.txt")
    if not all(os.path.exists(tree / name) for name in inputs):
        pytest.skip("the corpus lacks examples/configs or nightly.txt")
    argv = ("--json", "--nemo-rl", ".", *inputs)
    cache = tmp_path / "cache"
    first = _cached(cache, *argv)
    assert _cached(cache, *argv) == first == _fresh(*argv)
