"""Loading NeMo-RL YAML configs: `defaults:` inheritance, interpolation, overrides.

Semantics follow upstream NeMo-RL's `load_config_with_inheritance`:

- `defaults:` is a file name or a list of them, each relative to the folder of
  the file that names it (absolute paths are allowed). Parents load depth-first;
  later entries override earlier ones and the child overrides them all.
- A mapping holding `_override_: true` replaces the inherited section instead of
  merging into it; the marker itself never reaches the result. (Upstream honours
  it on top-level keys only; here it works at any depth.)
- `${...}` interpolations resolve after merging and after command-line overrides,
  with upstream's arithmetic resolvers (`add`, `sub`, `mul`, `div`, `max`).
- Overrides are `dotted.key=value` (the key must exist), `+dotted.key=value` (the
  key must not exist) or `++dotted.key=value` (set or add); values are YAML.

Within one process, a file is parsed once and a parent merged over its own `defaults:`
once, reused while every file it read is unchanged (path, mtime, size); `${...}` is
resolved by OmegaConf on just the nodes interpolation touches (`pruned_resolve.py`). The
answers and errors are those of loading everything anew (tests compare on the corpus).

Configs are untrusted input, read through `nemo_rl_workers.reading.safe_read`. Every way a
file can be unusable (missing, too big, not UTF-8, not YAML, an alias bomb, an
interpolation bomb, a `defaults:` cycle, a parent outside `root`, a top level that
is not a mapping) raises ConfigLoadError with a one-line message, after bounded
work; OmegaConf and YAML exceptions never escape.
"""

from __future__ import annotations

import contextlib
import copy
import os
import re
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, cast

import yaml

from nemo_rl_workers.errors import one_line
from nemo_rl_workers.reading import safe_read
from nemo_rl_workers.reading.interpolation import (
    MAX_EXPANDED_CHARS,
    check_budget,
    memoized_select,
    within_time,
)
from nemo_rl_workers.reading.omegaconf_resolvers import register_resolver
from nemo_rl_workers.reading.origin import remember
from nemo_rl_workers.reading.plain_data import plain_copy
from nemo_rl_workers.reading.pruned_resolve import forget_resolutions, resolve_pruned
from nemo_rl_workers.reading.recorded_reads import ENVIRON, Reads, recording, replay
from nemo_rl_workers.reading.safe_read import ConfigLoadError as ConfigLoadError  # its public home
from nemo_rl_workers.reading.safe_read import exists, parse_yaml, read_text, resolved

if TYPE_CHECKING:
    from nemo_rl_workers.reading.load_answers import LoadAnswers

# The reader's limits and error kinds stay importable from here, where users met them.
MAX_FILE_BYTES = safe_read.MAX_FILE_BYTES
MAX_YAML_NODES = safe_read.MAX_YAML_NODES
LoadErrorKind = safe_read.LoadErrorKind

MAX_DEFAULTS_DEPTH = 32
"""How deep a `defaults:` chain may nest."""
MAX_FILES = 256
"""How many files one config may pull in through `defaults:`, counting repeats."""
MAX_RESOLVER_INT = 2**63
"""The magnitude beyond which the arithmetic resolvers refuse an integer result."""

Lines = dict[str, tuple[str, int]]
"""Dotted config path (`policy.generation.quant_cfg`, `teachers[1].megatron_cfg`)
-> (file, 1-based line) of the file that last set it."""


class LoadedConfig(NamedTuple):
    config: dict[str, Any]
    lines: Lines


@dataclass
class _Parsed:
    data: dict[str, Any]
    lines: Lines


@dataclass
class _Session:
    """State of one load: parsed files (a diamond parses each once) and the limits."""

    root: Path | None
    kept: LoadAnswers | None = None  # parses kept between runs (`load_answers`)
    parsed: dict[Path, _Parsed] = field(default_factory=dict)
    files_loaded: int = 0
    # For each parent being merged: the files it reads (as named) and the longest chain.
    trail: list[tuple[list[str], list[int]]] = field(default_factory=list)


# --------------------------------------------------------------------------- files


def _display(path: Path) -> str:
    return os.path.normpath(str(path))


