"""Where the cache lives without `--cache-dir`: the library's defaults, read by every
command and by the guard alike.

Static verdicts and audit answers live in `.nemo-rl-workers-cache/` of the working folder
(`DEFAULT_CACHE_DIR`); tree models (which every command reads, and which must not leave
files in the folder a pre-commit hook runs in) in the user's cache folder
(`model_cache_dir`).
"""

from __future__ import annotations

import os

DEFAULT_CACHE_DIR = ".nemo-rl-workers-cache"
MODEL_CACHE_ENV = "NEMO_RL_WORKERS_CACHE_DIR"


def model_cache_dir() -> str:
    """Where tree models are kept without `--cache-dir`: `$NEMO_RL_WORKERS_CACHE_DIR`, else
    `$XDG_CACHE_HOME/nemo-rl-workers`, else `~/.cache/nemo-rl-workers`."""
    given = os.environ.get(MODEL_CACHE_ENV)
    if given:
        return given
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "nemo-rl-workers")
