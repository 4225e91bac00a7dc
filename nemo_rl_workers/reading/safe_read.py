"""The one guarded reader for every YAML file the project opens.

Configs, their `defaults:` parents (for loading and for `migrate`) and `quant_cfg`
recipes are untrusted input. Each goes through `read_text` and `parse_yaml`, which
refuse, with one ConfigLoadError line naming the file and after bounded work:
anything but a regular file (a FIFO is opened without blocking, so it cannot hang
the reader), a file over MAX_FILE_BYTES, a name the OS refuses (too long, a symlink
loop), text that is not UTF-8, YAML nested deeper than MAX_YAML_DEPTH, aliases that
add over MAX_YAML_NODES nodes when expanded (or recurse), and numbers Python will not
convert.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Literal

import yaml

from nemo_rl_workers.errors import one_line
from nemo_rl_workers.reading.guarded_file import FileRefused, os_reason, read_regular
from nemo_rl_workers.reading.omegaconf_yaml import OmegaConfYamlLoader
from nemo_rl_workers.reading.recorded_reads import kind_of

MAX_FILE_BYTES = 8 * 1024 * 1024
"""A config file larger than this is rejected before it is read."""
MAX_YAML_NODES = 100_000
"""YAML nodes that aliases may add to a file by expanding (what is written plainly is bounded
by MAX_FILE_BYTES, however many nodes it holds)."""
MAX_YAML_DEPTH = 100
"""How deep mappings and sequences may nest in one file (real configs stay under 10)."""

LoadErrorKind = Literal[
    "missing-file",  # the config file itself does not exist
    "missing-default",  # a `defaults:` entry names a file that does not exist
    "not-a-file",  # a directory, device or pipe
    "unreadable",  # the operating system refused to read it (or its name)
    "too-large",  # over MAX_FILE_BYTES, or YAML aliases expanding past MAX_YAML_NODES
    "not-utf8",
    "yaml",  # YAML syntax, duplicate keys, alias bombs, too deep, huge numbers
    "not-mapping",  # the top level is not a mapping
    "defaults",  # a malformed `defaults:` value or `_override_` marker
    "cycle",
    "outside-root",
    "too-deep",  # MAX_DEFAULTS_DEPTH or MAX_FILES exceeded
    "override",  # a malformed or inapplicable command-line override
    "interpolation",  # a `${...}` that does not resolve, or expands too far or too long
]


class ConfigLoadError(ValueError):
    """A config could not be loaded. `str()` is one line: `<file>: <reason>`."""

    def __init__(self, file: str | None, reason: str, *, kind: LoadErrorKind) -> None:
        self.file: str | None = file
        # One line whatever the underlying library said: the CLI prints it as is.
        self.reason: str = " ".join(reason.split())
        self.kind: LoadErrorKind = kind
        super().__init__(str(self))

    def __str__(self) -> str:
        text = f"{self.file}: {self.reason}" if self.file is not None else self.reason
        return one_line(text)  # a file name may hold a newline or an escape sequence


def resolved(path: Path, shown: str) -> Path:
    """`path.resolve()`, with a symlink loop or an impossible name as one line."""
    try:
        return path.resolve()
    except RuntimeError as e:  # Python < 3.13 reports a symlink loop so
        raise ConfigLoadError(shown, "cannot be read: its path is a symlink loop",
                              kind="unreadable") from e
    except OSError as e:
        raise ConfigLoadError(shown, os_reason(e), kind="unreadable") from e


def exists(path: Path, shown: str) -> bool:
    """Whether `path` names something, with unusable names (too long, looping) refused."""
    kind_of(path)  # whether it is there is an input of what is loaded
    try:
        os.stat(path)
    except FileNotFoundError:
        return False
    except (OSError, ValueError) as e:
        if isinstance(e, OSError) and e.errno == errno.ENOTDIR:
            return False
        reason = os_reason(e) if isinstance(e, OSError) else "cannot be read: a bad file name"
        raise ConfigLoadError(shown, reason, kind="unreadable") from e
    return True


def read_bytes(path: Path, shown: str) -> bytes:
    """The bytes of a regular file of at most MAX_FILE_BYTES, or ConfigLoadError."""
    try:
        return read_regular(path, limit=MAX_FILE_BYTES, what="a config file")
    except FileRefused as e:
        raise ConfigLoadError(shown, e.reason, kind=e.kind) from e


def decode(raw: bytes, shown: str) -> str:
    """UTF-8 text (a byte-order mark kept), or ConfigLoadError naming the first bad byte."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigLoadError(
            shown,
            f"is not UTF-8 text (byte 0x{raw[e.start]:02x} at offset {e.start})",
            kind="not-utf8",
        ) from e