def _line_map(node: yaml.Node, prefix: str, shown: str, out: Lines) -> None:
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                continue
            path = f"{prefix}.{key_node.value}" if prefix else str(key_node.value)
            out[path] = (shown, key_node.start_mark.line + 1)
            _line_map(value_node, path, shown, out)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            path = f"{prefix}[{i}]"
            out[path] = (shown, item.start_mark.line + 1)
            _line_map(item, path, shown, out)


def _parse(path: Path, shown: str, kept: LoadAnswers | None = None) -> _Parsed:
    text = read_text(path, shown)
    if kept is None:
        return _parse_text(text, shown)
    from nemo_rl_workers.reading.load_answers import (
        KeptParse,
        parse_answer,
        parse_from,
        parse_question,
    )

    question = parse_question(shown, text)
    answer = kept.get(question, KeptParse)
    if answer is not None:
        return _Parsed(*parse_from(answer))
    parsed = _parse_text(text, shown)
    stored = parse_answer(parsed.data, parsed.lines)
    if stored is not None:
        kept.put(question, stored)
    return parsed


def _parse_text(text: str, shown: str) -> _Parsed:
    node, data = parse_yaml(text, shown)
    lines: Lines = {}
    if node is not None:
        _line_map(node, "", shown, lines)
    if data is None:
        data = {}  # an empty file is an empty config, as with OmegaConf.load
    if not isinstance(data, dict):
        raise ConfigLoadError(
            shown,
            f"must hold a mapping of keys to values at the top level, not a {type(data).__name__}",
            kind="not-mapping",
        )
    _check_plain(data, "", shown)
    return _Parsed(cast(dict[str, Any], data), lines)


_SCALARS = (str, int, float, bool, type(None))
_KEYS = (str, int)


def _check_plain(node: object, path: str, shown: str) -> None:
    """Only what a config can hold: YAML tags like !!set, !!binary or the pathlib
    constructors of OmegaConf's loader would otherwise reach the result."""
    if isinstance(node, dict):
        for key, value in node.items():
            if not isinstance(key, _KEYS) or isinstance(key, bool):
                raise ConfigLoadError(
                    shown,
                    f"has a key {key!r} under {path or 'the top level'}; keys must be names",
                    kind="yaml",
                )
            _check_plain(value, f"{path}.{key}" if path else str(key), shown)
    elif isinstance(node, list):
        for i, item in enumerate(node):
            _check_plain(item, f"{path}[{i}]", shown)
    elif not isinstance(node, _SCALARS):
        raise ConfigLoadError(
            shown,
            f"{path} holds a {type(node).__name__}; a config holds only strings, numbers, "
            "booleans, null, lists and mappings",
            kind="yaml",
        )


_PARSE_CACHE: dict[tuple[Path, int, int, str], tuple[_Parsed, Reads]] = {}
_PARSE_CACHE_FILES = 512
_PARSE_CACHE_MAX_BYTES = 256 * 1024


def _parse_cached(path: Path, real: Path, shown: str,
                  kept: LoadAnswers | None = None) -> _Parsed:
    """`_parse`, remembered per (file, mtime, size, shown name): recipes share parents.

    Parsed data is never mutated (merges copy what they change), so sharing is safe. What
    the parse read is kept with it and recorded again on every hit (`recorded_reads`).
    """
    try:
        stat = real.stat()
    except OSError:
        return _parse(path, shown)  # _parse reports it
    key = (real, stat.st_mtime_ns, stat.st_size, shown)
    cached = _PARSE_CACHE.get(key)
    if cached is not None:
        replay(cached[1])
        return cached[0]
    with recording() as reads:
        parsed = _parse(path, shown, kept)
    # A large file is kept alone (the last one parsed): `check` asks for its parse twice,
    # the load and its `defaults:` line, and parsing a 1 MiB config twice doubled its time.
    if stat.st_size > _PARSE_CACHE_MAX_BYTES:
        for large in [k for k in _PARSE_CACHE if k[2] > _PARSE_CACHE_MAX_BYTES]:
            del _PARSE_CACHE[large]
    elif len(_PARSE_CACHE) >= _PARSE_CACHE_FILES:
        _PARSE_CACHE.clear()
    _PARSE_CACHE[key] = (parsed, reads)
    return parsed


# ------------------------------------------------------------------------ merging


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith((prefix + ".", prefix + "["))


