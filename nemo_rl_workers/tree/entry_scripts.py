"""An entry script of a NeMo-RL tree, read as data: where it calls an algorithm's `setup`.

An entry script (`examples/run_grpo.py`, `examples/nemo_gym/run_distillation_nemo_gym.py`,
a user's own driver) loads a config, may change it, and hands it to one algorithm's
`setup(config, ...)`. This module reads the script through the guarded source reader,
models it apart from the tree (it is not a module of the tree's package), and finds that
call: the algorithm module (one whose `setup` takes a whole config: `Revision.setups`),
the function the call is written in, and the name of the config it passes. What the
script does to the config before the call is the interpreter's to follow
(`checks.config.entry_walk`). Nothing is imported or run.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from nemo_rl_workers.tree.knowledge import SETUP
from nemo_rl_workers.tree.source.build import model_module
from nemo_rl_workers.tree.source.model import Function, Module, SourceTree
from nemo_rl_workers.tree.source.reading import SourceProblem, read_source
from nemo_rl_workers.tree.source.resolve import dotted_name


@dataclass(frozen=True)
class EntryScript:
    """An entry script and its call of an algorithm's `setup`."""

    path: str
    module: Module
    function: Function  # the function the `setup` call is written in (`main`)
    algorithm: str  # the module whose `setup` it calls (`nemo_rl.algorithms.grpo`)
    setup_name: str  # the name the script calls it by
    config_name: str  # the name of the config it passes (`config`)
    line: int  # the line of the `setup` call


class EntryScriptError(ValueError):
    """The script calls no `setup` of the tree (or cannot be read): one line, its path in it."""


class EntryScriptUnreadable(EntryScriptError):
    """The script cannot be read or parsed (a FIFO, not UTF-8, not Python)."""


def read_entry_script(path: str, algorithms: Collection[str], root: str | None = None,
                      shown: str | None = None) -> EntryScript:
    """The entry script at `path` and its call of the `setup` of one of `algorithms` (the
    tree's algorithm modules). `root`: the tree's folder, to name the script's module as
    the tree would (`examples.run_grpo`); elsewhere it is named by its file. `shown`: the
    script as messages name it (default: `path`)."""
    shown = shown or path
    text = read_source(Path(path))
    if isinstance(text, SourceProblem):
        raise EntryScriptUnreadable(str(text).replace(path, shown, 1))
    # A repository's recipes share a few entry scripts: each is modelled once per text.
    key = (os.path.abspath(path), frozenset(algorithms), root, shown, text)
    found = _READ.get(key)
    if found is None:
        try:
            found = _entry_script(path, text, algorithms, root, shown)
        except EntryScriptError as refused:
            found = refused
        if len(_READ) >= _READ_KEPT:
            _READ.clear()
        _READ[key] = found
    if isinstance(found, EntryScriptError):
        raise type(found)(str(found))
    return found


_READ: dict[tuple[str, frozenset[str], str | None, str, str],
            EntryScript | EntryScriptError] = {}
_READ_KEPT = 32


def _entry_script(path: str, text: str, algorithms: Collection[str], root: str | None,
                  shown: str) -> EntryScript:
    model = SourceTree(roots=(str(Path(path).parent),))
    name = _module_name(Path(path), root)
    model_module(model, Path(path), name, text)
    module = model.modules.get(name)
    if module is None:
        problem = model.problems[0] if model.problems else SourceProblem(path, "cannot be read")
        raise EntryScriptUnreadable(str(problem).replace(path, shown, 1))
    found: list[tuple[str, str, CallSiteFound]] = []
    for call in model.calls:
        if call.module != name or call.function is None:
            continue
        callee = dotted_name(call.node.func)
        if callee is None:
            continue
        target = module.imports.get(callee.partition(".")[0])
        absolute = (f"{target}{callee[len(callee.partition('.')[0]):]}" if target
                    else f"{name}.{callee}")
        algorithm, _, last = absolute.rpartition(".")
        if last != SETUP or algorithm not in algorithms:
            continue
        function = model.functions.get((name, call.function))
        config = call.node.args[0] if call.node.args else None
        if function is None or not isinstance(config, ast.Name):
            continue
        found.append((algorithm, callee, CallSiteFound(function, config.id, call.line)))
    if not found:
        raise EntryScriptError(f"{shown}: calls no algorithm's {SETUP}() of this NeMo-RL "
                               "with a config it names")
    if len({a for a, _, _ in found}) > 1:
        names = ", ".join(sorted({a for a, _, _ in found}))
        raise EntryScriptError(f"{shown}: calls the {SETUP}() of more than one algorithm "
                               f"({names})")
    algorithm, callee, site = found[0]
    return EntryScript(path, module, site.function, algorithm, callee, site.config,
                       site.line)


@dataclass(frozen=True)
class CallSiteFound:
    function: Function
    config: str
    line: int


def _module_name(path: Path, root: str | None) -> str:
    """`examples.nemo_gym.run_distillation_nemo_gym` under the tree's root; the file's
    stem elsewhere (a user's driver)."""
    if root is not None:
        try:
            relative = path.resolve().relative_to(Path(root).resolve())
        except ValueError:
            relative = None
        if relative is not None and all(p.isidentifier() for p in relative.with_suffix(
                "").parts):
            return ".".join(relative.with_suffix("").parts)
    return path.stem if path.stem.isidentifier() else "entry_script"
