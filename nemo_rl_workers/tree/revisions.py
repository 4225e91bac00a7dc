"""The revisions a command judges against, through the cache its arguments ask for
(`--cache-dir DIR`, `--no-cache`; tree models live in the user's cache folder by default,
`cache.folder`): each tree read (or loaded) once per run, a line about a cache entry said
once. Below the commands and the guard, which both judge recipes against them.

A `--cache-dir` that cannot be used is unusable input (one line, exit code 2); a default
folder failing only costs speed (one warning line when it exists but cannot be used, none
when it cannot be made) and the run goes on without a cache.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from nemo_rl_workers.cache.store import Store
    from nemo_rl_workers.tree.checkout import Checkout
    from nemo_rl_workers.tree.revision import Revision


def open_cache(args: argparse.Namespace, err: TextIO, *,
               default: str | None = None) -> tuple[bool, Store | None]:
    """(usable, cache): usable is False after one line on `err` for a bad `--cache-dir`.
    `default`: the folder used without `--cache-dir` (the working folder's by default)."""
    from nemo_rl_workers.cache.folder import DEFAULT_CACHE_DIR
    from nemo_rl_workers.cache.store import CacheDirError, Store

    if getattr(args, "no_cache", False):
        return True, None
    given: str | None = getattr(args, "cache_dir", None)
    try:
        if given is not None:
            return True, Store.open(given)
        return True, Store.open(default or DEFAULT_CACHE_DIR, create=False)
    except CacheDirError as bad:
        if given is not None:
            print(f"nemo-rl-workers: --cache-dir: {bad}", file=err)
            return False, None
        print(f"nemo-rl-workers: warning: {bad}; running without the cache", file=err)
        return True, None


class Revisions:
    """The revisions one command judges against, through the cache its arguments ask for:
    each tree read (or loaded) once per run, a line about a cache entry said once.

    Call it with a checkout: the revision, or None after one line for a bad `--cache-dir`;
    `UnusableCheckout` passes through (the caller words it). `say_notes` prints the cache's
    lines once the command has its revisions."""

    def __init__(self, args: argparse.Namespace, err: TextIO) -> None:
        self.args = args
        self.err = err
        self.notes: list[str] = []
        self._found: dict[Checkout | None, Revision] = {}

    def __call__(self, checkout: Checkout | None) -> Revision | None:
        from nemo_rl_workers.cache.folder import model_cache_dir
        from nemo_rl_workers.tree.stage import revision_of

        if checkout in self._found:
            return self._found[checkout]
        usable, cache = open_cache(self.args, self.err, default=model_cache_dir())
        if not usable:
            return None
        revision = revision_of(checkout, cache, self.notes)
        self._found[checkout] = revision
        return revision

    def say_notes(self) -> None:
        for note in self.notes:
            print(f"nemo-rl-workers: warning: {note}", file=self.err)
        self.notes.clear()