def read_text(path: Path, shown: str) -> str:
    """`read_bytes` then `decode`, without a byte-order mark."""
    return decode(read_bytes(path, shown), shown).removeprefix("\ufeff")


def yaml_reason(e: yaml.YAMLError) -> str:
    if isinstance(e, yaml.MarkedYAMLError):
        mark = e.problem_mark or e.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        context = f"{e.context}; " if e.context else ""
        return f"invalid YAML{where}: {context}{e.problem or ''}"
    return f"invalid YAML: {e}"


class _TooDeep(Exception):
    """Raised by the composer when nesting passes MAX_YAML_DEPTH; never escapes this module."""


def _check_depth(node: yaml.Node) -> None:
    """Iteratively (the constructor and every later walk recurse once per level)."""
    todo: list[tuple[yaml.Node, int]] = [(node, 1)]
    seen: set[int] = set()
    while todo:
        current, depth = todo.pop()
        if depth > MAX_YAML_DEPTH:
            raise _TooDeep
        if id(current) in seen:  # an alias: its anchor's subtree is walked once
            continue
        seen.add(id(current))
        if isinstance(current, yaml.MappingNode):
            for key, value in current.value:
                todo.append((key, depth + 1))
                todo.append((value, depth + 1))
        elif isinstance(current, yaml.SequenceNode):
            todo.extend((item, depth + 1) for item in current.value)


class _AliasBomb(Exception):
    """Raised when aliases add too many nodes, or refer to themselves; never escapes."""


def _check_aliases(node: yaml.Node, max_added: int) -> None:
    """Refuse aliases that would add over `max_added` nodes when expanded, or recurse.

    Counts what the aliases add, not the nodes written: the composed tree shares one node
    object per anchor, so each further reference to it adds its subtree's size. One
    iterative walk, each node's subtree size computed once.
    """
    size: dict[int, int] = {}
    active: set[int] = set()
    written = 0
    todo: list[tuple[yaml.Node, list[yaml.Node] | None]] = [(node, None)]
    while todo:
        current, done = todo.pop()
        key = id(current)
        if done is not None:  # its children are sized: size it
            active.discard(key)
            size[key] = 1 + sum(size[id(c)] for c in done)
            continue
        if key in size:
            continue
        children = _children(current)
        if not children:
            size[key] = 1
            written += 1
            continue
        active.add(key)
        written += 1
        todo.append((current, children))
        for child in children:
            if id(child) in active:
                raise _AliasBomb  # an alias inside its own anchor
            if id(child) not in size:
                todo.append((child, None))
    if size[id(node)] - written > max_added:
        raise _AliasBomb


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def parse_yaml(
    text: str, shown: str, *, max_nodes: int = MAX_YAML_NODES
) -> tuple[yaml.Node | None, object]:
    """The node tree and data of one YAML document, after every limit of this module."""
    # The dialect OmegaConf.load reads; `_check_aliases` counts what aliases add (OmegaConf
    # 2.4's own count takes every node, aliases or not: 60,000 plain keys would be refused).
    loader = OmegaConfYamlLoader(text)
    bomb = ConfigLoadError(
        shown,
        f"YAML aliases expand past {max_nodes} nodes more than the file writes, or refer to "
        "themselves (a 'billion laughs' file?); refusing to expand them",
        kind="too-large",
    )
    try:
        node = loader.get_single_node()
        if node is not None:
            _check_depth(node)
            if "*" in text:  # no alias without one: nothing can expand
                _check_aliases(node, max_nodes)
        data = loader.construct_document(node) if node is not None else None
    except _TooDeep as e:
        raise ConfigLoadError(
            shown, f"is nested more than {MAX_YAML_DEPTH} levels deep", kind="yaml"
        ) from e
    except _AliasBomb as e:
        raise bomb from e
    except yaml.YAMLError as e:
        raise ConfigLoadError(shown, yaml_reason(e), kind="yaml") from e
    except RecursionError as e:
        raise ConfigLoadError(shown, "is nested too deeply", kind="yaml") from e
    except ValueError as e:  # int() past Python's digit limit, a date out of range
        raise ConfigLoadError(shown, f"holds a value Python cannot read: {e}"[:300],
                              kind="yaml") from e
    finally:
        loader.dispose()
    return node, data
