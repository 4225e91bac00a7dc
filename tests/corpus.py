"""Where the shared corpus of real NeMo-RL trees lies, and how a test asks for one.

The corpus is data beside the repository (`../shared/corpus`: from a worktree under
/work/wt that is /work/wt/shared, from a clone whose parent holds `shared/` the same), read as
text and AST, never imported by the test process. A plain clone has none: a test that needs
a tree asks `corpus_tree(name)` (or the `corpus` fixture), which skips where it is absent.
"""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# The first `shared/corpus` found above the repository (a worktree may sit one folder deeper).
CORPORA = next((p for p in (REPO.parent / "shared" / "corpus",
                            REPO.parent.parent / "shared" / "corpus") if p.is_dir()),
               REPO.parent / "shared" / "corpus")
NEMO_RL = CORPORA / "nemo-rl"  # upstream 2026-08: examples/ entry scripts, tests/test_suites/
NEMO_RL_2025_09 = CORPORA / "nemo-rl-2025-09"
# By the dates the tests name them.
TREES = {"2026-08": NEMO_RL, "2025-09": NEMO_RL_2025_09}


def corpus_tree(name: str = "nemo-rl") -> Path:
    """The corpus tree `name` (a folder of CORPORA, or a date of TREES); the calling test
    skips where it is absent (no `nemo_rl` package in it)."""
    path = TREES.get(name, CORPORA / name)
    if not (path / "nemo_rl").is_dir():
        pytest.skip(f"corpus absent: {path}")
    return path
