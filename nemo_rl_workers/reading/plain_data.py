"""Copying a loaded config: YAML's data (dicts, lists, immutable scalars) copied by value.

Every walk of the tree's code on a config edits its own copy (`master_config["x"] = y` in
`setup`), once per walk per config; `copy.deepcopy` spends most of that time on its memo,
which data loaded the way NeMo-RL loads it (OmegaConf's containers, no shared nodes) never
needs. Anything else keeps deepcopy's meaning.
"""

from __future__ import annotations

import copy
from typing import Any

_IMMUTABLE = (str, int, float, bool, type(None))


def plain_copy(node: object) -> Any:
    """A deep copy of YAML data, without deepcopy's memo; other objects are deep-copied."""
    kind = type(node)
    if isinstance(node, dict) and kind is dict:
        return {key: plain_copy(value) for key, value in node.items()}
    if isinstance(node, list) and kind is list:
        return [plain_copy(item) for item in node]
    if kind in _IMMUTABLE:
        return node
    return copy.deepcopy(node)
