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

Configs are untrusted input. Every way a file can be unusable (missing, too big,
not UTF-8, not YAML, an alias bomb, an interpolation bomb, a `defaults:` cycle, a
parent outside `root`, a top level that is not a mapping) raises ConfigLoadError
with a one-line message, after bounded work; OmegaConf and YAML exceptions never
escape.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NamedTuple, cast

import yaml
from omegaconf import OmegaConf
from omegaconf._yaml import get_yaml_loader  # the loader OmegaConf.load itself uses
from omegaconf.errors import OmegaConfBaseException

from nemo_rl.config.origin import remember

MAX_FILE_BYTES = 8 * 1024 * 1024
"""A config file larger than this is rejected before it is read."""
MAX_YAML_NODES = 100_000
"""YAML nodes per file after alias expansion (OmegaConf also caps the alias ratio at 100x)."""
MAX_DEFAULTS_DEPTH = 32
"""How deep a `defaults:` chain may nest."""
MAX_FILES = 256
"""How many files one config may pull in through `defaults:`, counting repeats."""
MAX_EXPANDED_CHARS = 8 * 1024 * 1024
"""Characters the config may hold once every `${...}` is expanded."""
MAX_RESOLVER_INT = 2**63
"""The magnitude beyond which the arithmetic resolvers refuse an integer result."""

LoadErrorKind = Literal[
    "missing-file",  # the config file itself does not exist
    "missing-default",  # a `defaults:` entry names a file that does not exist
    "not-a-file",  # a directory, device or pipe
    "unreadable",  # the operating system refused to read it
    "too-large",  # over MAX_FILE_BYTES, or YAML aliases expanding past MAX_YAML_NODES
    "not-utf8",
    "yaml",  # YAML syntax, duplicate keys, alias bombs and the like
    "not-mapping",  # the top level is not a mapping
    "defaults",  # a malformed `defaults:` value or `_override_` marker
    "cycle",
    "outside-root",
    "too-deep",  # MAX_DEFAULTS_DEPTH or MAX_FILES exceeded
    "override",  # a malformed or inapplicable command-line override
    "interpolation",  # a `${...}` that does not resolve, or expands too far
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
        return f"{self.file}: {self.reason}" if self.file is not None else self.reason


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
    parsed: dict[Path, _Parsed] = field(default_factory=dict)
    files_loaded: int = 0


# --------------------------------------------------------------------------- files


def _display(path: Path) -> str:
    return os.path.normpath(str(path))


def _read_text(path: Path, shown: str) -> str:
    try:
        size = path.stat().st_size
        if not path.is_file():
            raise ConfigLoadError(shown, "is not a regular file", kind="not-a-file")
        if size > MAX_FILE_BYTES:
            raise ConfigLoadError(
                shown,
                f"is {size} bytes, over the {MAX_FILE_BYTES}-byte limit for a config file",
                kind="too-large",
            )
        with path.open("rb") as f:
            raw = f.read(MAX_FILE_BYTES + 1)  # the file may have grown since stat
    except OSError as e:
        raise ConfigLoadError(shown, f"cannot be read: {e.strerror or e}", kind="unreadable") from e
    if len(raw) > MAX_FILE_BYTES:
        raise ConfigLoadError(
            shown, f"is over the {MAX_FILE_BYTES}-byte limit for a config file", kind="too-large"
        )
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ConfigLoadError(
            shown,
            f"is not UTF-8 text (byte 0x{raw[e.start]:02x} at offset {e.start})",
            kind="not-utf8",
        ) from e


def _yaml_reason(e: yaml.YAMLError) -> str:
    if isinstance(e, yaml.MarkedYAMLError):
        mark = e.problem_mark or e.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        context = f"{e.context}; " if e.context else ""
        return f"invalid YAML{where}: {context}{e.problem or ''}"
    return f"invalid YAML: {e}"


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


_EXPANSION_PROBLEMS = ("YAML node expansion", "YAML aliases expand", "YAML recursive aliases")


def _parse(path: Path, shown: str) -> _Parsed:
    text = _read_text(path, shown)
    loader = get_yaml_loader(max_yaml_expanded_nodes=MAX_YAML_NODES)(text)
    try:
        node = loader.get_single_node()
        # construct_document enforces OmegaConf's alias limits before building anything.
        data = loader.construct_document(node) if node is not None else None
        lines: Lines = {}
        if node is not None:
            _line_map(node, "", shown, lines)
    except yaml.constructor.ConstructorError as e:
        if str(e.problem).startswith(_EXPANSION_PROBLEMS):  # OmegaConf's alias-bomb guard
            raise ConfigLoadError(
                shown,
                f"YAML aliases expand past {MAX_YAML_NODES} nodes or 100 times the nodes "
                "written (a 'billion laughs' file?); refusing to expand them",
                kind="too-large",
            ) from e
        raise ConfigLoadError(shown, _yaml_reason(e), kind="yaml") from e
    except yaml.YAMLError as e:
        raise ConfigLoadError(shown, _yaml_reason(e), kind="yaml") from e
    except RecursionError as e:
        raise ConfigLoadError(shown, "is nested too deeply", kind="yaml") from e
    finally:
        loader.dispose()
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


_PARSE_CACHE: dict[tuple[Path, int, int, str], _Parsed] = {}
_PARSE_CACHE_FILES = 512
_PARSE_CACHE_MAX_BYTES = 256 * 1024


def _parse_cached(path: Path, real: Path, shown: str) -> _Parsed:
    """`_parse`, remembered per (file, mtime, size, shown name): recipes share parents.

    Parsed data is never mutated (merges copy what they change), so sharing is safe.
    """
    try:
        stat = real.stat()
    except OSError:
        return _parse(path, shown)  # _parse reports it
    key = (real, stat.st_mtime_ns, stat.st_size, shown)
    cached = _PARSE_CACHE.get(key)
    if cached is None:
        cached = _parse(path, shown)
        if stat.st_size <= _PARSE_CACHE_MAX_BYTES:
            if len(_PARSE_CACHE) >= _PARSE_CACHE_FILES:
                _PARSE_CACHE.clear()
            _PARSE_CACHE[key] = cached
    return cached


# ------------------------------------------------------------------------ merging


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith((prefix + ".", prefix + "["))


def _ancestors(path: str) -> list[str]:
    """The proper prefixes of a dotted path: `a.b[0].c` -> `a`, `a.b`, `a.b[0]`."""
    return [path[:i] for i, ch in enumerate(path) if ch in ".[" and i > 0]


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
    cut = {*replaced, *leaves}
    lines = {
        path: where
        for path, where in base.lines.items()
        if not any(prefix in cut for prefix in _ancestors(path))
    }
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
            f"{what} resolves to {real}, outside the allowed root {session.root}",
            kind="outside-root",
        )