def _strip_markers(
    node: dict[Any, Any], prefix: str, shown: str, replaced: list[str], leaves: list[str]
) -> dict[Any, Any]:
    """A copy of `node` without `_override_` markers, noting what they replace.

    `replaced`: paths whose inherited section is dropped; `leaves`: paths set to a
    non-mapping, which replace whatever was inherited below them.
    """
    out: dict[Any, Any] = {}
    for key, value in node.items():
        if key == "_override_":
            continue
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict):
            marker = value.get("_override_", False)
            if not isinstance(marker, bool):
                raise ConfigLoadError(
                    shown,
                    f"{path}._override_ must be true or false, but is {marker!r}",
                    kind="defaults",
                )
            if marker:
                replaced.append(path)
            out[key] = _strip_markers(value, path, shown, replaced, leaves)
        else:
            leaves.append(path)
            out[key] = value
    return out


def _drop(data: dict[Any, Any], path: str) -> None:
    *parents, last = path.split(".")
    node: object = data
    for key in parents:
        if not isinstance(node, dict) or key not in node:
            return
        node = node[key]
    if isinstance(node, dict):
        node.pop(last, None)


def _merged(base: object, child: object) -> object:
    """OmegaConf.merge's rules for untyped configs, on plain data (OmegaConf's own
    merge costs ~0.05 s per file): mappings merge key by key, anything else
    replaces, and a `???` (missing) value does not replace a set one."""
    if isinstance(base, dict) and isinstance(child, dict):
        out = dict(base)
        for key, value in child.items():
            out[key] = _merged(out[key], value) if key in out else value
        return out
    if child == "???" and base is not None:
        return base
    return child


def _merge(base: _Parsed, child: _Parsed, shown: str) -> _Parsed:
    replaced: list[str] = []
    leaves: list[str] = []
    child_data = _strip_markers(child.data, "", shown, replaced, leaves)
    base_data = base.data
    if replaced:
        base_data = copy.deepcopy(base_data)
        for path in replaced:
            _drop(base_data, path)
    merged = _merged(base_data, child_data)
    # A path below one the child replaces is dropped: one test of its spelled prefixes.
    below = tuple(f"{path}{mark}" for path in {*replaced, *leaves} if path for mark in ".[")
    lines = {path: where for path, where in base.lines.items() if not path.startswith(below)}
    lines.update(
        (path, where) for path, where in child.lines.items() if not path.endswith("._override_")
    )
    return _Parsed(cast(dict[str, Any], merged), lines)


def _defaults_entries(data: Mapping[str, Any], shown: str) -> list[str]:
    value = data.get("defaults")
    if value is None:
        return []
    entries = [value] if isinstance(value, str) else value
    if not isinstance(entries, list) or not all(isinstance(e, str) and e for e in entries):
        raise ConfigLoadError(
            shown,
            f"defaults must be a file name or a list of file names, but is {value!r}"[:300],
            kind="defaults",
        )
    for entry in entries:
        if "\x00" in entry:  # no file name holds one; the OS would refuse it with ValueError
            raise ConfigLoadError(
                shown, f"defaults entry {entry!r} holds a NUL character"[:300], kind="defaults"
            )
    return cast(list[str], entries)


def _check_root(session: _Session, real: Path, shown: str, what: str) -> None:
    if session.root is not None and not real.is_relative_to(session.root):
        raise ConfigLoadError(
            shown,
            f"{what} resolves to {one_line(str(real))}, outside the allowed root "
            f"{one_line(str(session.root))}",
            kind="outside-root",
        )


@dataclass(frozen=True)
class _MergedParent:
    """A parent file with its whole `defaults:` chain merged, and what that depended on."""

    merged: _Parsed
    files: tuple[tuple[str, Path, int, int], ...]  # (path as named, real path, mtime, size)
    count: int  # files loaded, repeats included (MAX_FILES)
    depth: int  # how many levels of `defaults:` lie below it (MAX_DEFAULTS_DEPTH)


_MERGED: dict[tuple[str, Path | None], _MergedParent] = {}
_MERGED_MAX = 512
# While true, every load takes the reference path (`reference_loads`).
_REFERENCE = {"on": False}


def forget_loads() -> None:
    """Forget what this process kept of earlier loads (merged parents, parsed files,
    pruned resolutions): the next load reads and resolves as a new process's would."""
    _MERGED.clear()
    _PARSE_CACHE.clear()
    forget_resolutions()


