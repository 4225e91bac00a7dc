"""The cache's index of digests by stat: the same key of a tree's model as hashing every
file, a file's digest reused only while its stat is the one kept, and a racily fresh or
changed file always hashed again."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from nemo_rl_workers.cache import digest as digest_module
from nemo_rl_workers.cache.digest import INDEX, IndexInputs
from nemo_rl_workers.cache.store import Store, checksum
from nemo_rl_workers.guard.driver_model import DRIVERS
from nemo_rl_workers.tree.model_inputs import TreeInputs, tree_inputs
from nemo_rl_workers.tree.stage import REVISION


def model_key(root: Path, kind: str, store: Store | None = None) -> str:
    """The key of the tree's model of `kind` (with `store`: through its index)."""
    keys: dict[str, Callable[[TreeInputs], str]] = {"revision": REVISION.key,
                                                    "guard-drivers": DRIVERS.key}
    return keys[kind](tree_inputs(root, store))


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    (root / "nemo_rl" / "models").mkdir(parents=True)
    (root / "nemo_rl" / "__init__.py").write_text("")
    (root / "nemo_rl" / "models" / "policy.py").write_text("class Policy:\n    pass\n")
    return root


@pytest.fixture()
def store(tmp_path: Path) -> Store:
    return Store.open(tmp_path / "cache")


@pytest.fixture()
def hashed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files read for their digest (the guarded reader's calls, counted)."""
    seen: list[str] = []
    real = digest_module.file_digest

    def counting(path: Path, limit: int) -> str:
        seen.append(path.name)
        return real(path, limit)

    monkeypatch.setattr(digest_module, "file_digest", counting)
    return seen


def _no_racy_window(monkeypatch: pytest.MonkeyPatch) -> None:
    # The files a test writes are seconds old at most: git's racy window would keep none.
    monkeypatch.setattr(digest_module, "RACY_NS", 0)


def _index_entry(store: Store, root: Path) -> Path:
    return store.entry_path(INDEX.key(IndexInputs(str(root))))


def test_the_key_is_the_same_with_the_index_as_without(
        tree: Path, store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    _no_racy_window(monkeypatch)
    plain = model_key(tree, "revision")
    assert model_key(tree, "revision", store) == plain  # the index written
    assert _index_entry(store, tree).is_file()
    assert model_key(tree, "revision", store) == plain  # the index read


def test_an_unchanged_file_is_not_read_again(
        tree: Path, store: Store, hashed: list[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    _no_racy_window(monkeypatch)
    model_key(tree, "revision", store)
    assert "policy.py" in hashed
    hashed.clear()
    model_key(tree, "guard-drivers", store)  # another model of the same tree
    assert hashed == []


def test_a_racily_fresh_file_is_hashed_on_every_run(
        tree: Path, store: Store, hashed: list[str]) -> None:
    # Written just now: a write within the same timestamp tick could not be told apart.
    model_key(tree, "revision", store)
    hashed.clear()
    model_key(tree, "revision", store)
    assert "policy.py" in hashed and "__init__.py" in hashed


def test_an_edit_that_keeps_size_and_mtime_changes_the_key(
        tree: Path, store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    _no_racy_window(monkeypatch)
    module = tree / "nemo_rl" / "models" / "policy.py"
    before = model_key(tree, "revision", store)
    stamp = module.stat()
    module.write_text("class Polica:\n    pass\n")  # same size
    os.utime(module, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))  # mtime set back
    assert model_key(tree, "revision", store) == model_key(tree, "revision")
    assert model_key(tree, "revision", store) != before


def test_a_file_made_unreadable_is_keyed_by_its_refusal(
        tree: Path, store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    _no_racy_window(monkeypatch)
    module = tree / "nemo_rl" / "models" / "policy.py"
    before = model_key(tree, "revision", store)
    module.unlink()
    os.mkfifo(module)  # not a file: never waited on, never taken from the index
    assert model_key(tree, "revision", store) == model_key(tree, "revision")
    assert model_key(tree, "revision", store) != before


@pytest.mark.parametrize("damage", ["not json", "wrong digest, checksum kept", "odd rows"])
def test_a_damaged_index_never_changes_the_key(
        tree: Path, store: Store, monkeypatch: pytest.MonkeyPatch, damage: str) -> None:
    _no_racy_window(monkeypatch)
    plain = model_key(tree, "revision")
    model_key(tree, "revision", store)
    entry = _index_entry(store, tree)
    stored = json.loads(entry.read_text())
    files = stored["payload"]["files"]
    if damage == "not json":
        entry.write_text("{\"format\": 2, \"key\"")
    elif damage == "wrong digest, checksum kept":
        # An entry a user edited by hand, its checksum made to fit: a stale stat cannot
        # match a file that has changed since, and an unchanged file keeps its bytes'
        # digest; the forged digest is only believed for a file whose stat it records.
        module = str(tree / "nemo_rl" / "models" / "policy.py")
        files[module] = files[module][:5] + ["0" * 64]
        (tree / "nemo_rl" / "models" / "policy.py").write_text("class Changed:\n    pass\n")
        plain = model_key(tree, "revision")
        stored["payload"]["files"] = files
        stored["sha256"] = checksum(stored["payload"])
        entry.write_text(json.dumps(stored))
    else:
        stored["payload"]["files"] = {k: [True, "x", None] for k in files}
        stored["sha256"] = checksum(stored["payload"])
        entry.write_text(json.dumps(stored))
    assert model_key(tree, "revision", store) == plain


def test_a_file_gone_from_the_tree_leaves_the_index(
        tree: Path, store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    _no_racy_window(monkeypatch)
    model_key(tree, "revision", store)
    module = tree / "nemo_rl" / "models" / "policy.py"
    assert str(module) in json.loads(_index_entry(store, tree).read_text())["payload"]["files"]
    module.unlink()
    model_key(tree, "revision", store)
    assert str(module) not in json.loads(
        _index_entry(store, tree).read_text())["payload"]["files"]
