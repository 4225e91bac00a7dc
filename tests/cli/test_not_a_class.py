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


class Meta(type):
    """A metaclass whose classes raise on every attribute a suggestion would read."""

    def __getattribute__(cls, name):
        if name in ("__module__", "__qualname__", "__name__", "__mro__", "__dict__"):
            raise RuntimeError(f"metaclass __getattribute__ {name}")
        return super().__getattribute__(name)


class Hostile(metaclass=Meta):
    pass


hostile_instance = Hostile()
'''

NOT_CLASSES = ("a_function", "AN_INT", "an_instance", "disguised", "hostile_instance")


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
    # The named object alone is judged: no suggestion from the module's other members
    # (issue 35), whose metaclasses may raise or hang.
    assert err == ("nemo-rl-workers: FQN=odd_names.disguised is not a class: module odd_names "
                   "has Disguised (not a class) at 'disguised'.\n")


@pytest.mark.parametrize("base", [False, True])
def test_static_says_the_same_for_the_disguised_instance(folder: Path, base: bool) -> None:
    argv = ("odd_names.Plain", "--base", "odd_names.disguised") if base else (
        "odd_names.disguised",)
    code, out, err = verify(folder, *argv, "--static", "--no-cache")
    assert (code, out) == (2, "")
    named = "--base odd_names.disguised" if base else "odd_names.disguised"
    assert err.startswith(f"nemo-rl-workers: {named} is not a class ")


@pytest.mark.parametrize(("name", "what"), [
    ("a_function", "function"), ("AN_INT", "int"), ("an_instance", "Plain"),
    ("hostile_instance", "Hostile"),
])
def test_a_module_with_a_hostile_metaclass_is_no_matter(
    folder: Path, name: str, what: str
) -> None:
    """Beside a class whose metaclass raises, a function, a constant or an instance is still
    "is not a class", exit 2 (issue 35: it was exit 1, "raised RuntimeError")."""
    line = (f"is not a class: module odd_names has {what} (not a class) at '{name}'.\n")
    assert verify(folder, f"odd_names.{name}") == (2, "", f"nemo-rl-workers: FQN=odd_names."
                                                          f"{name} {line}")
    assert verify(folder, "odd_names.Plain", "--base", f"odd_names.{name}") == (
        2, "", f"nemo-rl-workers: --base=odd_names.{name} {line}")


def test_a_missing_name_is_suggested_past_a_hostile_metaclass(folder: Path) -> None:
    code, out, err = verify(folder, "odd_names.Plian")
    assert (code, out) == (2, "")
    assert err == (f"nemo-rl-workers: FQN=odd_names.Plian: no such class (module odd_names "
                   f"({folder / 'odd_names.py'}) has no class 'Plian'); did you mean "
                   "odd_names.Plain?\n")