def _load_chain(session: _Session, path: Path, chain: tuple[tuple[Path, str], ...]) -> _Parsed:
    shown = chain[-1][1]
    real = path.resolve()
    parsed = session.parsed.get(real)
    if parsed is None:
        parsed = session.parsed[real] = _parse_cached(path, real, shown)
    session.files_loaded += 1
    if session.files_loaded > MAX_FILES:
        raise ConfigLoadError(
            shown, f"defaults pull in more than {MAX_FILES} files", kind="too-deep"
        )
    merged = _Parsed({}, {})
    for entry in _defaults_entries(parsed.data, shown):
        target = Path(entry) if os.path.isabs(entry) else path.parent / entry
        target_shown = _display(target)
        target_real = target.resolve()
        _check_root(session, target_real, shown, f"defaults entry {entry!r}")
        seen = [p for p, _ in chain]
        if target_real in seen:
            names = [name for _, name in chain[seen.index(target_real) :]]
            raise ConfigLoadError(
                shown, "defaults cycle: " + " -> ".join([*names, target_shown]), kind="cycle"
            )
        if len(chain) >= MAX_DEFAULTS_DEPTH:
            raise ConfigLoadError(
                shown, f"defaults nest more than {MAX_DEFAULTS_DEPTH} files deep", kind="too-deep"
            )
        if not target.exists():
            raise ConfigLoadError(
                shown,
                f"defaults entry {entry!r} names {target_shown}, which does not exist",
                kind="missing-default",
            )
        parent = _load_chain(session, target, (*chain, (target_real, target_shown)))
        merged = _merge(merged, parent, target_shown)
    own = _Parsed(
        {k: v for k, v in parsed.data.items() if k != "defaults"},
        {p: w for p, w in parsed.lines.items() if not _under(p, "defaults")},
    )
    return _merge(merged, own, shown)


def _load_merged(path: str | os.PathLike[str], root: str | os.PathLike[str] | None) -> _Parsed:
    session = _Session(root=Path(root).resolve() if root is not None else None)
    top = Path(path)
    shown = _display(top)
    if not top.exists():
        raise ConfigLoadError(shown, "no such config file", kind="missing-file")
    real = top.resolve()
    _check_root(session, real, shown, "the config file")
    try:
        return _load_chain(session, top, ((real, shown),))
    except RecursionError as e:  # pathological nesting inside OmegaConf
        raise ConfigLoadError(shown, "is nested too deeply", kind="yaml") from e


# ---------------------------------------------------------------------- overrides

_OVERRIDE = re.compile(r"(\+{0,2})([A-Za-z0-9_][\w\-]*(?:\.[\w\-]+)*)=(.*)", re.DOTALL)
MAX_OVERRIDE_CHARS = 64 * 1024


