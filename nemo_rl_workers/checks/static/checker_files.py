"""The files a type checker reads on its own in the folders it is told to search: its
config files (pyrefly reads the `pyproject.toml` of a `--search-path` root). They come
from the tree judged, so they are untrusted: each is read first through the guarded
reader, and a FIFO, a device or a huge file there stops the run with one line instead of
hanging the checker (`verify --static --nemo-rl TREE` with the tree's `pyproject.toml` a
FIFO waited forever)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from nemo_rl_workers.errors import one_line
from nemo_rl_workers.reading.guarded_file import FileRefused, read_regular

CONFIG_NAMES = ("pyproject.toml", "pyrefly.toml", "mypy.ini", ".mypy.ini", "setup.cfg")
"""What mypy or pyrefly may read in a folder it searches."""
MAX_CONFIG_BYTES = 1 << 20
"""A checker's config file larger than this is refused (upstream's pyproject is ~20 KB)."""


def refused_config(roots: Iterable[Path]) -> str | None:
    """Why the checker must not run on these search roots (a config file there the
    guarded reader refuses), as one line; None when every one is a readable file."""
    for root in roots:
        for name in CONFIG_NAMES:
            path = root / name
            if not os.path.lexists(path):
                continue
            try:
                read_regular(path, limit=MAX_CONFIG_BYTES, what="a checker's config file")
            except FileRefused as refused:
                return (f"{one_line(str(path))} {refused.reason}: the type checker would read "
                        "it; not run")
    return None
