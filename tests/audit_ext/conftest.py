"""The fixture trees (tests/audit_ext/trees, `.py.txt` so no tool checks them as code),
copied as Python trees; and the corpus, skipped where absent."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

TREES = Path(__file__).resolve().parent / "trees"
CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "nemo-rl"


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
def corpus() -> Path:
    if not (CORPUS / "nemo_rl" / "__init__.py").is_file():
        pytest.skip(f"the NeMo-RL corpus is absent ({CORPUS})")
    return CORPUS
