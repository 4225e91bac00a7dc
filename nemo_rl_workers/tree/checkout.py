"""Which NeMo-RL tree a command judges, found on disk without importing anything.

In order: the folder given as `--nemo-rl`; else the checkout holding the config being
checked (walking up from the config's folder to one that holds a `nemo_rl` package),
or the one holding the source of the class being verified; else the `nemo_rl` package
the current environment would import (found by the import system's finders, never
executed); else none, and the caller judges against the reference. (A tree's git
commit: `git_head.head_commit`.)
"""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from nemo_rl_workers.reading.guarded_file import FileRefused, read_regular

PACKAGE = "nemo_rl"
MAX_WALK_UP = 64  # folders above a config; a deeper path is not a checkout layout
_VLLM_PIN = re.compile(r"^\s*vllm\s*==\s*([0-9][0-9A-Za-z.+-]*)")


class UnusableCheckout(ValueError):
    """`--nemo-rl` names nothing that can be judged; `str()` is one line."""


@dataclass(frozen=True)
class Checkout:
    """A NeMo-RL tree on disk: the folder holding its `nemo_rl` package."""

    root: Path  # absolute
    how: str  # why this tree: "--nemo-rl", "the config's checkout", "the environment's nemo_rl"
    shown: str = ""  # how reports name it: relative where the user gave relative paths

    @property
    def name(self) -> str:
        return self.shown or str(self.root)


def is_checkout(folder: Path) -> bool:
    """Whether `folder` holds a `nemo_rl` package (regular, or a namespace folder of
    modules, as some older trees are)."""
    package = folder / PACKAGE
    try:
        if not package.is_dir():
            return False
        if (package / "__init__.py").is_file():
            return True
        return any(entry.suffix == ".py" or (entry.is_dir() and entry.name != "__pycache__")
                   for entry in package.iterdir())
    except OSError:
        return False


def _refuse_linked_package(folder: Path, shown: str) -> None:
    """A `nemo_rl` that is a symlink out of its checkout is not walked: a package linked
    to `/` would read the whole machine."""
    outside = link_out_of(folder / PACKAGE, folder)
    if outside is not None:
        raise UnusableCheckout(f"{shown}: its {PACKAGE} {outside}; give the folder that holds "
                               f"the {PACKAGE} package itself")


def given_checkout(path: str) -> Checkout:
    """`--nemo-rl PATH`: the folder itself, or its parent when PATH is the package."""
    folder = checkout_folder(Path(path), f"--nemo-rl {path}")
    shown = os.path.normpath(path) if folder == Path(path) else os.path.normpath(
        os.path.join(path, os.pardir))
    return Checkout(folder.resolve(), "--nemo-rl", shown)


def checkout_folder(folder: Path, shown: str) -> Path:
    """The folder holding the `nemo_rl` package: `folder` itself, or its parent when it is
    the package; UnusableCheckout, naming `shown` (what the user wrote), when neither is
    or the package is a symlink out of it."""
    try:
        if not folder.exists():
            raise UnusableCheckout(f"{shown}: no such folder")
        if not folder.is_dir():
            raise UnusableCheckout(f"{shown}: is not a folder")
        for root in (folder, folder.parent) if folder.name == PACKAGE else (folder,):
            if is_checkout(root):
                _refuse_linked_package(root, shown)
                return root
    except OSError as err:
        raise UnusableCheckout(f"{shown}: cannot be read: {err.strerror or err}") from err
    raise UnusableCheckout(
        f"{shown}: is not a NeMo-RL checkout (no {PACKAGE} package in it); give the "
        f"folder that holds the {PACKAGE} package")


def config_checkout(config: str) -> Checkout | None:
    """The checkout holding `config`: the nearest folder above it with a `nemo_rl` package."""
    try:
        folder = Path(os.path.abspath(config)).parent
    except (OSError, ValueError):
        return None
    for _ in range(MAX_WALK_UP):
        if is_checkout(folder):
            shown = str(folder) if os.path.isabs(config) else os.path.relpath(folder)
            _refuse_linked_package(folder, shown)
            return Checkout(folder, "the config's checkout", shown)
        if folder.parent == folder:
            return None
        folder = folder.parent
    return None


def class_checkout(fqn: str) -> Checkout | None:
    """The checkout holding the source of class `fqn` (its module found on this
    interpreter's import path, never imported): a class of a fork is judged against it."""
    from nemo_rl_workers.tree.source.lookup import ImportRoots, locate

    found = locate(fqn.rpartition(".")[0], ImportRoots.of_this_interpreter())
    if isinstance(found, str):
        return None
    checkout = config_checkout(str(found.file))
    return None if checkout is None else Checkout(checkout.root, "the class's checkout",
                                                  checkout.shown)


