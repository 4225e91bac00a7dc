"""Commands by file (issue 45, item 5): each command in its own module, the dispatcher
only dispatching, the exit codes defined once (`findings.exit_codes`) and the commands'
lines printed through one reporter (`findings.reporter`, below the commands and the guard,
which prints through it too). Read from source."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from nemo_rl_workers.commands import cli
from nemo_rl_workers.commands.options import build_parser

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "nemo_rl_workers"
COMMANDS = PACKAGE / "commands"
# The commands that write to a stream themselves: until the items of issue 45 that rewrite
# them land, the cache's notes (item 4) and the pytest plugin's. (The reporter, the streams
# and check's rendering are below the commands, in `findings`.)
WRITES_ITSELF = {"cache", "audit_cache", "pytest_plugin"}


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def test_every_command_has_a_module_of_its_own() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")  # argparse's own field
    names = set(getattr(sub, "choices", None) or ())
    dispatched = {**cli.COMMANDS, "migrate": cli.MIGRATE}
    # `run` starts before the streams are wrapped: the user's program owns them.
    assert names - {"run"} == set(dispatched)
    for name, command in dispatched.items():
        module, _, function = command.runs.partition(":")
        assert module != "cli", name
        assert callable(getattr(importlib.import_module(
            f"nemo_rl_workers.commands.{module}"), function)), name


def test_the_dispatcher_holds_no_command() -> None:
    defined = {node.name for node in ast.walk(_tree(COMMANDS / "cli.py"))
               if isinstance(node, ast.FunctionDef)}
    assert defined <= {"main", "_run", "_function", "_registry_unusable", "_internal_error",
                       "_save_traceback"}


def test_exit_codes_are_defined_once() -> None:
    """No module but `exit_codes` names an exit code, and no command returns a bare one."""
    named: list[str] = []
    bare: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "exit_codes.py":
            continue
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                named.extend(f"{path.name}:{node.lineno}" for target in targets
                             for name in ast.walk(target)
                             if isinstance(name, ast.Name) and "EXIT_" in name.id)
            if (path.parent == COMMANDS and isinstance(node, ast.Return)
                    and isinstance(node.value, ast.Constant)
                    and type(node.value.value) is int):
                bare.append(f"{path.name}:{node.lineno}")
    assert (named, bare) == ([], [])


@pytest.mark.parametrize("path", sorted(COMMANDS.glob("*.py")), ids=lambda p: p.stem)
def test_commands_print_through_the_reporter(path: Path) -> None:
    if path.stem in WRITES_ITSELF:
        pytest.skip("writes to its streams itself (see WRITES_ITSELF)")
    writes = [f"{path.name}:{node.lineno}" for node in ast.walk(_tree(path))
              if isinstance(node, ast.Call) and (
                  (isinstance(node.func, ast.Name) and node.func.id == "print")
                  or (isinstance(node.func, ast.Attribute)
                      and node.func.attr in ("dump", "writelines")))]
    assert writes == []
