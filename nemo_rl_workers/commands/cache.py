"""`--cache-dir DIR` / `--no-cache` of `check --static` and `verify --static`.

The cache (`static_cache`) lives in `.nemo-rl-workers-cache/` of the working folder by
default, made when the first verdict is stored. A `--cache-dir` that cannot be used (a
file, a folder that cannot be created or written) is unusable input: one line, exit code
2. The default folder failing only costs speed: one warning line when it exists but cannot
be used, none when it cannot be made, and the run goes on without a cache.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from nemo_rl_workers.checks.static_cache import StaticCache


def open_cache(args: argparse.Namespace, err: TextIO) -> tuple[bool, StaticCache | None]:
    """(usable, cache): usable is False after one line on `err` for a bad `--cache-dir`."""
    from nemo_rl_workers.checks.static_cache import DEFAULT_CACHE_DIR, CacheDirError, StaticCache

    if getattr(args, "no_cache", False):
        return True, None
    given: str | None = getattr(args, "cache_dir", None)
    try:
        if given is not None:
            return True, StaticCache.open(given)
        return True, StaticCache.open(DEFAULT_CACHE_DIR, create=False)
    except CacheDirError as bad:
        if given is not None:
            print(f"nemo-rl-workers: --cache-dir: {bad}", file=err)
            return False, None
        print(f"nemo-rl-workers: warning: {bad}; running without the cache", file=err)
        return True, None