def _override_value(text: str, item: str, shown: str) -> object:
    if text == "":
        return ""  # `key=` sets an empty string, as in Hydra
    loader = get_yaml_loader(max_yaml_expanded_nodes=1_000)(text)
    try:
        return loader.get_single_data()
    except yaml.YAMLError as e:
        raise ConfigLoadError(
            shown,
            f"override {item!r}: the value is not valid YAML ({_yaml_reason(e)})",
            kind="override",
        ) from e
    finally:
        loader.dispose()


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

_REFERENCE = re.compile(r"\$\{([^${}]*)\}")  # the innermost `${...}`; resolver calls hold ':'


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


def register_resolvers() -> None:
    for name, fn in RESOLVERS.items():
        if not OmegaConf.has_resolver(name):
            OmegaConf.register_resolver(name, fn)


def _expanded_size(data: dict[str, Any], shown: str) -> int:
    """An upper estimate of the characters in `data` once every `${ref}` is expanded.

    Linear in the config's size (each node is measured once), so a chain of strings
    each repeating the previous one ten times is refused before OmegaConf builds it.
    """
    memo: dict[tuple[str, ...], int] = {}
    active: set[tuple[str, ...]] = set()

    def lookup(path: tuple[str, ...]) -> object:
        node: object = data
        for part in path:
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                return None
        return node

    def target(ref: str, at: tuple[str, ...]) -> tuple[str, ...]:
        dots = len(ref) - len(ref.lstrip("."))
        parts = tuple(p for p in re.split(r"[.\[\]]+", ref[dots:]) if p)
        if dots == 0:
            return parts
        return at[: max(len(at) - dots, 0)] + parts  # `.x` is a sibling, `..x` an uncle

    def size(path: tuple[str, ...]) -> int:
        if path in memo:
            return memo[path]
        if path in active:
            return 0  # a cycle; OmegaConf reports it when resolving
        active.add(path)
        node = lookup(path)
        total = 0
        if isinstance(node, dict):
            total = sum(size((*path, str(k))) + len(str(k)) for k in node)
        elif isinstance(node, list):
            total = sum(size((*path, str(i))) + 1 for i in range(len(node)))
        elif isinstance(node, str):
            total = len(node)
            for match in _REFERENCE.finditer(node):
                if ":" not in match.group(1):
                    total += size(target(match.group(1).strip(), path))
                if total > MAX_EXPANDED_CHARS:
                    break
        else:
            total = len(str(node))
        active.discard(path)
        memo[path] = total
        if total > MAX_EXPANDED_CHARS:
            where = ".".join(path) or "the config"
            raise ConfigLoadError(
                shown,
                f"interpolations in {where} would expand to over {MAX_EXPANDED_CHARS} characters",
                kind="interpolation",
            )
        return total

    return size(())


def _interpolates(node: object) -> bool:
    if isinstance(node, dict):
        return any(_interpolates(v) for v in node.values())
    if isinstance(node, list):
        return any(_interpolates(v) for v in node)
    return isinstance(node, str) and "${" in node


def _resolve(data: dict[str, Any], shown: str) -> dict[str, Any]:
    if not _interpolates(data):
        return copy.deepcopy(data)  # nothing for OmegaConf to do; it would only copy slowly
    register_resolvers()
    _expanded_size(data, shown)
    try:
        resolved = OmegaConf.to_container(OmegaConf.create(data), resolve=True)
    except OmegaConfBaseException as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        key = getattr(e, "full_key", None)
        where = f" at {key}" if key else ""
        raise ConfigLoadError(
            shown, f"interpolation failed{where}: {first}", kind="interpolation"
        ) from e
    except (RecursionError, ArithmeticError, ValueError) as e:
        raise ConfigLoadError(shown, f"interpolation failed: {e}", kind="interpolation") from e
    return cast(dict[str, Any], resolved)


# ------------------------------------------------------------------------- public


def load_config_located(
    path: str | os.PathLike[str],
    overrides: Sequence[str] = (),
    *,
    root: str | os.PathLike[str] | None = None,
) -> LoadedConfig:
    """The resolved config and, for each dotted path, the file and line that set it.

    Lines come from the files only: a key set by a command-line override keeps the
    line of the file that set it before (or has none, when the override added it).
    """
    merged = _load_merged(path, root)
    shown = _display(Path(path))
    data = merged.data
    if overrides:
        data = copy.deepcopy(data)
        for item in overrides:
            _apply_override(data, item, shown)
    config = _resolve(data, shown)
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


def key_line(
    path: str | os.PathLike[str],
    dotted_key: str,
    *,
    root: str | os.PathLike[str] | None = None,
) -> tuple[str, int] | None:
    """(file, 1-based line) where `dotted_key` is set, or None when no file sets it."""
    return key_lines(path, root=root).get(dotted_key)