@contextlib.contextmanager
def reference_loads() -> Generator[None]:
    """Inside, every load takes the reference path: each parent merged anew, OmegaConf
    over the whole merged config, nothing reused or kept. The answers are the fast
    path's by design; this is the oracle it is held to."""
    before = _REFERENCE["on"]
    _REFERENCE["on"] = True
    try:
        yield
    finally:
        _REFERENCE["on"] = before


def _signature(named: str) -> tuple[str, Path, int, int] | None:
    try:
        real = Path(named).resolve()
        st = real.stat()
    except (OSError, RuntimeError):
        return None
    return named, real, st.st_mtime_ns, st.st_size


def _reusable(
    session: _Session, path: Path, chain: tuple[tuple[Path, str], ...]
) -> _MergedParent | None:
    """A merged parent from an earlier load, when using it gives exactly what loading it
    again would: every file unchanged, no cycle through the current chain, and the file
    and depth limits not reached (else the uncached load reports them as it always did)."""
    entry = _MERGED.get((str(path), session.root))
    if entry is None:
        return None
    above = {real for real, _ in chain[:-1]}
    if any(_signature(named) != (named, real, mtime, size)
           or real in above for named, real, mtime, size in entry.files):
        return None
    if session.files_loaded + entry.count > MAX_FILES:
        return None
    if entry.depth and len(chain) + entry.depth - 1 >= MAX_DEFAULTS_DEPTH:
        return None
    return entry


def _load_chain(session: _Session, path: Path, chain: tuple[tuple[Path, str], ...]) -> _Parsed:
    """`path` merged over its `defaults:` chain. A parent (not the file asked for) is
    reused from an earlier load when that is exactly equivalent: hundreds of recipes
    share a handful of parents."""
    if len(chain) == 1 or _REFERENCE["on"]:
        return _load_chain_uncached(session, path, chain)
    entry = _reusable(session, path, chain)
    if entry is not None:
        session.files_loaded += entry.count
        for outer_files, outer_deepest in session.trail:  # enclosing parents depend on it too
            outer_files.extend(named for named, _, _, _ in entry.files)
            outer_deepest[0] = max(outer_deepest[0], len(chain) + entry.depth)
        return entry.merged
    count_before = session.files_loaded
    files: list[str] = []
    deepest = [len(chain)]
    session.trail.append((files, deepest))
    try:
        merged = _load_chain_uncached(session, path, chain)
    finally:
        session.trail.pop()
    for outer_files, outer_deepest in session.trail:
        outer_files.extend(files)
        outer_deepest[0] = max(outer_deepest[0], deepest[0])
    signatures = [_signature(named) for named in dict.fromkeys(files)]
    if all(sig is not None for sig in signatures):
        if len(_MERGED) >= _MERGED_MAX:
            _MERGED.clear()
        _MERGED[(str(path), session.root)] = _MergedParent(
            merged,
            tuple(sig for sig in signatures if sig is not None),
            session.files_loaded - count_before,
            deepest[0] - len(chain),
        )
    return merged


def _load_chain_uncached(
    session: _Session, path: Path, chain: tuple[tuple[Path, str], ...]
) -> _Parsed:
    shown = chain[-1][1]
    real = resolved(path, shown)
    for files, deepest in session.trail:
        files.append(str(path))
        deepest[0] = max(deepest[0], len(chain))
    parsed = session.parsed.get(real)
    if parsed is None:
        parsed = session.parsed[real] = _parse_cached(path, real, shown, session.kept)
    session.files_loaded += 1
    if session.files_loaded > MAX_FILES:
        raise ConfigLoadError(
            shown, f"defaults pull in more than {MAX_FILES} files", kind="too-deep"
        )
    merged = _Parsed({}, {})
    for entry in _defaults_entries(parsed.data, shown):
        target = Path(entry) if os.path.isabs(entry) else path.parent / entry
        target_shown = _display(target)
        target_real = resolved(target, target_shown)
        _check_root(session, target_real, shown, f"defaults entry {entry!r}")
        seen = [p for p, _ in chain]
        if target_real in seen:
            names = [name for _, name in chain[seen.index(target_real) :]]
            raise ConfigLoadError(
                shown, "defaults cycle: " + " -> ".join(map(one_line, [*names, target_shown])),
                kind="cycle",
            )
        if len(chain) >= MAX_DEFAULTS_DEPTH:
            raise ConfigLoadError(
                shown, f"defaults nest more than {MAX_DEFAULTS_DEPTH} files deep", kind="too-deep"
            )
        if not exists(target, target_shown):
            raise ConfigLoadError(
                shown,
                # Escaped here: the reason's whitespace is folded, a newline would vanish.
                f"defaults entry {entry!r} names {one_line(target_shown)}, which does not exist",
                kind="missing-default",
            )
        parent = _load_chain(session, target, (*chain, (target_real, target_shown)))
        merged = _merge(merged, parent, target_shown)
    own = _Parsed(
        {k: v for k, v in parsed.data.items() if k != "defaults"},
        {p: w for p, w in parsed.lines.items() if not _under(p, "defaults")},
    )
    return _merge(merged, own, shown)


