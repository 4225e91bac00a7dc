"""An internal error's traceback goes to the tool's cache folder (issue 43): the one
`--cache-dir` gives, else the user's (`$NEMO_RL_WORKERS_CACHE_DIR`, `$XDG_CACHE_HOME`),
never the temporary folder while that folder can be written; where it cannot, the
temporary folder, and the one line says why. A fault injected on purpose: the command's
body replaced by one that raises."""

from __future__ import annotations

import io
import tempfile
from pathlib import Path

import pytest

from nemo_rl_workers.cache.folder import MODEL_CACHE_ENV
from nemo_rl_workers.commands import cli
from nemo_rl_workers.findings.exit_codes import EXIT_INTERNAL
from tests.cli_run import run_cli

SAVED = "nemo-rl-workers-internal-error-*.txt"


@pytest.fixture
def folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(the user's cache folder, the temporary folder), both empty; the command's body
    raises."""
    def injected_fault(*_: object) -> int:
        raise RuntimeError("injected")

    monkeypatch.setattr(cli, "_run", injected_fault)
    monkeypatch.delenv(MODEL_CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    return tmp_path / "xdg" / "nemo-rl-workers", temporary


def _fail(*argv: str) -> str:
    code, out, err = run_cli(*argv)
    assert (code, out) == (EXIT_INTERNAL, "")
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "nemo-rl-workers: internal error (RuntimeError); the traceback is in "), lines
    assert lines[0].endswith("; please report it with that file")
    return lines[0]


def _one_file(folder: Path, line: str) -> None:
    saved = list(folder.glob(SAVED))
    assert len(saved) == 1 and f"the traceback is in {saved[0]}" in line, line
    assert "RuntimeError: injected" in saved[0].read_text(encoding="utf-8")


def test_the_traceback_goes_to_the_users_cache_folder(folders: tuple[Path, Path]) -> None:
    cache, temporary = folders
    line = _fail("check", "x.yaml")
    _one_file(cache, line)
    assert list(temporary.iterdir()) == []


@pytest.mark.parametrize("spelled", [["--cache-dir", "{}"], ["--cache-dir={}"],
                                     ["--cache-d", "{}"]])
def test_the_traceback_goes_to_the_cache_dir_given(
        folders: tuple[Path, Path], tmp_path: Path, spelled: list[str]) -> None:
    cache, temporary = folders
    given = tmp_path / "given" / "made"
    line = _fail("check", "x.yaml", *(s.format(given) for s in spelled))
    _one_file(given, line)
    assert not cache.exists() and list(temporary.iterdir()) == []


def test_a_folder_that_cannot_be_written_falls_back_in_the_same_line(
        folders: tuple[Path, Path], tmp_path: Path) -> None:
    _, temporary = folders
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder\n")
    line = _fail("audit", "--nemo-rl", "x", "--cache-dir", str(blocked))
    _one_file(temporary, line)
    assert f"({blocked} cannot be written: " in line


def test_nowhere_to_write_is_still_one_line(folders: tuple[Path, Path], tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder\n")
    monkeypatch.setattr(tempfile, "tempdir", str(blocked))
    out, err = io.StringIO(), io.StringIO()
    assert cli.main(["check", "x.yaml", "--cache-dir", str(blocked)], out, err) == 70
    lines = err.getvalue().splitlines()
    assert len(lines) == 1 and "the traceback could not be saved (" in lines[0], lines
