"""Rewriting outdated NeMo-RL configs to the current schema (`nemo-rl-workers migrate`).

What changes, in `policy`, `teacher`, each `teachers[i]`, `value` and `env.reward_model`
(the sections upstream's outdated-config check visits):
- `dtensor_cfg` is renamed to `automodel_cfg` in place (same position, contents unchanged);
- `_v2` inside that block is dropped;
- with `explicit_workers`, a `worker_extension_cls_fqn` that `quant_cfg` used to imply (rule R3)
  is written out, for the policy section and its vLLM `generation` section.

Edits are applied to the original text at the spans ruamel.yaml's round-trip composer reports,
so everything else (comments, quoting, indentation, `False`, `~`, trailing spaces) stays
byte-for-byte; a re-dump would normalise all of that. Each rewrite is then re-parsed and
compared with the same change applied to the loaded data, so a layout the editor gets wrong is
reported instead of written. A file with nothing to migrate is never rewritten.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import stat
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NoReturn, TextIO

from nemo_rl.config.safe_read import ConfigLoadError, decode, parse_yaml, read_bytes
from nemo_rl.config.sections import (
    MODEL_SECTIONS,
    as_mapping,
    model_sections,
    quant_cfg_of,
    worker_sections,
)
from nemo_rl.errors import WorkerConfigError, one_line
from nemo_rl.workers.registry import WorkerRegistry, default_registry
from nemo_rl.workers.resolver import FIELD, Resolution, resolve_generation, resolve_policy

RENAMED_BLOCKS: Mapping[str, str] = {"dtensor_cfg": "automodel_cfg"}
"""Old block name -> current name, inside a worker section."""
DROPPED_KEYS: Mapping[str, tuple[str, ...]] = {"automodel_cfg": ("_v2",)}
"""Current block name -> keys dropped inside it (also found under the block's old name)."""
CONFIG_SUFFIXES = (".yaml", ".yml")
"""Files picked up when a folder is given."""

Status = Literal["changed", "unchanged", "error"]
Parts = tuple[str | int, ...]
"""A config path as keys and list indices: ("teachers", 1, "automodel_cfg")."""


class MigrationError(ValueError):
    """A config cannot be migrated (not YAML, conflicting keys, a layout not safely editable)."""


# ------------------------------------------------------------------ the YAML node tree


@dataclass(frozen=True)
class _Node:
    """Where a YAML node lies in the text (character offsets) and how it is written."""

    start: int
    end: int
    flow: bool = False
    tag: str = ""
    raw: str = ""  # a scalar's value as written (unquoted)


class _Map(dict[str, object]):
    """A YAML mapping: string keys to _Map, _Seq or _Node, with the spans of keys and itself."""

    def __init__(self, node: _Node) -> None:
        super().__init__()
        self.node = node
        self.keys_at: dict[str, _Node] = {}


class _Seq(list[object]):
    """A YAML sequence of _Map, _Seq or _Node."""

    def __init__(self, node: _Node) -> None:
        super().__init__()
        self.node = node


def _span(node: Any) -> _Node:
    # ruamel.yaml is untyped: its nodes stay inside this function and _tree.
    return _Node(
        start=int(node.start_mark.index),
        end=int(node.end_mark.index),
        flow=bool(getattr(node, "flow_style", False)),
        tag=str(node.tag),
        raw=node.value if isinstance(node.value, str) else "",
    )


def _tree(node: Any) -> object:
    from ruamel.yaml.nodes import MappingNode, SequenceNode

    if isinstance(node, MappingNode):
        mapping = _Map(_span(node))
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
        sequence = _Seq(_span(node))
        sequence.extend(_tree(item) for item in node.value)
        return sequence
    return _span(node)


def _one_line(error: Exception) -> str:
    return " ".join(str(error).split()) or type(error).__name__


def _load(text: str) -> object:
    """The data of a YAML text, read as the loader reads it, within the same guards
    (depth, alias expansion, number sizes): a hostile file is refused before ruamel.yaml
    or any walk over the data sees it."""
    try:
        return parse_yaml(text, "")[1]
    except ConfigLoadError as e:
        raise MigrationError(e.reason) from e


def _parse(text: str) -> tuple[_Map | None, object]:
    """The node tree (None for an empty document) and the loaded data.

    Spans come from ruamel.yaml's round-trip composer, the data from `_load`.
    """
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    data = _load(text)
    try:
        root = YAML(typ="rt").compose(text)
    except (YAMLError, ValueError, RecursionError) as e:
        raise MigrationError(f"invalid YAML: {_one_line(e)}") from e
    if root is None:
        return None, data
    tree = _tree(root)
    if not isinstance(tree, _Map):
        raise MigrationError("the top level must be a mapping of keys to values")
    return tree, data


def _plain(value: object) -> object:
    """Round-trip data as plain dicts, lists and scalars, for comparisons."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


# ------------------------------------------------------------------------ text editing


@dataclass(frozen=True)
class _Edit:
    start: int
    end: int
    text: str


def _line_start(text: str, index: int) -> int:
    return text.rfind("\n", 0, index) + 1


def _line_end(text: str, index: int) -> int:
    """The start of the line after the one holding `index` (it may already be one)."""
    if index > 0 and text[index - 1] == "\n":
        return index
    newline = text.find("\n", index)
    return len(text) if newline < 0 else newline + 1


def _alone_on_line(text: str, index: int) -> bool:
    return text[_line_start(text, index) : index].strip() == ""


def _apply(text: str, edits: Iterable[_Edit]) -> str:
    ordered = sorted(set(edits), key=lambda e: (e.start, e.end))
    for before, after in zip(ordered, ordered[1:], strict=False):
        if after.start < before.end:
            raise MigrationError("overlapping edits; migrate this file by hand")
    for edit in reversed(ordered):
        text = text[: edit.start] + edit.text + text[edit.end :]
    return text


def _after_colon(text: str, key: _Node) -> int:
    colon = text.find(":", key.end)
    if colon < 0:
        raise MigrationError("a key without ':'; migrate this file by hand")
    return colon + 1


def _drop_entry(text: str, mapping: _Map, key: str) -> list[_Edit]:
    """Edits that remove `key` and its value from `mapping`."""
    keys = list(mapping)
    index = keys.index(key)
    at = mapping.keys_at[key]
    value = _node_of(mapping[key])
    if not mapping.node.flow and _alone_on_line(text, at.start):
        return [_Edit(_line_start(text, at.start), _line_end(text, value.end), "")]
    if index + 1 < len(keys):
        return [_Edit(at.start, mapping.keys_at[keys[index + 1]].start, "")]
    if index > 0:
        return [_Edit(_node_of(mapping[keys[index - 1]]).end, value.end, "")]
    return [_Edit(at.start, value.end, "")]


def _node_of(value: object) -> _Node:
    if isinstance(value, (_Map, _Seq)):
        return value.node
    assert isinstance(value, _Node)
    return value


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


# ----------------------------------------------------------------------- the migration


@dataclass(frozen=True)
class Migration:
    """The migrated text of one config and what changed, in order."""

    text: str
    changes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.changes)


@dataclass
class _Plan:
    text: str
    edits: list[_Edit] = field(default_factory=list)
    changes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # (section path parts, FQN) written, for checking the result.
    sets: list[tuple[Parts, str]] = field(default_factory=list)


def _section_parts(path: str) -> Parts:
    """`teachers[1]` -> ("teachers", 1); `policy` -> ("policy",); `env.reward_model` ->
    ("env", "reward_model")."""
    if "." in path:
        return tuple(path.split("."))
    if path.endswith("]") and "[" in path:
        name, index = path[:-1].split("[", 1)
        return (name, int(index))
    return (path,)


def _rename_blocks(plan: _Plan, section: _Map, path: str, parts: Parts) -> None:
    for old, new in RENAMED_BLOCKS.items():
        if old not in section:
            continue
        if new in section:
            raise MigrationError(
                f"{path} has both {old} and {new}; merge {path}.{old} into {path}.{new} by hand"
            )
        at = plan.text[section.keys_at[old].start : section.keys_at[old].end]
        plan.edits.append(
            _Edit(section.keys_at[old].start, section.keys_at[old].end, at.replace(old, new, 1))
        )
        plan.changes.append(f"{path}.{old} -> {path}.{new}")


def _drop_keys(plan: _Plan, section: _Map, path: str, parts: Parts) -> None:
    for name in section:
        new = RENAMED_BLOCKS.get(name, name)
        block = section[name]
        dropped = [k for k in DROPPED_KEYS.get(new, ()) if isinstance(block, _Map) and k in block]
        if not dropped or not isinstance(block, _Map):
            continue
        for key in dropped:
            plan.edits.extend(_drop_entry(plan.text, block, key))
            plan.changes.append(f"dropped {path}.{new}.{key}")
        if len(dropped) == len(block) and not block.node.flow:
            # `automodel_cfg:` with nothing under it would be null and, in a child config,
            # wipe the inherited block; an empty mapping merges as a no-op.
            colon = _after_colon(plan.text, section.keys_at[name])
            plan.edits.append(_Edit(colon, colon, " {}"))


def _set_field(plan: _Plan, section: _Map, owner_key: _Node | None, path: str,
               parts: Parts, fqn: str, why: str = "") -> None:
    """Write `worker_extension_cls_fqn: fqn` into `section` of this file."""
    text = plan.text
    entry = f"{FIELD}: {fqn}"
    if FIELD in section:  # present but null
        value = _node_of(section[FIELD])
        if value.end > value.start:
            plan.edits.append(_Edit(value.start, value.end, fqn))
        else:
            colon = _after_colon(text, section.keys_at[FIELD])
            plan.edits.append(_Edit(colon, colon, f" {fqn}"))
    elif section.node.flow:
        first = next(iter(section.keys_at.values()), None)
        if first is None:
            plan.edits.append(_Edit(section.node.start + 1, section.node.start + 1, entry))
        else:
            plan.edits.append(_Edit(first.start, first.start, f"{entry}, "))
    else:
        # Next to quant_cfg, which is why it is needed; else first in the section.
        anchor = section.keys_at.get("quant_cfg")
        if anchor is not None:
            at = _line_end(text, _node_of(section["quant_cfg"]).end)
        elif owner_key is not None:
            anchor = next(iter(section.keys_at.values()))
            at = _line_end(text, owner_key.end)
        else:
            plan.warnings.append(f"{path}.{FIELD} not made explicit: no place to put it")
            return
        indent = " " * (anchor.start - _line_start(text, anchor.start))
        newline = _newline(text)
        lead = newline if at == len(text) and text and not text.endswith("\n") else ""
        plan.edits.append(_Edit(at, at, f"{lead}{indent}{entry}{newline}"))
    plan.changes.append(f"set {path}.{FIELD}={fqn}{why}")
    plan.sets.append((parts, fqn))


# `${policy.dtensor_cfg.x}` and `${.dtensor_cfg.x}` name a renamed block: they are rewritten
# too, or the migrated config would fail to interpolate. Resolver calls (`${mul:...}`) hold a
# ':' and are not references themselves; the references nested in them are matched.
_REFERENCE = re.compile(r"\$\{\s*(\.*)([A-Za-z_][\w\-]*(?:\.[\w\-]+|\[\s*\d+\s*\])*)\s*\}")
_COMPONENT = re.compile(r"[\w\-]+")


def _is_model_section(parts: Parts) -> bool:
    """A section whose blocks are renamed: a worker section or one of MODEL_SECTIONS."""
    return parts in (("policy",), ("teacher",), *MODEL_SECTIONS) or (
        len(parts) == 2 and parts[0] == "teachers" and isinstance(parts[1], int)
    )


def _rewrite_refs(text: str, container: Parts) -> tuple[str, list[tuple[str, str]]]:
    """`text` with references to renamed blocks updated; `container` holds the string."""
    changed: list[tuple[str, str]] = []

    def rewrite(match: re.Match[str]) -> str:
        dots, ref = match.group(1), match.group(2)
        names = list(_COMPONENT.finditer(ref))
        parts: Parts = tuple(int(n.group()) if n.group().isdigit() else n.group() for n in names)
        base = container[: max(len(container) - (len(dots) - 1), 0)] if dots else ()
        absolute = (*base, *parts)
        for cut in (1, 2):
            index = cut - len(base)  # where the block name sits in `ref`; < 0: in the container
            if (index >= 0 and len(absolute) > cut and _is_model_section(absolute[:cut])
                    and absolute[cut] in RENAMED_BLOCKS):
                name = names[index]
                renamed = RENAMED_BLOCKS[str(absolute[cut])]
                new_ref = ref[: name.start()] + renamed + ref[name.end() :]
                changed.append((dots + ref, dots + new_ref))
                start, end = match.span(2)
                whole = match.group(0)
                offset = match.start()
                return whole[: start - offset] + new_ref + whole[end - offset :]
        return match.group(0)

    return _REFERENCE.sub(rewrite, text), changed


def _dotted(parts: Parts) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts).lstrip(".")


def _rewrite_references(plan: _Plan, node: object, container: Parts) -> None:
    """Rewrite references in every string scalar under `node` (at path `container`)."""
    items: Iterable[tuple[str | int, object]]
    if isinstance(node, _Map):
        items = ((k, v) for k, v in node.items() if k != "<<")  # merged in at its anchor
    elif isinstance(node, _Seq):
        items = enumerate(node)
    else:
        return
    for key, value in items:
        if isinstance(value, (_Map, _Seq)):
            _rewrite_references(plan, value, (*container, key))
        elif isinstance(value, _Node) and "${" in value.raw and value.tag.endswith(":str"):
            source = plan.text[value.start : value.end]
            new, changed = _rewrite_refs(source, container)
            if changed:
                plan.edits.append(_Edit(value.start, value.end, new))
                where = _dotted((*container, key))
                plan.changes.extend(f"{where}: ${{{a}}} -> ${{{b}}}" for a, b in changed)


def _rewrite_data_references(data: object, container: Parts) -> object:
    if isinstance(data, dict):
        return {k: _rewrite_data_references(v, (*container, k)) if not isinstance(v, str)
                else _rewrite_refs(v, container)[0] for k, v in data.items()}
    if isinstance(data, list):
        return [_rewrite_data_references(v, (*container, i)) if not isinstance(v, str)
                else _rewrite_refs(v, container)[0] for i, v in enumerate(data)]
    return data


def _current_names(section: Mapping[str, Any]) -> dict[str, Any]:
    """A section with old block names read as current ones (a parent may still be outdated)."""
    current: dict[str, Any] = dict(section)
    for old, new in RENAMED_BLOCKS.items():
        if old in current:
            block = as_mapping(current.pop(old)) or {}
            current[new] = {**block, **(as_mapping(current.get(new)) or {})}
    return current


def _implied_fqn(
    file_section: _Map, merged: Mapping[str, Any], path: str, registry: WorkerRegistry,
    generation: bool,
) -> tuple[str | None, str, str | None]:
    """(FQN quant_cfg implies and this file should set, why, warning) for one section."""
    if quant_cfg_of(merged) is None:
        return None, "", None

    def resolve(section: Mapping[str, Any]) -> Resolution | None:
        if generation:
            return resolve_generation(section, path=path, registry=registry)
        return resolve_policy(_current_names(section), path=path, registry=registry)

    try:
        resolved = resolve(merged)
    except WorkerConfigError as err:
        inherited = merged.get(FIELD)
        owner = registry.owner_of(inherited) if isinstance(inherited, str) else None
        if FIELD in file_section or err.problems[0].rule != "R5" or owner is None or not owner[1]:
            return None, "", f"{path}.{FIELD} not made explicit: {err.problems[0].message}"
        # An explicit FQN inherited from an already migrated parent that runs another backend.
        try:
            resolved = resolve({k: v for k, v in merged.items() if k != FIELD})
        except WorkerConfigError as again:
            return None, "", f"{path}.{FIELD} not made explicit: {again.problems[0].message}"
        if resolved is None:
            return None, "", None
        return resolved.fqn, f" (the inherited {inherited} is for the {owner[0].label})", None
    if resolved is None or resolved.rule != "R3":
        return None, "", None
    return resolved.fqn, "", None


def _explicit_workers(plan: _Plan, root: _Map, merged: Mapping[str, Any],
                      registry: WorkerRegistry) -> None:
    merged_sections = dict(worker_sections(merged))
    for path, raw in worker_sections(root):
        merged_section = as_mapping(merged_sections.get(path))
        if not isinstance(raw, _Map) or merged_section is None:
            continue
        parts = _section_parts(path)
        owner_key = root.keys_at.get(str(parts[0])) if len(parts) == 1 else None
        fqn, why, warning = _implied_fqn(raw, merged_section, path, registry, generation=False)
        plan.warnings.extend([warning] if warning else [])
        if fqn is not None:
            _set_field(plan, raw, owner_key, path, parts, fqn, why)
        generation = raw.get("generation")
        merged_generation = as_mapping(merged_section.get("generation"))
        if isinstance(generation, _Map) and merged_generation is not None:
            gen_path = f"{path}.generation"
            fqn, why, warning = _implied_fqn(
                generation, merged_generation, gen_path, registry, generation=True
            )
            plan.warnings.extend([warning] if warning else [])
            if fqn is not None:
                _set_field(plan, generation, raw.keys_at["generation"], gen_path,
                           (*parts, "generation"), fqn, why)


def _walk(data: Any, parts: Sequence[str | int]) -> Any:
    for part in parts:
        data = data[part]
    return data


def _expected(data: object, plan: _Plan) -> object:
    """What the loaded data must become: the migration applied to the data itself.

    Layout-free, so anchors and merge keys (`<<: *BASE`) are judged by their effect.
    """
    for _, raw in model_sections(data) if isinstance(data, dict) else ():
        section = raw if isinstance(raw, dict) else {}
        for old, new in RENAMED_BLOCKS.items():
            if old in section and new not in section:
                renamed = {(new if k == old else k): v for k, v in section.items()}
                section.clear()
                section.update(renamed)
        for name, keys in DROPPED_KEYS.items():
            block = section.get(name)
            if isinstance(block, dict):
                for key in keys:
                    block.pop(key, None)
    data = _rewrite_data_references(data, ())
    for parts, fqn in plan.sets:
        _walk(data, parts)[FIELD] = fqn
    return data


def _order_free(value: object) -> object:
    """Inserted keys go where the layout allows, so compare mappings without order."""
    if isinstance(value, dict):
        return sorted((k, repr(_order_free(v))) for k, v in value.items())
    if isinstance(value, list):
        return [_order_free(v) for v in value]
    return value


def migrate_text(
    text: str,
    *,
    explicit_workers: bool = False,
    merged: Mapping[str, Any] | None = None,
    registry: WorkerRegistry | None = None,
) -> Migration:
    """Migrate one config's text. Raises MigrationError when it cannot be done safely.

    `merged` is the config with its `defaults:` applied, used with `explicit_workers` to
    find the backend and mode a child inherits; without it the text alone is used.
    """
    root, data = _parse(text)
    return _migrate(text, root, data, explicit_workers=explicit_workers, merged=merged,
                    registry=registry)


def _migrate(
    text: str,
    root: _Map | None,
    data: object,
    *,
    explicit_workers: bool,
    merged: Mapping[str, Any] | None,
    registry: WorkerRegistry | None,
) -> Migration:
    if root is None:
        return Migration(text)
    plan = _Plan(text)
    for path, section in model_sections(root):
        if isinstance(section, _Map):
            parts = _section_parts(path)
            _rename_blocks(plan, section, path, parts)
            _drop_keys(plan, section, path, parts)
    _rewrite_references(plan, root, ())
    if explicit_workers:
        context = merged if merged is not None else as_mapping(_plain(data)) or {}
        _explicit_workers(plan, root, context, registry or default_registry())
    if not plan.edits:
        return Migration(text, (), tuple(plan.warnings))
    new_text = _apply(text, plan.edits)
    unsafe = "this layout cannot be rewritten safely; migrate the file by hand"
    try:
        new_data = _load(new_text)
    except MigrationError as e:
        raise MigrationError(unsafe) from e
    expected = _expected(_plain(data), plan)
    got = _plain(new_data)
    if _order_free(got) != _order_free(expected):
        raise MigrationError(unsafe)
    return Migration(new_text, tuple(plan.changes), tuple(plan.warnings))


# ------------------------------------------------------------------------------ files


@dataclass(frozen=True)
class FileReport:
    """What migrating one file did or would do."""

    path: Path
    status: Status
    changes: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    error: str | None = None
    original: bytes = b""
    text: str | None = None  # the migrated text, when changed
    outdated_parents: tuple[Path, ...] = ()
    identity: Identity | None = None  # of the file as read: replaced only while unchanged

    def new_bytes(self) -> bytes:
        """The bytes the file holds after migration (the original ones when unchanged)."""
        return self.original if self.text is None else self.text.encode("utf-8")


_BOM = "\ufeff"


def _read(path: Path) -> tuple[bytes, str]:
    """Through the loader's guarded reader: regular files only, bounded size, no FIFO wait."""
    try:
        raw = read_bytes(path, str(path))
        return raw, decode(raw, str(path))
    except ConfigLoadError as e:
        raise MigrationError(e.reason) from e


Identity = tuple[int, int, int, int]
"""(device, inode, size, modification time in ns) of a file."""


def _identity(path: Path) -> Identity | None:
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


def replace_refusal(report: FileReport, roots: Sequence[Path], named: set[Path]) -> str | None:
    """Why `report.path` must not be replaced in place now, or None when it may be.

    It must still be the file that was read (same inode, size, time and bytes: an edit or a
    deletion made since is never overwritten or undone), and its real path must be a file
    named on the command line or lie inside a folder that was (a symlink is never followed
    out of the given roots).
    """
    real = _real(report.path)
    if real not in named and not any(real.is_relative_to(root) for root in roots):
        return f"is a symlink to {real}, outside the folders given; not rewritten"
    now = _identity(report.path)
    if now is None:
        return "vanished since it was read; not recreated"
    try:
        same = now == report.identity and _read(report.path)[0] == report.original
    except MigrationError:
        same = False
    if not same:
        return "changed since it was read; not rewritten (run migrate again)"
    return None


def _real(path: Path) -> Path:
    """`path.resolve()`; a symlink loop stays as written (reading it then fails, one line)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError, ValueError):  # ValueError: a NUL in the name
        return Path(os.path.abspath(path))


def _is_dir(path: Path) -> bool:
    """`path.is_dir()`, False where the system refuses the name (too long, a NUL): reading
    the file then reports why, one line, instead of an OSError escaping."""
    try:
        return path.is_dir()
    except (OSError, ValueError):
        return False


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def _is_symlink(path: Path) -> bool:
    try:
        return path.is_symlink()
    except (OSError, ValueError):
        return False


def _defaults_of(root: _Map | None) -> list[str]:
    value = root.get("defaults") if root is not None else None
    if isinstance(value, _Node) and value.tag.endswith(":str"):
        return [value.raw]
    if isinstance(value, _Seq):
        return [item.raw for item in value if isinstance(item, _Node) and item.raw]
    return []


def _parent_path(child: Path, entry: str) -> Path:
    # Same resolution as nemo_rl.config.loader: relative to the folder of the naming file.
    return Path(os.path.normpath(entry if os.path.isabs(entry) else child.parent / entry))


@dataclass(frozen=True)
class _Source:
    raw: bytes
    identity: Identity | None
    text: str  # without a byte-order mark
    bom: bool
    root: _Map | None
    data: object


class _Session:
    """One run: each file is read and parsed once; parents' migration state is remembered."""

    def __init__(self, given: set[Path]) -> None:
        self.given = given
        self.sources: dict[Path, _Source | MigrationError] = {}
        self.outdated: dict[Path, tuple[str, ...]] = {}

    def source(self, path: Path) -> _Source:
        real = _real(path)
        if real not in self.sources:
            try:
                identity = _identity(path)
                raw, text = _read(path)
                if _identity(path) != identity:  # rewritten while being read
                    raise MigrationError("changed while being read; run migrate again")
                body = text.removeprefix(_BOM)
                root, data = _parse(body)
                self.sources[real] = _Source(raw, identity, body, body != text, root, data)
            except MigrationError as e:
                self.sources[real] = e
        found = self.sources[real]
        if isinstance(found, MigrationError):
            raise found
        return found

    def _schema_changes(self, path: Path, source: _Source) -> tuple[str, ...]:
        real = _real(path)
        if real not in self.outdated:
            migration = _migrate(source.text, source.root, source.data, explicit_workers=False,
                                 merged=None, registry=None)
            self.outdated[real] = migration.changes
        return self.outdated[real]

    def parent_notes(self, path: Path, source: _Source) -> tuple[list[str], list[Path]]:
        """Notes on the parents of `path` (the whole chain), and the outdated ones not given."""
        notes: list[str] = []
        outdated: list[Path] = []
        seen = {_real(path)}
        todo = [_parent_path(path, e) for e in _defaults_of(source.root)]
        while todo:
            parent = todo.pop(0)
            if _real(parent) in seen:
                continue
            seen.add(_real(parent))
            try:
                found = self.source(parent)
                changes = self._schema_changes(parent, found)
            except MigrationError as e:
                notes.append(f"parent {parent}: {e}")
                continue
            todo.extend(_parent_path(parent, e) for e in _defaults_of(found.root))
            if changes and _real(parent) not in self.given:
                outdated.append(parent)
                notes.append(f"parent {parent} still needs migrating ({'; '.join(changes)})")
        return notes, outdated


def _merged_config(path: Path, root: _Map | None) -> tuple[Mapping[str, Any] | None, str | None]:
    """The config with its defaults applied, or why it cannot be loaded."""
    if not _defaults_of(root):
        return None, None
    from nemo_rl.config.loader import ConfigLoadError, load_config

    try:
        return load_config(path), None
    except ConfigLoadError as e:
        return None, str(e)


def _own_quant_sections(root: _Map | None) -> list[str]:
    found: list[str] = []
    if root is None:
        return found
    for path, section in worker_sections(root):
        if isinstance(section, _Map):
            if "quant_cfg" in section:
                found.append(path)
            generation = section.get("generation")
            if isinstance(generation, _Map) and "quant_cfg" in generation:
                found.append(f"{path}.generation")
    return found


def plan_file(
    path: Path,
    *,
    explicit_workers: bool = False,
    given: Iterable[Path] = (),
    registry: WorkerRegistry | None = None,
    _session: _Session | None = None,
) -> FileReport:
    """Migrate `path` in memory (nothing is written) and report the result.

    `given` are the files migrated together with this one: an outdated parent among
    them is not reported as still needing migration.
    """
    session = _session or _Session({_real(p) for p in given})
    notes: list[str] = []
    try:
        source = session.source(path)
        merged: Mapping[str, Any] | None = None
        if explicit_workers:
            merged, why = _merged_config(path, source.root)
            if why is not None and _own_quant_sections(source.root):
                notes.append(f"{FIELD} not made explicit: the merged config does not load ({why})")
                explicit_workers = False
        migration = _migrate(source.text, source.root, source.data,
                             explicit_workers=explicit_workers, merged=merged, registry=registry)
    except MigrationError as e:
        return FileReport(path, "error", error=str(e))
    notes.extend(migration.warnings)
    parent_notes, outdated = session.parent_notes(path, source)
    notes.extend(parent_notes)
    if not migration.changed:
        return FileReport(path, "unchanged", notes=tuple(notes), original=source.raw,
                          identity=source.identity,
                          outdated_parents=tuple(outdated))
    new_text = (_BOM if source.bom else "") + migration.text
    return FileReport(path, "changed", migration.changes, tuple(notes), original=source.raw,
                      identity=source.identity,
                      text=new_text, outdated_parents=tuple(outdated))


MAX_FOLDER_ENTRIES = 100_000
"""Entries `migrate FOLDER` looks at before refusing the folder as too big to be a config tree."""


def _config_files(folder: Path) -> list[Path]:
    """*.yaml / *.yml regular files under `folder`, sorted; symlinked folders not entered,
    unreadable ones skipped, and at most MAX_FOLDER_ENTRIES entries looked at (a link to `/`
    must not walk the whole machine)."""
    found: list[Path] = []
    seen = 0
    for top, dirs, names in os.walk(folder):
        seen += len(dirs) + len(names)
        if seen > MAX_FOLDER_ENTRIES:
            raise MigrationError(
                f"{folder} holds over {MAX_FOLDER_ENTRIES} entries; name the config files"
            )
        for name in names:
            path = Path(top) / name
            if path.suffix in CONFIG_SUFFIXES and _is_file(path):
                found.append(path)
    return sorted(found)


def expand_inputs(paths: Iterable[Path]) -> list[tuple[Path, Path]]:
    """(file, base) pairs: a folder stands for its *.yaml / *.yml files, found recursively.

    `base` is what the file's name is taken relative to when mirroring into an output folder.
    """
    files: dict[Path, tuple[Path, Path]] = {}  # by real path: a file named twice runs once
    for path in paths:
        if _is_dir(path):
            pairs = [(p, path) for p in _config_files(path)]
        else:
            pairs = [(path, path.parent)]
        for file, base in pairs:
            files.setdefault(_real(file), (file, base))
    return list(files.values())


def migrate_paths(
    paths: Iterable[Path],
    *,
    explicit_workers: bool = False,
    registry: WorkerRegistry | None = None,
) -> list[FileReport]:
    """Plan the migration of every file (folders are expanded); nothing is written."""
    files = [f for f, _ in expand_inputs(paths)]
    session = _Session({_real(f) for f in files})
    return [plan_file(f, explicit_workers=explicit_workers, registry=registry, _session=session)
            for f in files]


def write_atomic(path: Path, data: bytes) -> None:
    """Replace `path` by `data` atomically, keeping its mode (a temp file in the same folder).

    A symlink is followed, so the link stays and its target is updated.
    """
    path = _real(path) if _is_symlink(path) else path
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


# -------------------------------------------------------------------------------- CLI


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # argparse would exit the process; run_migrate returns an exit code instead.
        raise _UsageError(message)


def _parser() -> _Parser:
    parser = _Parser(
        prog="nemo-rl-workers migrate",
        add_help=False,
        description="Rewrite outdated NeMo-RL configs to the current schema, keeping comments. "
        "Without --in-place or -o, show what would change.",
    )
    parser.add_argument("configs", nargs="+", type=Path, metavar="CONFIG",
                        help="config files, or folders of them (searched for *.yaml, *.yml)")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--in-place", "-i", action="store_true", help="rewrite the files in place")
    where.add_argument("-o", "--output", type=Path, metavar="OUT",
                       help="write here: a file for one input file, "
                       "else a folder mirroring the inputs")
    where.add_argument("--check", action="store_true",
                       help="write nothing; exit 1 when any file would change")
    parser.add_argument("--explicit-workers", action="store_true",
                        help=f"write out the {FIELD} that quant_cfg implies")
    parser.add_argument("-h", "--help", action="store_true", help="show this help")
    return parser


def _destinations(
    inputs: list[tuple[Path, Path]], out: Path, single_file: bool
) -> dict[Path, Path]:
    if single_file and not _is_dir(out):
        return {inputs[0][0]: out}
    if single_file:
        return {inputs[0][0]: out / inputs[0][0].name}
    bases = {_real(base) for _, base in inputs}
    common = Path(os.path.commonpath([str(b) for b in bases]))
    return {f: out / _real(f).relative_to(common) for f, _ in inputs}


def _show_report(report: FileReport, verb: str, out: TextIO, err: TextIO) -> None:
    name = one_line(str(report.path))  # a file name may hold a newline
    if report.status == "error":
        err.write(f"error: {name}: {report.error}\n")
        return
    out.write(f"{name}: {verb if report.status == 'changed' else 'unchanged'}\n")
    for change in report.changes:
        out.write(f"  {change}\n")
    for note in report.notes:
        out.write(f"  note: {note}\n")


def run_migrate(argv: Sequence[str], out: TextIO, err: TextIO) -> int:
    """`nemo-rl-workers migrate CONFIG... [--in-place | -o OUT | --check] [--explicit-workers]`.

    Exit status: 0 done or nothing to do, 1 `--check` found a file that would change,
    2 unusable input (a missing file, invalid YAML, a usage error).
    """
    parser = _parser()
    if "-h" in argv or "--help" in argv:
        out.write(parser.format_help())
        return 0
    try:
        args = parser.parse_args(list(argv))
    except _UsageError as e:  # one line, like every unusable input (see --help)
        err.write(f"nemo-rl-workers migrate: error: {e}\n")
        return 2
    configs: list[Path] = args.configs
    try:
        inputs = expand_inputs(configs)
    except MigrationError as e:
        err.write(f"error: {one_line(str(e))}\n")
        return 2
    if not inputs:
        names = ", ".join(one_line(str(c)) for c in configs)
        err.write(f"error: no config files found in {names}\n")
        return 2
    reports = migrate_paths(configs, explicit_workers=args.explicit_workers)
    in_place: bool = args.in_place
    output: Path | None = args.output
    dests: dict[Path, Path] = {}
    if output is not None:
        single = len(configs) == 1 and not _is_dir(configs[0])
        dests = _destinations(inputs, output, single)
    verb = "changed" if in_place or output is not None else "would change"
    shown: list[FileReport] = []
    roots = [_real(c) for c in configs if _is_dir(c)]
    named = {_real(c) for c in configs if not _is_dir(c)}
    for report in reports:
        if report.status != "error":
            try:
                refusal = (
                    replace_refusal(report, roots, named)
                    if in_place and report.text is not None else None
                )
                if refusal is not None:
                    report = FileReport(report.path, "error", error=refusal)
                elif in_place and report.text is not None:
                    write_atomic(report.path, report.new_bytes())
                elif output is not None:
                    dest = dests[report.path]
                    into = _real(output if _is_dir(output) else output.parent)
                    if _is_symlink(dest) and not _real(dest).is_relative_to(into):
                        report = FileReport(report.path, "error", error=(
                            f"{dest} is a symlink to {_real(dest)}, outside {into}; not written"))
                    else:
                        write_atomic(dest, report.new_bytes())
            except OSError as e:
                report = FileReport(report.path, "error", error=f"cannot be written: {e}")
        shown.append(report)
        _show_report(report, verb, out, err)
        if not in_place and output is None and not args.check and report.text is not None:
            old = report.original.decode("utf-8").splitlines(keepends=True)
            out.writelines(difflib.unified_diff(
                old, report.text.splitlines(keepends=True),
                str(report.path), f"{report.path} (migrated)"))
    counts = {s: sum(r.status == s for r in shown) for s in ("changed", "unchanged", "error")}
    out.write(f"{counts['changed']} {verb}, {counts['unchanged']} unchanged, "
              f"{counts['error']} failed\n")
    if counts["error"]:
        return 2
    return 1 if args.check and counts["changed"] else 0
