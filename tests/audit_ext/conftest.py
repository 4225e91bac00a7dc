"""The fixture trees (tests/audit_ext/trees, `.py.txt` so no tool checks them as code),
copied as Python trees; and the corpus's NeMo-RL as a package (`upstream`), skipped where
absent."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.corpus import NEMO_RL

TREES = Path(__file__).resolve().parent / "trees"


@pytest.fixture(scope="session")
def trees(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("trees")
    for source in TREES.rglob("*"):
        if source.is_file():
            target = out / source.relative_to(TREES)
            target = target.with_name(target.name.removesuffix(".txt"))
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
    return out


@pytest.fixture(scope="session")
def upstream() -> Path:
    if not (NEMO_RL / "nemo_rl" / "__init__.py").is_file():
        pytest.skip(f"the NeMo-RL corpus is absent ({NEMO_RL})")
    return NEMO_RL
