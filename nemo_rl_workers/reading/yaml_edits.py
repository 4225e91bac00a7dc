"""Editing a YAML text in place at the spans of its nodes (for `migrate`).

ruamel.yaml's round-trip composer gives each node's character offsets; an edit replaces
exactly a span, so everything else (comments, quoting, indentation, `False`, `~`, trailing
spaces) stays byte-for-byte, where a re-dump would normalise it all. The data is read by the
guarded loader (`safe_read.parse_yaml`) first, so a hostile file is refused before ruamel.yaml
or any walk sees it. A layout these edits cannot handle safely is a `MigrationError`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from nemo_rl_workers.reading.safe_read import ConfigLoadError, parse_yaml


class MigrationError(ValueError):
    """A config cannot be migrated (not YAML, conflicting keys, a layout not safely editable)."""


# ------------------------------------------------------------------ the YAML node tree


@dataclass(frozen=True)
class Node:
    """Where a YAML node lies in the text (character offsets) and how it is written."""

    start: int
    end: int
    flow: bool = False
    tag: str = ""
    raw: str = ""  # a scalar's value as written (unquoted)


class Map(dict[str, object]):
    """A YAML mapping: string keys to Map, Seq or Node, with the spans of keys and itself."""

    def __init__(self, node: Node) -> None:
        super().__init__()
        self.node = node
        self.keys_at: dict[str, Node] = {}


class Seq(list[object]):
    """A YAML sequence of Map, Seq or Node."""

    def __init__(self, node: Node) -> None:
        super().__init__()
        self.node = node


def _span(node: Any) -> Node:
    # ruamel.yaml is untyped: its nodes stay inside this function and _tree.
    return Node(
        start=int(node.start_mark.index),
        end=int(node.end_mark.index),
        flow=bool(getattr(node, "flow_style", False)),
        tag=str(node.tag),
        raw=node.value if isinstance(node.value, str) else "",
    )


def _tree(node: Any) -> object:
    from ruamel.yaml.nodes import MappingNode, SequenceNode

    if isinstance(node, MappingNode):
        mapping = Map(_span(node))
        for key_node, value_node in node.value:
            key = key_node.value
            if isinstance(key, str) and key in mapping and key != "<<":
                line = int(key_node.start_mark.line) + 1
                raise MigrationError(f"invalid YAML: duplicate key {key!r} on line {line}")
            if isinstance(key, str):
                mapping[key] = _tree(value_node)
                mapping.keys_at[key] = _span(key_node)
        return mapping
    if isinstance(node, SequenceNode):
        sequence = Seq(_span(node))
        sequence.extend(_tree(item) for item in node.value)
        return sequence
    return _span(node)


def _one_line(error: Exception) -> str:
    return " ".join(str(error).split()) or type(error).__name__


def load_data(text: str) -> object:
    """The data of a YAML text, read as the loader reads it, within the same guards
    (depth, alias expansion, number sizes): a hostile file is refused before ruamel.yaml
    or any walk over the data sees it."""
    try:
        return parse_yaml(text, "")[1]
    except ConfigLoadError as e:
        raise MigrationError(e.reason) from e


def parse_spans(text: str) -> tuple[Map | None, object]:
    """The node tree (None for an empty document) and the loaded data.

    Spans come from ruamel.yaml's round-trip composer, the data from `_load`.
    """
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    data = load_data(text)
    try:
        root = YAML(typ="rt").compose(text)
    except (YAMLError, ValueError, RecursionError) as e:
        raise MigrationError(f"invalid YAML: {_one_line(e)}") from e
    if root is None:
        return None, data
    tree = _tree(root)
    if not isinstance(tree, Map):
        raise MigrationError("the top level must be a mapping of keys to values")
    return tree, data


def plain(value: object) -> object:
    """Round-trip data as plain dicts, lists and scalars, for comparisons."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


# ------------------------------------------------------------------------ text editing


@dataclass(frozen=True)
class Edit:
    start: int
    end: int
    text: str


def line_start(text: str, index: int) -> int:
    return text.rfind("\n", 0, index) + 1


def line_end(text: str, index: int) -> int:
    """The start of the line after the one holding `index` (it may already be one)."""
    if index > 0 and text[index - 1] == "\n":
        return index
    newline = text.find("\n", index)
    return len(text) if newline < 0 else newline + 1


def alone_on_line(text: str, index: int) -> bool:
    return text[line_start(text, index) : index].strip() == ""


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    ordered = sorted(set(edits), key=lambda e: (e.start, e.end))
    for before, after in zip(ordered, ordered[1:], strict=False):
        if after.start < before.end:
            raise MigrationError("overlapping edits; migrate this file by hand")
    for edit in reversed(ordered):
        text = text[: edit.start] + edit.text + text[edit.end :]
    return text


def after_colon(text: str, key: Node) -> int:
    colon = text.find(":", key.end)
    if colon < 0:
        raise MigrationError("a key without ':'; migrate this file by hand")
    return colon + 1


def drop_entry(text: str, mapping: Map, key: str) -> list[Edit]:
    """Edits that remove `key` and its value from `mapping`."""
    keys = list(mapping)
    index = keys.index(key)
    at = mapping.keys_at[key]
    value = node_of(mapping[key])
    if not mapping.node.flow and alone_on_line(text, at.start):
        return [Edit(line_start(text, at.start), line_end(text, value.end), "")]
    if index + 1 < len(keys):
        return [Edit(at.start, mapping.keys_at[keys[index + 1]].start, "")]
    if index > 0:
        return [Edit(node_of(mapping[keys[index - 1]]).end, value.end, "")]
    return [Edit(at.start, value.end, "")]


def node_of(value: object) -> Node:
    if isinstance(value, (Map, Seq)):
        return value.node
    assert isinstance(value, Node)
    return value


def newline_of(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"
