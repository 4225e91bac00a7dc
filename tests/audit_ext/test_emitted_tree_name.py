"""`audit --emit-protocols` names the tree by what is stable (issue 29): its git commit where
it is a git checkout, else its folder's name; never how `--nemo-rl` was spelled, so two
people emitting the same tree commit the same file."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cli_run import run_cli

GIT = shutil.which("git")
FIRST_LINE = '"""Typed Protocols for the worker calls of the NeMo-RL tree {}.'


def emit(nemo_rl: str, out: Path) -> str:
    code, _, err = run_cli("audit", "--nemo-rl", nemo_rl, "--emit-protocols", str(out))
    assert code in (0, 1), err
    return out.read_text(encoding="utf-8")


def spellings(checkout: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The same tree emitted as `.` from inside it, by its absolute path, by a relative path
    from its parent, and by its package folder."""
    texts = []
    monkeypatch.chdir(checkout)
    texts.append(emit(".", tmp_path / "dot.py"))
    monkeypatch.chdir(tmp_path)
    texts.append(emit(str(checkout), tmp_path / "absolute.py"))
    monkeypatch.chdir(checkout.parent)
    texts.append(emit(f"./{checkout.name}/", tmp_path / "relative.py"))
    texts.append(emit(str(checkout / "nemo_rl"), tmp_path / "package.py"))
    return texts


@pytest.fixture
def checkout(trees: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "fork-checkout"
    shutil.copytree(trees / "mini", copy)
    return copy


def test_a_tree_without_git_is_named_by_its_folder_however_spelled(
    checkout: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = spellings(checkout, tmp_path, monkeypatch)
    assert texts[0].splitlines()[0] == FIRST_LINE.format("fork-checkout")
    assert all(text == texts[0] for text in texts)


def _git(folder: Path, *argv: str) -> str:
    assert GIT is not None
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@localhost",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@localhost",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run([GIT, *argv], cwd=folder, env=env, capture_output=True, text=True,
                          check=True, timeout=60)
    return done.stdout.strip()


@pytest.mark.skipif(GIT is None, reason="git is not installed")
def test_a_git_checkout_is_named_by_its_commit_however_spelled(
    checkout: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _git(checkout, "init", "-q", "-b", "main")
    _git(checkout, "add", "-A")
    _git(checkout, "commit", "-q", "-m", "tree")
    commit = _git(checkout, "rev-parse", "HEAD")
    texts = spellings(checkout, tmp_path, monkeypatch)
    assert texts[0].splitlines()[0] == FIRST_LINE.format(f"at commit {commit}")
    assert all(text == texts[0] for text in texts)
    # The same commit in a clone under another folder name emits the same file.
    clone = tmp_path / "another-name"
    _git(tmp_path, "clone", "-q", str(checkout), str(clone))
    _git(clone, "pack-refs", "--all")  # the branch now lives in packed-refs only
    assert emit(str(clone), tmp_path / "clone.py") == texts[0]


@pytest.mark.skipif(GIT is None, reason="git is not installed")
def test_a_linked_worktree_and_a_detached_head_are_named_by_their_commit(
    checkout: Path, tmp_path: Path
) -> None:
    _git(checkout, "init", "-q", "-b", "main")
    _git(checkout, "add", "-A")
    _git(checkout, "commit", "-q", "-m", "first")
    first = _git(checkout, "rev-parse", "HEAD")
    (checkout / "nemo_rl" / "extra.py").write_text("X = 1\n", encoding="utf-8")
    _git(checkout, "add", "-A")
    _git(checkout, "commit", "-q", "-m", "second")
    linked = tmp_path / "linked"
    _git(checkout, "worktree", "add", "-q", "--detach", str(linked), first)
    assert emit(str(linked), tmp_path / "linked.py").splitlines()[0] == FIRST_LINE.format(
        f"at commit {first}")
    _git(linked, "checkout", "-q", "-b", "topic")  # a branch of the linked worktree
    assert emit(str(linked), tmp_path / "topic.py").splitlines()[0] == FIRST_LINE.format(
        f"at commit {first}")
