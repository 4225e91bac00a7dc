"""Which NeMo-RL tree a command judges, found on disk without importing anything.

In order: the folder given as `--nemo-rl`; else the checkout holding the config being
checked (walking up from the config's folder to one that holds a `nemo_rl` package);
else the `nemo_rl` package the current environment would import (found by the import
system's finders, never executed); else none, and the caller judges against the
reference. (A tree's git commit: `git_head.head_commit`.)
"""

from __future__ import annotations

import importlib.util
import os
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

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


def given_checkout(path: str) -> Checkout:
    """`--nemo-rl PATH`: the folder itself, or its parent when PATH is the package."""
    folder = Path(path)
    try:
        if not folder.exists():
            raise UnusableCheckout(f"--nemo-rl {path}: no such folder")
        if not folder.is_dir():
            raise UnusableCheckout(f"--nemo-rl {path}: is not a folder")
        if is_checkout(folder):
            return Checkout(folder.resolve(), "--nemo-rl", os.path.normpath(path))
        if folder.name == PACKAGE and is_checkout(folder.parent):
            return Checkout(folder.parent.resolve(), "--nemo-rl",
                            os.path.normpath(os.path.join(path, os.pardir)))
    except OSError as err:
        raise UnusableCheckout(f"--nemo-rl {path}: cannot be read: {err.strerror or err}") from err
    raise UnusableCheckout(
        f"--nemo-rl {path}: is not a NeMo-RL checkout (no {PACKAGE} package in it); give the "
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
            return Checkout(folder, "the config's checkout", shown)
        if folder.parent == folder:
            return None
        folder = folder.parent
    return None


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
                  reference: bool = False) -> Checkout | None:
    """The tree to judge (see the module docstring); None: the reference (also when
    `reference` asks for it)."""
    if reference:
        return None
    if given is not None:
        return given_checkout(given)
    for config in configs:
        found = config_checkout(config)
        if found is not None:
            return found
    return environment_checkout()


def vllm_pin(root: Path) -> str | None:
    """The vLLM version the tree's `pyproject.toml` pins (`vllm==X` in its dependencies
    or extras); None where it pins none or there is no such file."""
    try:
        with open(root / "pyproject.toml", "rb") as f:
            project = tomllib.load(f).get("project", {})
    except (OSError, tomllib.TOMLDecodeError, ValueError):
        return None
    if not isinstance(project, dict):
        return None
    requirements: list[object] = list(project.get("dependencies") or [])
    extras = project.get("optional-dependencies") or {}
    if isinstance(extras, dict):
        for values in extras.values():
            if isinstance(values, list):
                requirements.extend(values)
    for requirement in requirements:
        if isinstance(requirement, str) and (found := _VLLM_PIN.match(requirement)):
            return found[1]
    return None
