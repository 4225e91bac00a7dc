"""`nemo_rl_workers.commands.migrate` split by concern (issue 22): text edits at node spans
(`yaml_edits`), file safety (`migrate_files`), the migration and planning (`migration`),
and the command driver (`migrate`), which keeps every name callers import from it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import nemo_rl_workers.commands.migrate as migrate
from nemo_rl_workers.model import migration
from nemo_rl_workers.reading import atomic_write, migrate_files, yaml_edits

REPO = Path(__file__).resolve().parents[2]

# Where each public name of `migrate` now lives; callers keep importing it from `migrate`.
HOMES = {
    "run_migrate": migrate,
    "migrate_text": migration,
    "migrate_paths": migration,
    "plan_file": migration,
    "Migration": migration,
    "MigrationError": yaml_edits,
    "FileReport": migrate_files,
    "write_atomic": atomic_write,  # the one writer of every file the tool writes
    "replace_refusal": migrate_files,
    "expand_inputs": migrate_files,
    "CONFIG_SUFFIXES": migrate_files,
}


@pytest.mark.parametrize("name", sorted(HOMES))
def test_public_names_stay_importable_from_migrate(name: str) -> None:
    assert getattr(migrate, name) is getattr(HOMES[name], name)


def _imported_modules(module: object) -> set[str]:
    path = Path(str(getattr(module, "__file__", "")))
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_each_module_keeps_to_its_concern() -> None:
    # Text edits know nothing of files, the registry or the command line.
    assert not _imported_modules(yaml_edits) & {
        "os", "pathlib", "tempfile", "argparse", "nemo_rl_workers.model.registry",
        "nemo_rl_workers.model.resolver", "nemo_rl_workers.reading.migrate_files"}
    # File safety neither edits YAML nor resolves workers.
    assert not {m for m in _imported_modules(migrate_files)
                if m.startswith(("ruamel", "nemo_rl_workers.model", "nemo_rl_workers.checks"))}
    # The rules and the planning never parse a command line or write files.
    assert not _imported_modules(migration) & {"argparse", "tempfile", "difflib"}
    sizes = {m.__name__: len(Path(m.__file__ or "").read_text().splitlines())
             for m in (migrate, migration, yaml_edits, migrate_files)}
    assert max(sizes.values()) < 700, sizes
