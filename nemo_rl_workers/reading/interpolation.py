"""Bounding the cost of `${...}` interpolation before OmegaConf resolves it.

`check_budget` walks the config once and computes, per node, an upper estimate of the
characters it expands to and of the interpolations (references and resolver calls,
nested ones included) that resolving it evaluates: OmegaConf re-resolves a referenced
node each time it is named, so six short lines naming each other twice are 2**6 calls.
A resolver's arguments that name config paths (`${oc.select:a.b,0}`) count as references.
`within_time` bounds the resolution itself by wall time, for what the estimate misses.

Values that `${oc.env:NAME}` reads are remembered (`redact`), so no message the CLI prints
shows them: they are often tokens.
"""

from __future__ import annotations

import re
import signal
import threading
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from typing import Any

from nemo_rl_workers.reading.omegaconf_resolvers import register_resolver
from nemo_rl_workers.reading.recorded_reads import ENVIRON, note_redacted
from nemo_rl_workers.reading.safe_read import ConfigLoadError

MAX_EXPANDED_CHARS = 8 * 1024 * 1024
"""Characters the config may hold once every `${...}` is expanded."""
MAX_INTERPOLATIONS = 20_000
"""Interpolations (references and resolver calls) that resolving the config may evaluate."""
MAX_RESOLVE_SECONDS = 10.0
"""Wall time OmegaConf may spend resolving one config."""
MIN_REDACTED_CHARS = 4
"""Shorter environment values (`1`, `on`) are not redacted: they would garble every line."""

_ENV_VALUES: dict[str, str] = {}  # value -> the variable it came from


def redact(text: str) -> str:
    """`text` with every value read through `${oc.env:...}` so far replaced by a marker."""
    for value, name in _ENV_VALUES.items():
        if value in text:
            text = text.replace(value, f"<redacted ${name}>")
    return text


def _remember_env(args: str) -> None:
    remember_environ(args.split(",", 1)[0].strip().strip("'\""))


def remember_environ(name: str) -> None:
    """Hide the value of $`name` in what is shown from now on (a config read it through
    `${oc.env:...}`, or a kept answer stands for a config that did)."""
    note_redacted(name)
    value = ENVIRON.get(name)
    if value is not None and len(value) >= MIN_REDACTED_CHARS:
        _ENV_VALUES[value] = name


def _interpolations(text: str) -> Iterator[str]:
    """The contents of every `${...}` in `text`, outer and nested ones alike."""
    starts: list[int] = []
    i = 0
    while i < len(text):
        if text.startswith("${", i):
            starts.append(i + 2)
            i += 2
            continue
        if text[i] == "}" and starts:
            yield text[starts.pop() : i]
        i += 1


def _split_args(args: str) -> list[str]:
    """A resolver's arguments: split at commas outside nested `${...}` and brackets."""
    parts: list[str] = []
    depth = 0
    current = ""
    for ch in args:
        if ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return [p.strip() for p in parts]


_LOOKED_UP: object = object()  # `cost`'s node not given: found by its path
_RESOLVER = re.compile(r"\s*([A-Za-z_][\w.]*)\s*:(.*)", re.DOTALL)


