"""`verify` of a name that is not a class, as the installed command runs it from a fresh
working folder on a module written there: exit 2 and one line saying so, for the class
and for `--base`, with and without `--static`; never a contract report (exit 1)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

MODULE = '''
def a_function():
    return None


AN_INT = 3


class Plain:
    pass


an_instance = Plain()


class Disguised:
    """An instance that claims to be a class: isinstance(x, type) is True for it."""

    @property
    def __class__(self):
        return type


disguised = Disguised()
'''

NOT_CLASSES = ("a_function", "AN_INT", "an_instance", "disguised")


def verify(folder: Path, *argv: str) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "nemo_rl_workers", "verify", *argv, "--protocol", "PolicyWorker"],
        capture_output=True, text=True, cwd=folder, timeout=120, check=False,
    )
    return done.returncode, done.stdout, done.stderr


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    found = tmp_path_factory.mktemp("fresh")
    (found / "odd_names.py").write_text(MODULE, encoding="utf-8")
    return found


@pytest.mark.parametrize("name", NOT_CLASSES)
def test_a_name_that_is_no_class_exits_2_with_one_line(folder: Path, name: str) -> None:
    code, out, err = verify(folder, f"odd_names.{name}")
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"nemo-rl-workers: FQN=odd_names.{name} is not a class: ")


@pytest.mark.parametrize("name", NOT_CLASSES)
def test_a_base_that_is_no_class_exits_2_with_one_line(folder: Path, name: str) -> None:
    code, out, err = verify(folder, "odd_names.Plain", "--base", f"odd_names.{name}")
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"nemo-rl-workers: --base=odd_names.{name} is not a class: ")


def test_the_disguised_instance_is_named_by_its_real_type(folder: Path) -> None:
    _, _, err = verify(folder, "odd_names.disguised")
    assert err == ("nemo-rl-workers: FQN=odd_names.disguised is not a class: module odd_names "
                   "has Disguised (not a class) at 'disguised'; did you mean "
                   "odd_names.Disguised?\n")


@pytest.mark.parametrize("base", [False, True])
def test_static_says_the_same_for_the_disguised_instance(folder: Path, base: bool) -> None:
    argv = ("odd_names.Plain", "--base", "odd_names.disguised") if base else (
        "odd_names.disguised",)
    code, out, err = verify(folder, *argv, "--static", "--no-cache")
    assert (code, out) == (2, "")
    named = "--base odd_names.disguised" if base else "odd_names.disguised"
    assert err.startswith(f"nemo-rl-workers: {named} is not a class ")
