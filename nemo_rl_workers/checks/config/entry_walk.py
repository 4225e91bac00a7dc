"""What an entry script does to a config before its algorithm's `setup`, followed.

The entry (`EntryScript`: the function that calls `setup(config, ...)`) is walked statement
by statement as the tree's `setup` is (`interpret.walk.SetupWalk`), from where it loads the
config to the `setup` call:

- The load. The entry parses its command line (`args, overrides = parse_args()`), then
  binds its config from it (`config = load_config(args.config)`, `config =
  parse_hydra_overrides(config, overrides)`): an assignment to the config's name that reads
  the command line is the config as the launch loads it, overrides applied. A conversion
  of it to a plain container (`OmegaConf.to_container(config, resolve=True)`) keeps it; a
  build of the tree's config class from it (`MasterConfig(**config)`) gives it that model.
  A driver that takes the config as its function's parameter has it from the start.
- The edits. Assignments into the config (`config.policy["generation"] = ...`), and the
  tree's helpers it is handed to (`setup_nemo_gym_config(config, tokenizer)` sets
  `vllm_cfg.async_engine = True` in place), change the walk's copy as they change the
  run's; a value the walk cannot compute is held as unknown at its key, so only what
  reads that key is undecided.
- The entry's own rules: an `assert` or a guarded `raise` on the config between the load
  and `setup` is judged as the tree's are.

The config at the `setup` call is what the tree's rules then judge. Where the config's
name is bound to something the walk cannot follow, the run is undecided, the line named.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nemo_rl_workers.interpret.expressions import Environ, Known, Unknown, Value
from nemo_rl_workers.interpret.models import config_model, model_field
from nemo_rl_workers.interpret.walk import SetupWalk, TreeRule, walk_scope, worker_stops
from nemo_rl_workers.reading.plain_data import plain_copy
from nemo_rl_workers.tree.source.gc_pause import collector_paused
from nemo_rl_workers.tree.source.resolve import dotted_name
from nemo_rl_workers.tree.source_kept import tree_source

if TYPE_CHECKING:
    from nemo_rl_workers.tree.entry_scripts import EntryScript
    from nemo_rl_workers.tree.revision import Revision
    from nemo_rl_workers.tree.source import SourceTree

# The calls that parse a command line (argparse's), and the conversion to a plain
# container a loaded OmegaConf config goes through: the two library calls the load is
# recognised by, neither of them NeMo-RL's.
PARSERS = frozenset({"parse_args", "parse_known_args"})
CONTAINER = "omegaconf.OmegaConf.to_container"


@dataclass
class EntryRun:
    """The config as the entry hands it to `setup`, and the entry's own rules."""

    algorithm: str  # the module whose `setup` it calls
    config: dict[str, Any] | None = None  # None: undecided (`undecided` says why)
    undecided: str | None = None
    rules: list[TreeRule] = field(default_factory=list)


def run_entry(script: EntryScript, config: Mapping[str, Any], revision: Revision,
              environ: Mapping[str, str]) -> EntryRun:
    """The config `script` passes to its algorithm's `setup`, from `config` as loaded with
    the launch's overrides, and the rules the script runs on it before."""
    run = EntryRun(script.algorithm)
    if revision.root is None:
        run.undecided = "no NeMo-RL tree is read (the reference runs no entry script)"
        return run
    tree = tree_source(revision.root)
    walk = _EntryWalk(script, plain_copy(dict(config)), revision, tree, environ)
    with collector_paused():  # it models the helpers it walks (see tree.source.gc_pause)
        try:
            walk.run()
        except (RecursionError, MemoryError):
            run.undecided = f"{walk.file}: its code is nested too deeply to follow"
            return run
    run.rules = walk.rules
    held = walk.at_setup
    if not walk.started or held is None:
        run.undecided = (f"{walk.file}:{script.line}: the walk does not reach the "
                         f"{script.setup_name}() call" + (
                             f" ({walk.cut}: past the statements it follows)"
                             if walk.cut else ""))
    elif isinstance(held, Unknown):
        run.undecided = f"{walk.file}:{script.line}: the config it passes is not known: " \
                        f"{held.reason}"
    elif not isinstance(held.value, dict):
        run.undecided = f"{walk.file}:{script.line}: {script.config_name} is not a config " \
                        "block there"
    else:
        run.config = held.value
    return run


