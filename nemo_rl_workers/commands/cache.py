"""`--cache-dir DIR` / `--no-cache`: the cache of tree models, audits and static verdicts.

Static verdicts and audit answers live in `.nemo-rl-workers-cache/` of the working folder
by default; tree models in the user's cache folder (the library's defaults,
`cache.folder`). Either is made when its first entry is stored. A `--cache-dir`
that cannot be used (a file, a folder that cannot be created or written) is unusable
input: one line, exit code 2. A default folder failing only costs speed: one warning line
when it exists but cannot be used, none when it cannot be made, and the run goes on
without a cache. An internal error's traceback is written to the same folder
(`report_dir`).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn, TextIO

if TYPE_CHECKING:

    from nemo_rl_workers.cache.store import Store
    from nemo_rl_workers.checks.config_check import ConfigReport
    from nemo_rl_workers.checks.static_kept import KeptVerdicts
    from nemo_rl_workers.tree.checkout import Checkout
    from nemo_rl_workers.tree.revision import Revision


class _CacheDirOnly(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise argparse.ArgumentError(None, message)  # the command's own parser words it


def given_cache_dir(argv: Sequence[str]) -> str | None:
    """The `--cache-dir` a command line gives (as argparse reads it, abbreviations and
    `--cache-dir=DIR` included), or None: for a run that ended before its arguments were
    parsed, or whose arguments do not parse."""
    parser = _CacheDirOnly(add_help=False, exit_on_error=False)
    parser.add_argument("--cache-dir", default=None)
    try:
        known, _ = parser.parse_known_args(list(argv))
    except argparse.ArgumentError:
        return None
    given: str | None = known.cache_dir
    return given


def report_dir(argv: Sequence[str]) -> str:
    """Where a file for the user to report (an internal error's traceback) goes: the
    command line's `--cache-dir`, else the user's cache folder (`model_cache_dir`)."""
    from nemo_rl_workers.cache.folder import model_cache_dir

    return given_cache_dir(argv) or model_cache_dir()


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


def say_cache_notes(reports: Sequence[ConfigReport], err: TextIO) -> None:
    """The lines about cache entries not trusted while the configs were judged, once each."""
    from nemo_rl_workers.errors import one_line

    for note in dict.fromkeys(n for report in reports for n in report.cache_notes):
        print(f"nemo-rl-workers: warning: {one_line(note)}", file=err)


def say_static_notes(cache: KeptVerdicts | None, err: TextIO) -> None:
    """The lines about static-verdict entries not trusted, once each."""
    from nemo_rl_workers.errors import one_line

    if cache is None:
        return
    for note in dict.fromkeys(cache.notes):
        print(f"nemo-rl-workers: warning: {one_line(note)}", file=err)
    cache.notes.clear()