def _load_merged(path: str | os.PathLike[str], root: str | os.PathLike[str] | None,
                 kept: LoadAnswers | None = None) -> _Parsed:
    session = _Session(root=Path(root).resolve() if root is not None else None, kept=kept)
    top = Path(path)
    shown = _display(top)
    if not exists(top, shown):
        raise ConfigLoadError(shown, "no such config file", kind="missing-file")
    real = resolved(top, shown)
    _check_root(session, real, shown, "the config file")
    try:
        return _load_chain(session, top, ((real, shown),))
    except RecursionError as e:  # pathological nesting inside OmegaConf
        raise ConfigLoadError(shown, "is nested too deeply", kind="yaml") from e


# ---------------------------------------------------------------------- overrides

_OVERRIDE = re.compile(r"(\+{0,2})([A-Za-z0-9_][\w\-]*(?:\.[\w\-]+)*)=(.*)", re.DOTALL)
MAX_OVERRIDE_CHARS = 64 * 1024
# Hydra's deletion, which upstream's suite scripts use (`~policy.tokenizer.chat_template`):
# `~key` deletes the key; `~key=value` only where it holds that value.
_DELETION = re.compile(r"~([A-Za-z0-9_][\w\-]*(?:\.[\w\-]+)*)(?:=(.*))?", re.DOTALL)


def _delete(data: dict[str, Any], item: str, key: str, text: str | None, shown: str) -> None:
    *parents, last = key.split(".")
    node: object = data
    for part in parents:
        node = node.get(part) if isinstance(node, dict) else None
    if not isinstance(node, dict) or last not in node:
        raise ConfigLoadError(
            shown, f"override {item!r}: {key} is not in the config, so it cannot be deleted",
            kind="override")
    if text is not None and node[last] != _override_value(text, item, shown):
        raise ConfigLoadError(
            shown, f"override {item!r}: {key} is {node[last]!r}, not the value given, so it "
            "is not deleted (Hydra refuses it too)", kind="override")
    del node[last]


def is_override(item: str) -> bool:
    """Whether a command-line argument is shaped like an override (`dotted.key=value`)."""
    return len(item) <= MAX_OVERRIDE_CHARS and _OVERRIDE.fullmatch(item) is not None


def _override_value(text: str, item: str, shown: str) -> object:
    if text == "":
        return ""  # `key=` sets an empty string, as in Hydra
    try:
        return parse_yaml(text, shown, max_nodes=1_000)[1]
    except ConfigLoadError as e:
        named = repr(item) if len(item) <= 80 else repr(item[:77]) + "..."
        raise ConfigLoadError(
            shown, f"override {named}: the value is not valid YAML ({e.reason})"[:600],
            kind="override",
        ) from e


def _not_a_mapping(item: str, walked: list[str], key: str, shown: str) -> ConfigLoadError:
    where = ".".join(walked)
    return ConfigLoadError(
        shown,
        f"override {item!r}: {where} is not a mapping, so it has no key {key!r}",
        kind="override",
    )