def environment_checkout() -> Checkout | None:
    """The folder of the `nemo_rl` this environment would import, found by the finders
    alone: the package's own code does not run."""
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    locations = list(spec.submodule_search_locations or [])
    if not locations and spec.origin is not None:
        locations = [os.path.dirname(spec.origin)]
    for location in locations:
        package = Path(location)
        if package.name == PACKAGE and package.is_dir():
            return Checkout(package.parent.resolve(), "the environment's nemo_rl")
    return None


def find_checkout(given: str | None, configs: Sequence[str] = (),
                  reference: bool = False, classes: Sequence[str] = ()) -> Checkout | None:
    """The tree to judge (see the module docstring; the checkout holding a class's source
    stands where a config's would); None: the reference (also when `reference` asks)."""
    if reference:
        return None
    if given is not None:
        return given_checkout(given)
    for config in configs:
        found = config_checkout(config)
        if found is not None:
            return found
    for fqn in classes:
        found = class_checkout(fqn)
        if found is not None:
            return found
    return environment_checkout()


MAX_PROJECT_BYTES = 1024 * 1024
"""A `pyproject.toml` larger than this is refused (upstream's is about 20 KB)."""


def vllm_pin(root: Path) -> str | None:
    """The vLLM version the tree's `pyproject.toml` pins (`vllm==X` in its dependencies
    or extras); None where it pins none, or the file cannot be used (`project_pin`)."""
    return project_pin(root)[0]


def project_pin(root: Path) -> tuple[str | None, str | None]:
    """(the vLLM version the tree's `pyproject.toml` pins, why the file could not be
    used): read through the guarded reader (a FIFO, a device or a link out of the tree is
    refused, never waited on or read), parsed with bounded nesting, every value it reads
    type-checked. No file is (None, None): nothing to read, nothing wrong."""
    path = root / "pyproject.toml"
    if not os.path.lexists(path):
        return None, None
    outside = link_out_of(path, root)
    if outside is not None:
        return None, f"pyproject.toml {outside}; its vLLM pin is not read"
    try:
        raw = read_regular(path, limit=MAX_PROJECT_BYTES, what="a project file")
    except FileRefused as refused:
        return None, f"pyproject.toml {refused.reason}; its vLLM pin is not read"
    import tomllib  # here: the guard's content key imports this module on a run's start

    try:
        project = tomllib.loads(raw.decode("utf-8")).get("project", {})
    except UnicodeDecodeError:
        return None, "pyproject.toml is not UTF-8 text; its vLLM pin is not read"
    except (tomllib.TOMLDecodeError, RecursionError, MemoryError, ValueError) as err:
        reason = "nests too deeply" if isinstance(err, RecursionError | MemoryError) else (
            f"is not valid TOML ({err})")
        return None, f"pyproject.toml {reason}; its vLLM pin is not read"
    if not isinstance(project, dict):
        return None, _wrong_type("project", project, "a table")
    requirements: list[object] = []
    dependencies = project.get("dependencies", [])
    if not isinstance(dependencies, list):
        return None, _wrong_type("project.dependencies", dependencies, "a list of strings")
    requirements.extend(dependencies)
    extras = project.get("optional-dependencies", {})
    if not isinstance(extras, dict):
        return None, _wrong_type("project.optional-dependencies", extras, "a table of lists")
    for name, values in extras.items():
        if not isinstance(values, list):
            return None, _wrong_type(f"project.optional-dependencies.{name}", values,
                                     "a list of strings")
        requirements.extend(values)
    for requirement in requirements:
        if not isinstance(requirement, str):
            return None, _wrong_type("a requirement", requirement, "a string")
        if found := _VLLM_PIN.match(requirement):
            return found[1], None
    return None, None


_TOML_TYPES: dict[type, str] = {bool: "a boolean", int: "an integer", float: "a float",
                                 str: "a string", list: "an array", dict: "a table"}


def _wrong_type(where: str, value: object, wanted: str) -> str:
    given = _TOML_TYPES.get(type(value), "a date or time")
    return f"pyproject.toml: {where} is {given}, not {wanted}; its vLLM pin is not read"


def link_out_of(path: Path, root: Path) -> str | None:
    """Why `path` is not followed: a symlink that leads out of `root` (the words follow
    its name), or None."""
    try:
        if not path.is_symlink():
            return None
        target = os.path.realpath(path)
        inside = os.path.realpath(root)
    except (OSError, ValueError, RuntimeError):
        return "cannot be read: its link cannot be followed"
    if target == inside or target.startswith(inside.rstrip(os.sep) + os.sep):
        return None
    return f"is a symlink out of the tree ({target}); it is not followed"
