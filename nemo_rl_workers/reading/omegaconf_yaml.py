"""The YAML dialect OmegaConf reads, built on PyYAML's public API alone.

NeMo-RL loads configs with `OmegaConf.load`, whose loader is PyYAML's safe loader with three
changes: a duplicate key in one mapping is an error, floats are read as YAML 1.2 writes them
(`1e-5` is a float, not a string), timestamps stay strings; it also reads `pathlib.Path`
tags. OmegaConf keeps that loader in a private module that moved between releases
(`omegaconf._utils` in 2.3, which NeMo-RL locks; `omegaconf._yaml` in 2.4), so the tool
builds the same dialect itself rather than importing either (tests/config/test_yaml_dialect.py
holds it to `OmegaConf.create` on every corpus config and on the dialect's edge cases, under
whichever OmegaConf is installed).
"""

from __future__ import annotations

import pathlib
import re
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:  # the two share one API; the checkers see the pure-Python one
    _SafeBase = yaml.SafeLoader
else:  # libyaml's parser where PyYAML was built with it, as OmegaConf 2.4 takes
    _SafeBase = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_FLOAT = re.compile(
    r"""^(?:
     [-+]?[0-9]+(?:_[0-9]+)*\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?[0-9]+(?:_[0-9]+)*(?:[eE][-+]?[0-9]+)
    |\.[0-9]+(?:_[0-9]+)*(?:[eE][-+][0-9]+)?
    |[-+]?[0-9]+(?:_[0-9]+)*(?::[0-5]?[0-9])+\.[0-9_]*
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$""",
    re.X,
)
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_PLAIN_KEY = yaml.resolver.BaseResolver.DEFAULT_SCALAR_TAG


class OmegaConfYamlLoader(_SafeBase):
    """PyYAML's safe loader reading what `OmegaConf.load` reads, the same way."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        # Written plain keys only: a merge (`<<: *base`, its own tag) brings in keys that the
        # mapping may override.
        keys: set[str] = set()
        for key_node, _ in node.value:
            if key_node.tag != _PLAIN_KEY:
                continue
            if key_node.value in keys:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    f"found duplicate key {key_node.value}",
                    key_node.start_mark,
                )
            keys.add(key_node.value)
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return mapping


def _path(loader: OmegaConfYamlLoader, node: yaml.Node) -> pathlib.Path:
    parts = loader.construct_sequence(node) if isinstance(node, yaml.SequenceNode) else None
    if parts is None or not all(isinstance(p, str) for p in parts):
        raise yaml.constructor.ConstructorError(
            None, None, "a pathlib.Path tag takes a sequence of strings", node.start_mark)
    return pathlib.Path(*parts)


OmegaConfYamlLoader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT,
                                          list("-+0123456789."))
OmegaConfYamlLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP]
    for first, resolvers in OmegaConfYamlLoader.yaml_implicit_resolvers.items()
}
# WindowsPath, which OmegaConf also reads, cannot be made on the POSIX systems NeMo-RL runs on.
for _kind in ("Path", "PosixPath"):
    OmegaConfYamlLoader.add_constructor(
        f"tag:yaml.org,2002:python/object/apply:pathlib.{_kind}", _path)
