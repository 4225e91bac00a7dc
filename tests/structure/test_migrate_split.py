"""`nemo-rl-workers migrate` split by concern (issue 22): text edits at node spans
(`yaml_edits`), file safety (`migrate_files`), the migration and planning (`migration`),
and the command driver (`commands.migrate`). What users see of the command is the same
whichever module holds which part; each part keeps to its concern."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import nemo_rl_workers.commands.migrate as migrate
from nemo_rl_workers.model import migration
from nemo_rl_workers.reading import migrate_files, yaml_edits
from tests.cli_run import Ran

OUTDATED = """\
policy:
  # the training backend
  dtensor_cfg:
    enabled: true  # keep DTensor
    _v2: true
  megatron_cfg: {enabled: false}
"""


def test_the_command_checks_rewrites_and_then_has_nothing_to_do(
        tmp_path: Path, cli: Callable[..., Ran]) -> None:
    """The parts together, as users call them: `--check` names the file without touching
    it, `--in-place` rewrites it keeping every comment, and a second run has nothing to do."""
    path = tmp_path / "recipe.yaml"
    path.write_text(OUTDATED)
    code, out, _ = cli("migrate", "--check", str(path))
    assert code == 1 and str(path) in out and path.read_text() == OUTDATED
    code, _, err = cli("migrate", "--in-place", str(path))
    assert (code, err) == (0, "")
    text = path.read_text()
    assert "automodel_cfg:" in text and "dtensor_cfg" not in text and "_v2" not in text
    assert "# the training backend" in text and "# keep DTensor" in text
    assert cli("migrate", "--check", str(path)).code == 0
    assert path.read_text() == text


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
