"""Misspelled worker-selection keys (rule `key`).

A misspelled `worker_extension_cls_fqn` is not an error anywhere else: the section
simply runs its default worker, and the extension never does. Worker sections carry
many other keys, so only a key that is a near-typo of one of the keys below (and is
not itself one of them) is reported, with the right key.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from nemo_rl_workers.errors import Problem
from nemo_rl_workers.model.sections import as_mapping, worker_sections
from nemo_rl_workers.model.suggest import closest

# Per place below a worker section ('' is the section itself): the keys that pick the
# worker class, whose misspelling would silently change which class runs.
SELECTION_KEYS: Mapping[str, tuple[str, ...]] = {
    "": ("worker_extension_cls_fqn", "quant_cfg", "megatron_cfg", "automodel_cfg",
         "generation"),
    "generation": ("worker_extension_cls_fqn", "quant_cfg", "backend", "vllm_cfg"),
    "generation.vllm_cfg": ("async_engine",),
    "megatron_cfg": ("enabled",),
    "automodel_cfg": ("enabled",),
}


def misspelled_key_problems(
    config: Mapping[str, Any], *, sections: Iterable[tuple[str, object]] | None = None
) -> list[Problem]:
    """One problem per near-typo of a selection key, in every worker section."""
    found: list[Problem] = []
    for path, raw in worker_sections(config) if sections is None else sections:
        section = as_mapping(raw)
        if section is not None:
            found.extend(_section_typos(section, path))
    return found


def generation_key_problems(section: Mapping[str, Any], path: str) -> list[Problem]:
    """The same for a generation section given on its own (`VllmGeneration`)."""
    below = {place.removeprefix("generation").lstrip("."): keys
             for place, keys in SELECTION_KEYS.items() if place.startswith("generation")}
    return list(_section_typos(section, path, below))


@functools.lru_cache(maxsize=4096)
def _near_typo(key: str, keys: tuple[str, ...]) -> tuple[str, ...]:
    """The selection keys `key` is a near-typo of (asked once per key: every config of a
    tree repeats the same few dozen)."""
    return tuple(closest(key, keys))


def _section_typos(
    section: Mapping[str, Any], path: str, places: Mapping[str, tuple[str, ...]] = SELECTION_KEYS
) -> Iterator[Problem]:
    for place, keys in places.items():
        block: object = section
        for part in place.split(".") if place else ():
            mapping = as_mapping(block)
            block = mapping.get(part) if mapping is not None else None
        mapping = as_mapping(block)
        if mapping is None:
            continue
        where = f"{path}.{place}" if place else path
        for key in mapping:
            if key in keys:
                continue
            match = _near_typo(key, keys)
            if match:
                right = f"{where}.{match[0]}"
                yield Problem(
                    path=f"{where}.{key}",
                    expected=right,
                    given=f"{where}.{key}",
                    message=f"{where}.{key} is not a key this section reads, so it would be "
                    f"silently ignored; did you mean {right}?",
                    rule="key",
                )
