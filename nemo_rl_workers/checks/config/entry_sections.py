"""The config blocks an entry builds a driver on that no model section covers.

The model sections (`policy`, `teacher`, `value`, `env.reward_model`, and the policy's
`generation`) are judged wherever a config has them. An entry's `setup` may build a driver
on another block: the evaluation entry builds its generation driver on a top-level
`generation:` with no policy (`Revision.entry_builds`). Such a block is judged too, as a
section of its driver's role, when the config is that entry's: it has every top-level key
the entry's config requires (`Revision.setups`), and no other entry fits it as closely; a
generation driver's block names that driver's backend.
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator, Iterator, Mapping, Sequence
from contextvars import ContextVar
from typing import Any

from nemo_rl_workers.model.sections import as_mapping
from nemo_rl_workers.tree.knowledge import SECTION_ROLES
from nemo_rl_workers.tree.revision import Revision, serves_backend

GENERATION = "generation"


# The algorithm module whose `setup` the entry script of the run being judged calls
# (`launch_entry`): while set, it is the entry of every config judged, not the shape's.
_CHOSEN: ContextVar[str | None] = ContextVar("nemo_rl_workers_entry_algorithm", default=None)


@contextlib.contextmanager
def entry_chosen(algorithm: str | None) -> Generator[None]:
    """Judge the config as run by an entry script that calls `algorithm`'s `setup`."""
    token = _CHOSEN.set(algorithm)
    try:
        yield
    finally:
        _CHOSEN.reset(token)


def chosen_algorithm() -> str | None:
    """The algorithm the run's entry script calls, where one was chosen."""
    return _CHOSEN.get()


def entry_of(config: Mapping[str, Any], revision: Revision) -> str | None:
    """The entry module whose config `config` is: the one the run's entry script calls
    (`entry_chosen`), else the one whose required top-level keys it has, the most
    specific; None when none fits, or two fit alike."""
    chosen = _CHOSEN.get()
    if chosen is not None:
        return chosen
    fits = fitting_entries(config, revision.setups)
    if not fits or len(fits) > 1 and fits[0][0] == fits[1][0]:
        return None
    return fits[0][1]


def fitting_entries(config: Mapping[str, Any], setups: Mapping[str, Sequence[str] | None]
                    ) -> list[tuple[int, str]]:
    """(how many keys it requires, entry module) of each entry whose required top-level
    keys the config gives, the most specific first. A key set to null is not given: a
    recipe that writes `teacher: null` over its parent's block is not distillation's."""
    given = {key for key, value in config.items() if value is not None}
    return sorted(((len(needs), name) for name, needs in setups.items()
                   if needs is not None and set(needs) <= given), reverse=True)


def entry_sections(config: Mapping[str, Any], revision: Revision, judged: set[str]
                   ) -> Iterator[tuple[str, Mapping[str, Any], str]]:
    """(path, section, kind) of each block the config's entry builds a driver on that is
    not in `judged`, with the kind its driver's role judges it as."""
    entry = entry_of(config, revision)
    if entry is None:
        return
    seen = set(judged)
    for build in revision.entry_builds:
        if build.module != entry or build.section in seen:
            continue
        role = revision.drivers.get(build.driver)
        kind = GENERATION if role == GENERATION else next(
            (k for k, roles in SECTION_ROLES.items() if roles == (role,)), None)
        section = at_path(config, build.section)
        if kind is None or section is None or kind == GENERATION and not _selects(
                section, build.driver):
            continue
        seen.add(build.section)
        yield build.section, section, kind


def _selects(section: Mapping[str, Any], driver: str) -> bool:
    """Whether a block is the generation driver's own: its `backend` names that driver (a
    build's other config arguments, `tokenizer_config=policy_config["tokenizer"]`, are
    blocks the driver reads, not the one it starts workers from)."""
    backend = section.get("backend")
    return isinstance(backend, str) and serves_backend(driver, backend)


def at_path(config: Mapping[str, Any], path: str) -> Mapping[str, Any] | None:
    """The block at a dotted path of the config, None where it is not a mapping."""
    node: Mapping[str, Any] | None = config
    for key in path.split("."):
        node = as_mapping(node.get(key)) if node is not None else None
    return node
