"""`check` takes folders as `migrate` does (issue 27, item 9): every *.yaml / *.yml under
it, sorted, dot-files and dot-folders skipped, symlinked folders not entered; a folder
without any config is unusable input (exit 2, one line)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.cli_run import run_cli as run
from tests.docs.snippets import REPO

TINY = REPO / "examples" / "configs" / "grpo_tiny.yaml"
OUTDATED = REPO / "docs" / "examples" / "outdated_grpo.yaml"



def _tree(root: Path) -> Path:
    """configs/: two configs and what a folder walk must not take."""
    folder = root / "configs"
    (folder / "sub").mkdir(parents=True)
    (folder / ".github").mkdir()
    shutil.copy(TINY, folder / "b.yaml")
    shutil.copy(TINY, folder / "sub" / "a.yml")
    shutil.copy(OUTDATED, folder / ".hidden.yaml")  # a dot-file: skipped
    shutil.copy(OUTDATED, folder / ".github" / "ci.yaml")  # in a dot-folder: skipped
    (folder / "notes.txt").write_text("not: a config\n")
    (folder / "sub" / "loop").symlink_to(folder)  # a link loop: never entered
    return folder


def test_a_folder_stands_for_its_configs_sorted(tmp_path: Path) -> None:
    folder = _tree(tmp_path)
    code, out, err = run("check", "--no-verify", "--json", str(folder))
    assert (code, err) == (0, "")
    assert [c["config"] for c in json.loads(out)["configs"]] == [
        str(folder / "b.yaml"), str(folder / "sub" / "a.yml")]
    # A file named and reached through its folder is checked once.
    code, out, _ = run("check", "--no-verify", "--json", str(folder / "b.yaml"), str(folder))
    assert [c["config"] for c in json.loads(out)["configs"]] == [
        str(folder / "b.yaml"), str(folder / "sub" / "a.yml")]


def test_a_folder_with_a_problem_fails_as_its_file_would(tmp_path: Path) -> None:
    folder = tmp_path / "old"
    folder.mkdir()
    shutil.copy(OUTDATED, folder / "outdated_grpo.yaml")
    by_folder = run("check", "--no-verify", "--world-size", "2", str(folder))
    by_file = run("check", "--no-verify", "--world-size", "2", str(folder / "outdated_grpo.yaml"))
    assert by_folder == by_file
    assert by_folder[0] == 1


def test_an_empty_folder_is_unusable_as_for_migrate(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    (empty / ".github").mkdir(parents=True)
    shutil.copy(TINY, empty / ".github" / "only_hidden.yaml")
    code, out, err = run("check", "--no-verify", str(empty))
    assert (code, out) == (2, "")
    assert err == f"nemo-rl-workers: {empty}: no config files (*.yaml, *.yml) in this folder\n"
    migrate = run("migrate", "--check", str(empty))
    assert (migrate[0], migrate[1], len(migrate[2].splitlines())) == (2, "", 1)
    # Beside a usable file, the empty folder is still one unusable line; the file is checked.
    code, out, err = run("check", "--no-verify", str(empty), str(TINY))
    assert code == 2
    assert err.splitlines() == [
        f"nemo-rl-workers: {empty}: no config files (*.yaml, *.yml) in this folder"]
    # After the line naming the NeMo-RL judged: the file's one line.
    assert out.splitlines()[1].startswith(f"{TINY}: ok (")


def test_migrate_skips_dot_files_in_a_folder_too(tmp_path: Path) -> None:
    folder = tmp_path / "configs"
    (folder / ".github").mkdir(parents=True)
    shutil.copy(OUTDATED, folder / ".hidden.yaml")
    shutil.copy(OUTDATED, folder / ".github" / "ci.yaml")
    shutil.copy(TINY, folder / "tiny.yaml")
    assert run("migrate", "--check", str(folder))[0] == 0