def check_budget(data: dict[str, Any], shown: str) -> None:
    """ConfigLoadError when resolving `data` would build too much or evaluate too often.

    Linear in the config's size: each node is measured once (memoized).
    """
    memo: dict[tuple[str, ...], tuple[int, int]] = {}
    active: set[tuple[str, ...]] = set()

    def lookup(path: tuple[str, ...]) -> tuple[bool, object]:
        node: object = data
        for part in path:
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                return False, None
        return True, node

    def target(ref: str, at: tuple[str, ...]) -> tuple[str, ...]:
        dots = len(ref) - len(ref.lstrip("."))
        parts = tuple(p for p in re.split(r"[.\[\]]+", ref[dots:]) if p)
        if dots == 0:
            return parts
        return at[: max(len(at) - dots, 0)] + parts  # `.x` is a sibling, `..x` an uncle

    def refused(path: tuple[str, ...], what: str) -> ConfigLoadError:
        where = ".".join(path) or "the config"
        return ConfigLoadError(shown, f"interpolations in {where} {what}", kind="interpolation")

    def cost(path: tuple[str, ...], node: object = _LOOKED_UP) -> tuple[int, int]:
        """(characters, interpolations evaluated) of the node at `path`, resolved (`node`:
        that node, where the caller holds it: a child is not looked up from the root)."""
        if path in memo:
            return memo[path]
        if path in active:
            return 0, 0  # a cycle; OmegaConf reports it when resolving
        active.add(path)
        if node is _LOOKED_UP:
            _, node = lookup(path)
        chars = work = 0
        if isinstance(node, dict):
            for key, child in node.items():
                # A key that is not a string is not found by its path (as a reference
                # would not find it): measured as missing.
                c, w = cost((*path, str(key)), child if isinstance(key, str) else None)
                chars, work = chars + c + len(str(key)), work + w
        elif isinstance(node, list):
            for i, child in enumerate(node):
                c, w = cost((*path, str(i)), child)
                chars, work = chars + c + 1, work + w
        elif isinstance(node, str):
            chars = len(node)
            for inside in _interpolations(node) if "${" in node else ():
                work += 1
                call = _RESOLVER.fullmatch(inside)
                refs = [inside.strip()] if call is None else _split_args(call.group(2))
                if call is not None and call.group(1) == "oc.env":
                    _remember_env(call.group(2))
                # `oc.select` is memoized (`memoized_select`): its target is evaluated once,
                # when the walk reaches it; each select still copies the target's text.
                selects = call is not None and call.group(1) == SELECT
                for ref in refs:
                    if "${" in ref or not ref:
                        continue  # nested: counted as its own interpolation
                    where = target(ref, path)
                    if lookup(where)[0]:
                        c, w = cost(where)
                        chars, work = chars + c, work + (0 if selects else w)
                if chars > MAX_EXPANDED_CHARS or work > MAX_INTERPOLATIONS:
                    break
        else:
            chars = len(str(node)) if not isinstance(node, int) else 20
        active.discard(path)
        memo[path] = chars, work
        if chars > MAX_EXPANDED_CHARS:
            raise refused(path, f"would expand to over {MAX_EXPANDED_CHARS} characters")
        if work > MAX_INTERPOLATIONS:
            raise refused(
                path, f"would evaluate over {MAX_INTERPOLATIONS} interpolations and resolver calls"
            )
        return chars, work

    cost(())


SELECT = "oc.select"


@contextmanager
def memoized_select() -> Generator[None]:
    """`${oc.select:KEY[,DEFAULT]}` evaluated once per (KEY, DEFAULT) within the block, one
    resolution of one config: OmegaConf evaluates it again at every use, so a chain of
    selects naming each other costs exponential time where one evaluation each is linear.

    The block's config must not change meanwhile (ours is built, resolved and dropped). A
    relative KEY (`.a`) depends on where it is written, so it is remembered per parent node.
    OmegaConf offers no public way to read a registered resolver back; the one in place is
    taken from its registry and put back afterwards.
    """
    from omegaconf.basecontainer import BaseContainer
    from omegaconf.resolvers import oc

    memo: dict[tuple[object, ...], object] = {}
    missing = object()

    def select(key: str, default: Any = missing, *, _parent_: Any) -> Any:  # noqa: ANN401
        args = (key,) if default is missing else (key, default)
        where = id(_parent_) if key.startswith(".") else None
        try:
            memo_key = (where, *args)
            hash(memo_key)
        except TypeError:  # an unhashable default (a list): not remembered
            return oc.select(*args, _parent_=_parent_)
        if memo_key not in memo:
            memo[memo_key] = oc.select(*args, _parent_=_parent_)
        return memo[memo_key]

    registry: dict[str, Any] = BaseContainer._resolvers  # noqa: SLF001 - see above
    previous = registry.get(SELECT)
    register_resolver(SELECT, select, replace=True)
    try:
        yield
    finally:
        if previous is None:
            registry.pop(SELECT, None)
        else:
            registry[SELECT] = previous


class _OutOfTime(BaseException):
    """Raised into the resolution when its time is up; a BaseException so that OmegaConf's
    `except Exception` around resolvers cannot swallow it. Never escapes `within_time`."""


@contextmanager
def within_time(shown: str, seconds: float = MAX_RESOLVE_SECONDS) -> Generator[None]:
    """Bound the wall time of the block with SIGALRM. Only in the main thread and when no
    other interval timer runs: elsewhere the block runs unbounded in time, but still
    within `check_budget`."""
    if (
        threading.current_thread() is not threading.main_thread()
        or not hasattr(signal, "setitimer")
        or signal.getitimer(signal.ITIMER_REAL)[0] > 0  # someone else's timer: leave it be
    ):
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise _OutOfTime

    previous: Callable[..., Any] | int | None = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except _OutOfTime as e:
        raise ConfigLoadError(
            shown, f"interpolations took over {seconds:g} s to resolve; refusing them",
            kind="interpolation",
        ) from e
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