def _apply_override(data: dict[str, Any], item: str, shown: str) -> None:
    if len(item) > MAX_OVERRIDE_CHARS:
        raise ConfigLoadError(
            shown, f"an override is over {MAX_OVERRIDE_CHARS} characters", kind="override"
        )
    deletion = _DELETION.fullmatch(item)
    if deletion is not None:
        _delete(data, item, deletion.group(1), deletion.group(2), shown)
        return
    match = _OVERRIDE.fullmatch(item)
    if match is None:
        raise ConfigLoadError(
            shown,
            f"malformed override {item!r}: write dotted.key=value"
            " (or +dotted.key=value to add a key), e.g. policy.quant_cfg=FP8_DEFAULT_CFG",
            kind="override",
        )
    plus, key, text = match.groups()
    value = _override_value(text, item, shown)
    try:
        _check_plain(value, key, shown)  # the same values a file may hold: no !!binary, !!set
    except ConfigLoadError as e:
        raise ConfigLoadError(shown, f"override {key}: {e.reason}", kind="override") from e
    *parents, last = key.split(".")
    node: object = data
    walked: list[str] = []
    for part in parents:
        if isinstance(node, dict):
            if part not in node:
                if not plus:
                    break
                node[part] = {}
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise _not_a_mapping(item, walked, part, shown)
        walked.append(part)
    else:
        if isinstance(node, list) and last.isdigit() and int(last) < len(node):
            if plus == "+":
                raise ConfigLoadError(
                    shown, f"override {item!r}: {key} already exists; drop the '+'", kind="override"
                )
            node[int(last)] = value
            return
        if isinstance(node, dict):
            exists = last in node
            if exists and plus == "+":
                raise ConfigLoadError(
                    shown,
                    f"override {item!r}: {key} already exists; write {key}=... or ++{key}=...",
                    kind="override",
                )
            # Every parent exists, so a plain `key=value` may add the leaf: NeMo-RL users
            # write `policy.quant_cfg=FP8_DEFAULT_CFG` on configs that never mention it.
            node[last] = value
            return
        else:
            raise _not_a_mapping(item, walked, last, shown)
    raise ConfigLoadError(
        shown,
        f"override {item!r}: {'.'.join([*walked, parents[len(walked)]])} is not in the config;"
        f" write +{key}=... to create it",
        kind="override",
    )


# ------------------------------------------------------------------ interpolation


