"""The tree model on disk (issue 33): built once, keyed by the content of every file it
read, shared by `check`, `resolve`, `list` and `migrate`; a damaged entry is one line and
never trusted."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from nemo_rl_workers.cache.store import FORMAT, checksum
from nemo_rl_workers.tree import revision_build
from nemo_rl_workers.tree.model_inputs import tree_inputs
from nemo_rl_workers.tree.stage import REVISION
from tests.cli_run import run_cli as run
from tests.revision.trees import config, old_tree
from tests.tree.test_hostile_trees import POLICY_CONFIG


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    root = old_tree(tmp_path / "tree")
    config(root, "c.yaml", POLICY_CONFIG)
    return root


def _commands(root: Path, cache: Path) -> dict[str, tuple[str, ...]]:
    c = str(root / "examples/configs/c.yaml")
    where = ("--nemo-rl", str(root), "--cache-dir", str(cache))
    return {"check": ("check", "--no-verify", *where, c), "resolve": ("resolve", c, *where),
            "list": ("list", *where), "migrate": ("migrate", "--check", *where, c)}


def _no_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fault injected on purpose: reading the tree again fails the test."""
    def refuse(*args: object, **kwargs: object) -> object:
        raise AssertionError("the tree was read again although the cache holds its model")

    monkeypatch.setattr(revision_build, "build_revision", refuse)
    monkeypatch.setattr(revision_build, "selects_through_library", refuse)


def test_every_command_starts_from_the_model_the_first_stored(
        tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    commands = _commands(tree, cache)
    first = {name: run(*argv) for name, argv in commands.items()}
    # One model, shared by the four commands (the other entries are answers `check`
    # derived from it and the config: its load and the tree's rules on it).
    assert _models(cache) == [f"{revision_key(tree.resolve())}.json"]
    _no_reading(monkeypatch)
    again = {name: run(*argv) for name, argv in commands.items()}
    assert again == first
    assert first["check"][0] == 0 and "DTensorPolicyWorker" in first["check"][1]


def test_an_edited_module_is_a_new_model(tree: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    argv = (*_commands(tree, cache)["check"], "-v")  # -v: the table, with the FQNs
    code, out, _ = run(*argv)
    assert (code, "dtensor.DTensorPolicyWorker" in out) == (0, True)
    driver = tree / "nemo_rl/models/policy/lm_policy.py"
    driver.write_text(driver.read_text().replace(
        "workers.dtensor.DTensorPolicyWorker\"", "workers.dtensor_v2.DTensorPolicyWorkerV2\""))
    code, out, _ = run(*argv)
    assert code == 0 and "dtensor_v2.DTensorPolicyWorkerV2" in out
    assert len(_models(cache)) == 2


def revision_key(root: Path) -> str:
    return REVISION.key(tree_inputs(root))


def _models(cache: Path) -> list[str]:
    """The entries that hold a tree's model."""
    return sorted(p.name for p in (cache / f"v{FORMAT}").glob("*.json")
                  if json.loads(p.read_text())["computation"] == REVISION.name)


def _entry(tree: Path, cache: Path) -> Path:
    return cache / f"v{FORMAT}" / f"{revision_key(tree.resolve())}.json"


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:40])


def _fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _other_format(path: Path) -> None:
    entry = json.loads(path.read_text())
    entry["format"] = FORMAT + 1
    path.write_text(json.dumps(entry))


def _checksum(path: Path) -> None:
    entry = json.loads(path.read_text())
    entry["payload"]["revision"]["schema"] = "automodel_cfg"
    path.write_text(json.dumps(entry))


def _wrong_types(path: Path) -> None:
    """A payload whose checksum holds (anyone can write one) but whose rows are not rows."""
    entry = json.loads(path.read_text())
    entry["payload"]["revision"]["rows"] = [[1, 2, 3]]
    entry["sha256"] = checksum(entry["payload"])
    path.write_text(json.dumps(entry))


@pytest.mark.parametrize(("damage", "said"), [
    (_truncate, "is not whole JSON (truncated or damaged)"),
    (_fifo, "is not a regular file"),
    (_other_format, "is of another format (another version of the tool)"),
    (_checksum, "fails its checksum"),
    (_wrong_types, "holds a damaged model (a list where TreeRow belongs "
                   "(payload.revision.rows[0]))"),
])
def test_a_damaged_entry_is_one_line_and_never_trusted(
        tree: Path, tmp_path: Path, damage: object, said: str) -> None:
    cache = tmp_path / "cache"
    argv = _commands(tree, cache)["check"]
    fresh = run(*argv)
    assert fresh[2] == ""
    entry = _entry(tree, cache)
    assert callable(damage)
    damage(entry)
    code, out, err = run(*argv)
    assert (code, out) == fresh[:2]  # the same verdict, from a fresh read of the tree
    shown = str(entry)
    assert err == (f"nemo-rl-workers: warning: cache entry {shown} {said}; ignored, the tree "
                   "is read again\n")
    # Stored over (a FIFO replaced by a regular file): the next run is answered from the
    # cache again, silently.
    assert not entry.is_fifo()
    assert run(*argv) == fresh


def test_no_cache_reads_and_stores_nothing(tree: Path, tmp_path: Path) -> None:
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        code, _, err = run("check", "--no-verify", "--no-cache", "--nemo-rl", str(tree),
                           str(tree / "examples/configs/c.yaml"))
    finally:
        os.chdir(cwd)
    assert (code, err) == (0, "")
    assert not (tmp_path / ".nemo-rl-workers-cache").exists()


def test_a_damaged_audit_entry_is_one_line(tree: Path, tmp_path: Path) -> None:
    """The audit's answers are entries of the same cache, said the same way."""
    cache = tmp_path / "cache"
    argv = ("audit", "--nemo-rl", str(tree), "--cache-dir", str(cache))
    fresh = run(*argv)
    (entry,) = (p for p in (cache / f"v{FORMAT}").glob("*.json")
                if json.loads(p.read_text())["computation"] == "audit")
    _truncate(entry)
    code, out, err = run(*argv)
    assert (code, out) == fresh[:2]
    assert err == (f"nemo-rl-workers: warning: cache entry {entry} is not whole JSON "
                   "(truncated or damaged); ignored, the audit runs again\n" + fresh[2])
    assert run(*argv) == fresh