class _EntryWalk(SetupWalk):
    """The entry's function, from its load of the config to its `setup` call."""

    def __init__(self, script: EntryScript, loaded: dict[str, Any], revision: Revision,
                 tree: SourceTree, environ: Mapping[str, str]) -> None:
        function = script.function
        names: dict[str, Value] = {}
        for param in function.params:  # a driver given the config (`main(config)`)
            if param.name == script.config_name:
                names[param.name] = Known(loaded, "", model=config_model(
                    tree, script.module, param.annotation))
        setup = script.setup_name.rpartition(".")[2]
        stops = worker_stops(tree, revision, function) | {setup}
        assert revision.root is not None
        super().__init__(function, walk_scope(function, script.module, Environ(environ), names),
                         Path(revision.root), stops, tree)
        self.scope.fields = functools.partial(model_field, tree)
        self.script = script
        self.loaded = loaded
        self.command_line: set[str] = set()
        self.at_setup: Value | None = None

    def statement(self, stmt: ast.stmt, guards: Any, unsure: str | None) -> None:
        if not self.started and self.starts_workers(stmt):
            self.at_setup = self.scope.names.get(self.script.config_name)
        super().statement(stmt, guards, unsure)

    def assign(self, stmt: ast.Assign | ast.AnnAssign | ast.AugAssign,
                unsure: str | None) -> None:
        value = stmt.value
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if isinstance(value, ast.Call) and self._parses_command_line(value):
            for target in targets:
                for node in ast.walk(target):
                    if isinstance(node, ast.Name):
                        self.command_line.add(node.id)
                        self.scope.names[node.id] = Unknown(
                            f"{node.id} is the entry's command line")
            return
        if value is not None and len(targets) == 1 and isinstance(targets[0], ast.Name) \
                and targets[0].id == self.script.config_name:
            loaded = self._load(value)
            if loaded is not None:
                self.scope.names[self.script.config_name] = loaded
                return
        super().assign(stmt, unsure)
        held = self.scope.names.get(self.script.config_name)
        if any(isinstance(t, ast.Name) and t.id == self.script.config_name for t in targets) \
                and isinstance(held, Unknown):  # the line that lost it, named
            self.scope.names[self.script.config_name] = Unknown(
                f"{self.file}:{stmt.lineno} binds it to {ast.unparse(value or stmt)[:80]}: "
                f"{held.reason}", held.reads, held.env)

    def _load(self, value: ast.expr) -> Value | None:
        """The config's name bound by the load: from the command line (the loaded config,
        overrides applied), a plain-container conversion of it, or the tree's config class
        built from it; None for any other value (walked as the tree's code is)."""
        config = self.script.config_name
        mentioned = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
        if mentioned & self.command_line:
            return Known(self.loaded, "")
        if not isinstance(value, ast.Call):
            return None
        held = self.scope.names.get(config)
        if not isinstance(held, Known):
            return None
        callee = dotted_name(value.func)
        head = callee.partition(".")[0] if callee else ""
        resolved = (self.scope.imports.get(head, head) + callee[len(head):]) if callee else ""
        if resolved == CONTAINER and value.args and isinstance(value.args[0], ast.Name) \
                and value.args[0].id == config:
            return Known(held.value, "")
        unpacked = [k for k in value.keywords if k.arg is None]
        if not value.args and len(unpacked) == 1 and len(value.keywords) == 1 and isinstance(
                unpacked[0].value, ast.Name) and unpacked[0].value.id == config and callee:
            model = config_model(self.tree, self.script.module, callee)
            if model is not None:
                return Known(held.value, "", model=model)
        return None

    def _parses_command_line(self, call: ast.Call) -> bool:
        """`parser.parse_known_args()`, or a function of the script that makes one."""
        if isinstance(call.func, ast.Attribute) and call.func.attr in PARSERS:
            return True
        if isinstance(call.func, ast.Name):
            function = self.script.module.functions.get(call.func.id)
            return function is not None and any(
                isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                and n.func.attr in PARSERS for n in ast.walk(function.node))
        return False
