"""One mypy run and one pyrefly run over every static case, shared by the tests here."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.static.checkers import BIN, StaticRun, check_copies

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases"
DIFFERENTIAL = HERE / "differential_cases.py"


def case_files() -> list[Path]:
    return sorted(p for p in CASES.glob("*.py") if p.name != "__init__.py")


@pytest.fixture(scope="session")
def static_run(tmp_path_factory: pytest.TempPathFactory) -> StaticRun:
    missing = [tool for tool in ("mypy", "pyrefly") if not (BIN / tool).exists()]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed next to {BIN / 'python'}")
    return check_copies([*case_files(), DIFFERENTIAL], tmp_path_factory.mktemp("static"))
