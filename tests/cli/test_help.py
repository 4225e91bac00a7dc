"""Every `--help` is true (issue 43): each argument of each command says what it is, and
`--cache-dir` names the folders the command really keeps its cache in without it, as
the library chooses them (`cache.folder`) (the user's cache folder for tree models, the working
folder's for static verdicts and audit answers), in the environment the help is asked in.
"""

from __future__ import annotations

import argparse
import io
import os
from pathlib import Path

import pytest

from contracts.protocols import PROTOCOLS
from nemo_rl_workers.cache.folder import DEFAULT_CACHE_DIR, MODEL_CACHE_ENV, model_cache_dir
from nemo_rl_workers.commands.cli import main
from nemo_rl_workers.commands.options import build_parser
from tests.cli_run import run_cli
from tests.guard.upstream import OLD_TREE


def _help(*argv: str) -> str:
    code, out, err = run_cli(*argv, "--help")
    assert (code, err) == (0, "")
    return out


def _flat(text: str) -> str:
    return " ".join(text.split())


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


@pytest.fixture
def user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user cache folder whose name argparse and its line breaking would spoil: a `%`
    (argparse's help is a %-format) and hyphens (argparse breaks lines at them)."""
    monkeypatch.delenv(MODEL_CACHE_ENV, raising=False)
    home = tmp_path / "cache-home-100%-of-it"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    assert model_cache_dir() == str(home / "nemo-rl-workers")
    return home / "nemo-rl-workers"


# What each command keeps (the caches its code opens: `Revisions` reads tree models,
# `open_cache` without a default the working folder's).
KEEPS = {
    "resolve": ("tree models",),
    "list": ("tree models",),
    "migrate": ("tree models",),
    "check": ("tree models", "static verdicts"),
    "verify": ("static verdicts",),
    "audit": ("audit answers",),
}


@pytest.mark.parametrize("command", sorted(KEEPS))
def test_cache_dir_help_names_the_real_default_folders(command: str, user_cache: Path) -> None:
    shown = _flat(_help(command))
    line = shown.split("--cache-dir DIR", 2)[2].split("--no-cache", 1)[0]
    tree_models = "tree models" in KEEPS[command]
    assert (str(user_cache) in line) == tree_models, line
    assert (f"{DEFAULT_CACHE_DIR} of the working folder" in line) == (not tree_models or
                                                                       command == "check")
    for what in KEEPS[command]:
        assert what in line, line


def test_the_folder_the_help_names_is_where_tree_models_go(
        user_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not OLD_TREE.is_dir():
        pytest.skip("the corpus is absent")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    assert str(user_cache) in _flat(_help("list"))
    out, err = io.StringIO(), io.StringIO()
    assert main(["list", "--nemo-rl", str(OLD_TREE)], out, err) in (0, 1), err.getvalue()
    assert user_cache.is_dir() and any(user_cache.rglob("*"))
    assert os.listdir(work) == []  # nothing in the working folder


@pytest.mark.parametrize("command", sorted(_subcommands()))
def test_every_argument_of_every_command_says_what_it_is(command: str) -> None:
    parser = _subcommands()[command]
    undocumented = [a.option_strings or a.dest for a in parser._actions if not a.help]
    assert undocumented == []


def test_verify_documents_the_class_and_the_protocol() -> None:
    shown = _help("verify")
    assert shown.split("positional arguments:\n", 1)[1].startswith("  FQN  ")
    flat = _flat(shown)
    assert "FQN the dotted name of the class to verify, module.Class" in flat
    assert "--protocol PROTOCOL the contract it must implement" in flat
    named = flat.split("a built-in one's name (", 1)[1].split(";", 1)[0]
    examples = [n.strip() for n in named.split(",") if n.strip() != "..."]
    assert examples and all(n in PROTOCOLS for n in examples), examples
    # The names a user can give: an unknown one gets every built-in listed.
    out, err = io.StringIO(), io.StringIO()
    assert main(["verify", "--protocol", "NoSuch", "a.B"], out, err) == 2
    assert all(name in err.getvalue() for name in PROTOCOLS)
