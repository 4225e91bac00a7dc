"""The migration of outdated NeMo-RL configs to the current schema, as text edits.

What changes, in `policy`, `teacher`, each `teachers[i]`, `value` and `env.reward_model`
(the sections upstream's outdated-config check visits):
- `dtensor_cfg` is renamed to `automodel_cfg` in place (same position, contents unchanged);
- `_v2` inside that block is dropped;
- with `explicit_workers`, a `worker_extension_cls_fqn` that `quant_cfg` used to imply (rule R3)
  is written out, for the policy section and its vLLM `generation` section.

Each rewrite (`yaml_edits`) is re-parsed and compared with the same change applied to the
loaded data, so a layout the editor gets wrong is reported instead of written. A file with
nothing to migrate is never rewritten. `plan_file` / `migrate_paths` plan files (with their
`defaults:` parents) in memory; writing them is the command's (`migrate`), safely
(`migrate_files`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nemo_rl_workers.errors import WorkerConfigError
from nemo_rl_workers.model.registry import WorkerRegistry, default_registry
from nemo_rl_workers.model.resolver import FIELD, Resolution, resolve_generation, resolve_policy
from nemo_rl_workers.model.sections import (
    MODEL_SECTIONS,
    as_mapping,
    model_sections,
    quant_cfg_of,
    worker_sections,
)
from nemo_rl_workers.reading.migrate_files import (
    BOM,
    FileReport,
    Identity,
    expand_inputs,
    identity_of,
    read_guarded,
    real_path,
)
from nemo_rl_workers.reading.yaml_edits import (
    Edit,
    Map,
    MigrationError,
    Node,
    Seq,
    after_colon,
    apply_edits,
    drop_entry,
    line_end,
    line_start,
    load_data,
    newline_of,
    node_of,
    parse_spans,
    plain,
)

RENAMED_BLOCKS: Mapping[str, str] = {"dtensor_cfg": "automodel_cfg"}
"""Old block name -> current name, inside a worker section."""
V2_KEY = "_v2"
DROPPED_KEYS: Mapping[str, tuple[str, ...]] = {"automodel_cfg": (V2_KEY,)}
"""Current block name -> keys dropped inside it (also found under the block's old name)."""

LOUD = "warning: "
"""A note that changes what runs (`migrate` prints it as a warning with its file and line)."""

Parts = tuple[str | int, ...]
"""A config path as keys and list indices: ("teachers", 1, "automodel_cfg")."""


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
    edits: list[Edit] = field(default_factory=list)
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


def _rename_blocks(plan: _Plan, section: Map, path: str, parts: Parts) -> None:
    for old, new in RENAMED_BLOCKS.items():
        if old not in section:
            continue
        if new in section:
            raise MigrationError(
                f"{path} has both {old} and {new}; merge {path}.{old} into {path}.{new} by hand"
            )
        at = plan.text[section.keys_at[old].start : section.keys_at[old].end]
        plan.edits.append(
            Edit(section.keys_at[old].start, section.keys_at[old].end, at.replace(old, new, 1))
        )
        plan.changes.append(f"{path}.{old} -> {path}.{new}")


def _drop_keys(plan: _Plan, section: Map, path: str, parts: Parts) -> None:
    for name in section:
        new = RENAMED_BLOCKS.get(name, name)
        block = section[name]
        dropped = [k for k in DROPPED_KEYS.get(new, ()) if isinstance(block, Map) and k in block]
        if not dropped or not isinstance(block, Map):
            continue
        for key in dropped:
            plan.edits.extend(drop_entry(plan.text, block, key))
            plan.changes.append(f"dropped {path}.{new}.{key}")
            value = block[key]
            if key == V2_KEY and isinstance(value, Node) and value.raw.lower() == "false":
                line = plan.text.count("\n", 0, block.keys_at[key].start) + 1
                plan.warnings.append(
                    f"{LOUD}line {line}: {path}.{name}.{key}: false selects the DTensor v1 "
                    f"worker, which the {new} schema does not have: after migration "
                    f"{path} runs the {new.removesuffix('_cfg')} backend's worker instead")
        if len(dropped) == len(block) and not block.node.flow:
            # `automodel_cfg:` with nothing under it would be null and, in a child config,
            # wipe the inherited block; an empty mapping merges as a no-op.
            colon = after_colon(plan.text, section.keys_at[name])
            plan.edits.append(Edit(colon, colon, " {}"))


def _set_field(plan: _Plan, section: Map, owner_key: Node | None, path: str,
               parts: Parts, fqn: str, why: str = "") -> None:
    """Write `worker_extension_cls_fqn: fqn` into `section` of this file."""
    text = plan.text
    entry = f"{FIELD}: {fqn}"
    if FIELD in section:  # present but null
        value = node_of(section[FIELD])
        if value.end > value.start:
            plan.edits.append(Edit(value.start, value.end, fqn))
        else:
            colon = after_colon(text, section.keys_at[FIELD])
            plan.edits.append(Edit(colon, colon, f" {fqn}"))
    elif section.node.flow:
        first = next(iter(section.keys_at.values()), None)
        if first is None:
            plan.edits.append(Edit(section.node.start + 1, section.node.start + 1, entry))
        else:
            plan.edits.append(Edit(first.start, first.start, f"{entry}, "))
    else:
        # Next to quant_cfg, which is why it is needed; else first in the section.
        anchor = section.keys_at.get("quant_cfg")
        if anchor is not None:
            at = line_end(text, node_of(section["quant_cfg"]).end)
        elif owner_key is not None:
            anchor = next(iter(section.keys_at.values()))
            at = line_end(text, owner_key.end)
        else:
            plan.warnings.append(f"{path}.{FIELD} not made explicit: no place to put it")
            return
        indent = " " * (anchor.start - line_start(text, anchor.start))
        newline = newline_of(text)
        lead = newline if at == len(text) and text and not text.endswith("\n") else ""
        plan.edits.append(Edit(at, at, f"{lead}{indent}{entry}{newline}"))
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
    if isinstance(node, Map):
        items = ((k, v) for k, v in node.items() if k != "<<")  # merged in at its anchor
    elif isinstance(node, Seq):
        items = enumerate(node)
    else:
        return
    for key, value in items:
        if isinstance(value, (Map, Seq)):
            _rewrite_references(plan, value, (*container, key))
        elif isinstance(value, Node) and "${" in value.raw and value.tag.endswith(":str"):
            source = plan.text[value.start : value.end]
            new, changed = _rewrite_refs(source, container)
            if changed:
                plan.edits.append(Edit(value.start, value.end, new))
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
    file_section: Map, merged: Mapping[str, Any], path: str, registry: WorkerRegistry,
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


def _explicit_workers(plan: _Plan, root: Map, merged: Mapping[str, Any],
                      registry: WorkerRegistry) -> None:
    merged_sections = dict(worker_sections(merged))
    for path, raw in worker_sections(root):
        merged_section = as_mapping(merged_sections.get(path))
        if not isinstance(raw, Map) or merged_section is None:
            continue
        parts = _section_parts(path)
        owner_key = root.keys_at.get(str(parts[0])) if len(parts) == 1 else None
        fqn, why, warning = _implied_fqn(raw, merged_section, path, registry, generation=False)
        plan.warnings.extend([warning] if warning else [])
        if fqn is not None:
            _set_field(plan, raw, owner_key, path, parts, fqn, why)
        generation = raw.get("generation")
        merged_generation = as_mapping(merged_section.get("generation"))
        if isinstance(generation, Map) and merged_generation is not None:
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
    root, data = parse_spans(text)
    return _migrate(text, root, data, explicit_workers=explicit_workers, merged=merged,
                    registry=registry)


def _migrate(
    text: str,
    root: Map | None,
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
        if isinstance(section, Map):
            parts = _section_parts(path)
            _rename_blocks(plan, section, path, parts)
            _drop_keys(plan, section, path, parts)
    _rewrite_references(plan, root, ())
    if explicit_workers:
        context = merged if merged is not None else as_mapping(plain(data)) or {}
        _explicit_workers(plan, root, context, registry or default_registry())
    if not plan.edits:
        return Migration(text, (), tuple(plan.warnings))
    new_text = apply_edits(text, plan.edits)
    unsafe = "this layout cannot be rewritten safely; migrate the file by hand"
    try:
        new_data = load_data(new_text)
    except MigrationError as e:
        raise MigrationError(unsafe) from e
    expected = _expected(plain(data), plan)
    got = plain(new_data)
    if _order_free(got) != _order_free(expected):
        raise MigrationError(unsafe)
    return Migration(new_text, tuple(plan.changes), tuple(plan.warnings))


# ----------------------------------------------------------------- planning files


def _defaults_of(root: Map | None) -> list[str]:
    value = root.get("defaults") if root is not None else None
    if isinstance(value, Node) and value.tag.endswith(":str"):
        return [value.raw]
    if isinstance(value, Seq):
        return [item.raw for item in value if isinstance(item, Node) and item.raw]
    return []


def _parent_path(child: Path, entry: str) -> Path:
    # Same resolution as nemo_rl_workers.reading.loader: relative to the folder of the naming file.
    return Path(os.path.normpath(entry if os.path.isabs(entry) else child.parent / entry))


@dataclass(frozen=True)
class _Source:
    raw: bytes
    identity: Identity | None
    text: str  # without a byte-order mark
    bom: bool
    root: Map | None
    data: object


class _Session:
    """One run: each file is read and parsed once; parents' migration state is remembered."""

    def __init__(self, given: set[Path]) -> None:
        self.given = given
        self.sources: dict[Path, _Source | MigrationError] = {}
        self.outdated: dict[Path, tuple[str, ...]] = {}

    def source(self, path: Path) -> _Source:
        real = real_path(path)
        if real not in self.sources:
            try:
                identity = identity_of(path)
                raw, text = read_guarded(path)
                if identity_of(path) != identity:  # rewritten while being read
                    raise MigrationError("changed while being read; run migrate again")
                body = text.removeprefix(BOM)
                root, data = parse_spans(body)
                self.sources[real] = _Source(raw, identity, body, body != text, root, data)
            except MigrationError as e:
                self.sources[real] = e
        found = self.sources[real]
        if isinstance(found, MigrationError):
            raise found
        return found

    def _schema_changes(self, path: Path, source: _Source) -> tuple[str, ...]:
        real = real_path(path)
        if real not in self.outdated:
            migration = _migrate(source.text, source.root, source.data, explicit_workers=False,
                                 merged=None, registry=None)
            self.outdated[real] = migration.changes
        return self.outdated[real]

    def parent_notes(self, path: Path, source: _Source) -> tuple[list[str], list[Path]]:
        """Notes on the parents of `path` (the whole chain), and the outdated ones not given."""
        notes: list[str] = []
        outdated: list[Path] = []
        seen = {real_path(path)}
        todo = [_parent_path(path, e) for e in _defaults_of(source.root)]
        while todo:
            parent = todo.pop(0)
            if real_path(parent) in seen:
                continue
            seen.add(real_path(parent))
            try:
                found = self.source(parent)
                changes = self._schema_changes(parent, found)
            except MigrationError as e:
                notes.append(f"parent {parent}: {e}")
                continue
            todo.extend(_parent_path(parent, e) for e in _defaults_of(found.root))
            if changes and real_path(parent) not in self.given:
                outdated.append(parent)
                notes.append(f"parent {parent} still needs migrating ({'; '.join(changes)})")
        return notes, outdated


def _merged_config(path: Path, root: Map | None) -> tuple[Mapping[str, Any] | None, str | None]:
    """The config with its defaults applied, or why it cannot be loaded."""
    if not _defaults_of(root):
        return None, None
    from nemo_rl_workers.reading.loader import ConfigLoadError, load_config

    try:
        return load_config(path), None
    except ConfigLoadError as e:
        return None, str(e)


def _own_quant_sections(root: Map | None) -> list[str]:
    found: list[str] = []
    if root is None:
        return found
    for path, section in worker_sections(root):
        if isinstance(section, Map):
            if "quant_cfg" in section:
                found.append(path)
            generation = section.get("generation")
            if isinstance(generation, Map) and "quant_cfg" in generation:
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
    session = _session or _Session({real_path(p) for p in given})
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
    new_text = (BOM if source.bom else "") + migration.text
    return FileReport(path, "changed", migration.changes, tuple(notes), original=source.raw,
                      identity=source.identity,
                      text=new_text, outdated_parents=tuple(outdated))


def migrate_paths(
    paths: Iterable[Path],
    *,
    explicit_workers: bool = False,
    registry: WorkerRegistry | None = None,
) -> list[FileReport]:
    """Plan the migration of every file (folders are expanded); nothing is written."""
    files = [f for f, _ in expand_inputs(paths)]
    session = _Session({real_path(f) for f in files})
    return [plan_file(f, explicit_workers=explicit_workers, registry=registry, _session=session)
            for f in files]