def _arithmetic(op: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def resolver(a: Any, b: Any) -> Any:
        result = op(a, b)
        # Repeated squaring through interpolation would otherwise build huge integers.
        if isinstance(result, int) and abs(result) > MAX_RESOLVER_INT:
            raise ValueError(f"integer result over {MAX_RESOLVER_INT}")
        if isinstance(result, (str, list)) and len(result) > MAX_EXPANDED_CHARS:
            raise ValueError(f"result over {MAX_EXPANDED_CHARS} items")
        return result

    return resolver


RESOLVERS: dict[str, Callable[[Any, Any], Any]] = {
    "add": _arithmetic(lambda a, b: a + b),
    "sub": _arithmetic(lambda a, b: a - b),
    "mul": _arithmetic(lambda a, b: a * b),
    "div": _arithmetic(lambda a, b: a / b),
    "max": _arithmetic(max),
}
"""Upstream NeMo-RL's resolvers, registered on first load unless already registered."""
SAFE_RESOLVERS = frozenset({*RESOLVERS, "oc.env"})
"""Resolvers that never look a config node up by name (their node arguments are `${...}`)."""


def register_resolvers() -> None:
    from omegaconf import OmegaConf  # loaded where a config interpolates, not before

    for name, fn in RESOLVERS.items():
        if not OmegaConf.has_resolver(name):
            register_resolver(name, fn)


def _interpolates(node: object) -> bool:
    if isinstance(node, dict):
        return any(_interpolates(v) for v in node.values())
    if isinstance(node, list):
        return any(_interpolates(v) for v in node)
    return isinstance(node, str) and "${" in node


def _omegaconf_resolved(data: dict[str, Any]) -> dict[str, Any]:
    from omegaconf import OmegaConf

    with memoized_select():  # each select once (check_budget counts them so)
        return cast(dict[str, Any], OmegaConf.to_container(OmegaConf.create(data), resolve=True))


def _resolve_kept(
    data: dict[str, Any], shown: str, needed: Callable[[str], bool] | None,
    kept: LoadAnswers | None,
) -> dict[str, Any]:
    """`_resolve`'s answer, from `kept` where it holds the answer to this question (the
    merged data, the environment variables it interpolates, `needed`'s name)."""
    from nemo_rl_workers.reading.load_answers import (
        KeptResolution,
        note_interpolated_environ,
        resolution_question,
        storable,
    )

    if not _interpolates(data):
        return _resolve(data, shown, needed)
    note_interpolated_environ(data)
    if kept is None:
        return _resolve(data, shown, needed)

    question = resolution_question(data, needed)
    if question is None:
        return _resolve(data, shown, needed)
    answer = kept.get(question, KeptResolution)
    found = answer.config if answer is not None else None
    if found is not None:
        # What resolving walks first (the budget, which remembers every value read through
        # `${oc.env:...}` so that output redacts it): a kept answer is redacted alike.
        check_budget(data, shown)
        return found
    config = _resolve(data, shown, needed)
    if storable(config):
        kept.put(question, KeptResolution(config))
    return config


def _resolve(
    data: dict[str, Any], shown: str, needed: Callable[[str], bool] | None = None
) -> dict[str, Any]:
    if needed is not None:
        try:
            return _resolve(data, shown)
        except ConfigLoadError as error:
            if error.kind != "interpolation":
                raise
            return _resolve_unset_env(data, shown, needed, error)
    if not _interpolates(data):
        return cast(dict[str, Any], plain_copy(data))  # nothing for OmegaConf to do
    register_resolvers()
    check_budget(data, shown)
    with within_time(shown):
        # OmegaConf on just the interpolating part (same answers, a fraction of the nodes);
        # the whole config when that cannot be done with certainty, or fails.
        fast = None if _REFERENCE["on"] else resolve_pruned(data, SAFE_RESOLVERS,
                                                            _omegaconf_resolved)
        if fast is not None:
            return fast
        return _resolve_whole(data, shown)


# `${oc.env:NAME}` without a default (OmegaConf's grammar allows spaces and quotes).
_ENV_REFERENCE = re.compile(r"""\$\{\s*oc\.env\s*:\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)\1\s*\}""")
# What stands for an unset variable while resolving: no `${`, nothing a config holds.
_UNSET_MARK = "\ue000unset-env:{name}\ue000"
_UNSET_FOUND = re.compile("\ue000unset-env:([A-Za-z_][A-Za-z0-9_]*)\ue000")


def _leaves(node: object, at: str) -> list[tuple[str, object]]:
    """(dotted path, value) of every leaf, lists as `key[i]` (Problem paths)."""
    if isinstance(node, dict):
        return [leaf for key, value in node.items()
                for leaf in _leaves(value, f"{at}.{key}" if at else str(key))]
    if isinstance(node, list):
        return [leaf for i, value in enumerate(node) for leaf in _leaves(value, f"{at}[{i}]")]
    return [(at, node)]


def _marked(node: object) -> object:
    """`node` with each `${oc.env:NAME}` of an unset NAME replaced by its mark."""
    if isinstance(node, dict):
        return {key: _marked(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_marked(value) for value in node]
    if isinstance(node, str) and "${" in node:
        return _ENV_REFERENCE.sub(
            lambda m: m[0] if m[2] in ENVIRON else _UNSET_MARK.format(name=m[2]), node)
    return node


def _put_back(resolved: object, data: object) -> object:
    """`resolved`, with each value holding a mark set back to the text `data` has there."""
    if isinstance(resolved, dict) and isinstance(data, dict):
        return {key: _put_back(value, data.get(key)) for key, value in resolved.items()}
    if isinstance(resolved, list) and isinstance(data, list) and len(resolved) == len(data):
        return [_put_back(value, raw) for value, raw in zip(resolved, data, strict=True)]
    if isinstance(resolved, str) and _UNSET_FOUND.search(resolved):
        return data
    return resolved


def _resolve_unset_env(
    data: dict[str, Any], shown: str, needed: Callable[[str], bool], error: ConfigLoadError
) -> dict[str, Any]:
    """`data` resolved with unset `${oc.env:...}` variables left where nothing `needed`
    reads them: each value built from one keeps its text. A needed one, or anything else
    that fails, raises (`error`, the full resolution's, unless a needed key is named)."""
    marked = cast(dict[str, Any], _marked(data))
    if marked == data:
        raise error
    try:
        check_budget(marked, shown)
        with within_time(shown):
            resolved = None if _REFERENCE["on"] else resolve_pruned(
                marked, SAFE_RESOLVERS, _omegaconf_resolved)
            if resolved is None:
                resolved = _resolve_whole(marked, shown)
    except ConfigLoadError:
        raise error from None
    for path, value in _leaves(resolved, ""):
        found = _UNSET_FOUND.search(value) if isinstance(value, str) else None
        if found is not None and needed(path):
            raise ConfigLoadError(
                shown, f"interpolation failed at {path}: environment variable "
                f"{found[1]!r} is not set (${{oc.env:{found[1]}}}), and check reads this key",
                kind="interpolation") from error
    return cast(dict[str, Any], _put_back(resolved, data))


def _resolve_whole(data: dict[str, Any], shown: str) -> dict[str, Any]:
    """Resolution by OmegaConf over the whole config: the reference answer and error."""
    from omegaconf.errors import OmegaConfBaseException

    try:
        resolved = _omegaconf_resolved(data)
    except OmegaConfBaseException as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        key = getattr(e, "full_key", None)
        where = f" at {key}" if key else ""
        raise ConfigLoadError(
            shown, f"interpolation failed{where}: {first}", kind="interpolation"
        ) from e
    except (RecursionError, ArithmeticError, ValueError) as e:
        raise ConfigLoadError(shown, f"interpolation failed: {e}", kind="interpolation") from e
    return resolved


# ------------------------------------------------------------------------- public


def load_config_located(
    path: str | os.PathLike[str],
    overrides: Sequence[str] = (),
    *,
    root: str | os.PathLike[str] | None = None,
    needed: Callable[[str], bool] | None = None,
    kept: LoadAnswers | None = None,
) -> LoadedConfig:
    """The resolved config and, for each dotted path, the file and line that set it.

    Lines come from the files only: a key set by a command-line override keeps the
    line of the file that set it before (or has none, when the override added it).

    With `needed` (dotted path -> whether the caller reads it), a `${oc.env:NAME}` of
    an unset variable fails the load only where a needed key's value is built from it;
    elsewhere (a recipe's `data:` paths under `$HF_HOME`) the value keeps its text.
    With `kept`, a parse or resolution made before on the same text, data and environment
    is taken from it (`load_answers`), and a new one stored there.
    """
    merged = _load_merged(path, root, kept)
    shown = _display(Path(path))
    data = merged.data
    if overrides:
        data = copy.deepcopy(data)
        for item in overrides:
            _apply_override(data, item, shown)
    config = _resolve_kept(data, shown, needed, kept)
    # So Policy / VllmGeneration can name the file and line of a section's problems.
    remember(config, shown, merged.lines)
    return LoadedConfig(config, merged.lines)


def load_config(
    path: str | os.PathLike[str],
    overrides: Sequence[str] = (),
    *,
    root: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Load a NeMo-RL YAML config into a plain, fully resolved dict.

    `overrides` are command-line items such as `policy.quant_cfg=FP8_DEFAULT_CFG`.
    With `root`, every file read (the config and its `defaults:`) must lie inside
    it. Raises ConfigLoadError (one line) for any unusable input.
    """
    return load_config_located(path, overrides, root=root).config


def key_lines(path: str | os.PathLike[str], *, root: str | os.PathLike[str] | None = None) -> Lines:
    """Dotted path -> (file, 1-based line) where the merged config sets it.

    Follows the `defaults:` chain with the same precedence as `load_config` (the
    child that set a key last wins; `_override_` drops the inherited lines). It
    parses and merges but does not resolve interpolations. List items appear as
    `teachers[1]`, matching Problem paths.
    """
    return _load_merged(path, root).lines


def defaults_line(path: str | os.PathLike[str]) -> int | None:
    """The line of `path`'s own `defaults:` key (what brings inherited values into it), or
    None when it has none or cannot be read. Its load's parse is reused (`_parse_cached`)."""
    shown = _display(Path(path))
    try:
        parsed = _parse_cached(Path(path), resolved(Path(path), shown), shown)
    except ConfigLoadError:
        return None
    found = parsed.lines.get("defaults")
    return found[1] if found is not None else None


def key_line(
    path: str | os.PathLike[str],
    dotted_key: str,
    *,
    root: str | os.PathLike[str] | None = None,
) -> tuple[str, int] | None:
    """(file, 1-based line) where `dotted_key` is set, or None when no file sets it."""
    return key_lines(path, root=root).get(dotted_key)
