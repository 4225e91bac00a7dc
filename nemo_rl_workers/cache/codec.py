"""The one codec of cached values: typed Python values to JSON and back, by their types.

`encode` turns a value made of frozen dataclasses, tuples, lists, frozensets, mappings with
string keys, `str`, `int`, `float`, `bool` and `None` into JSON; `decode(kind, raw)` gives
it back as `kind` says (a dataclass's field types, read from its annotations; `X | None`;
`Literal[...]`; `Any` holds JSON as it is), or `CodecError` where any part of `raw` is not
of its type: a stored entry of another shape is a miss for its reader, never a crash.
A dataclass field marked `NOT_STORED` (a handle, never part of what the value says) is
left out and takes its default. `VERSION` is part of every entry's format and key: a
change of what the codec writes leaves old entries unread.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, TypeVar, Union, cast

VERSION = 1
NOT_STORED: Mapping[str, bool] = types.MappingProxyType({"cache.stored": False})
_T = TypeVar("_T")


class CodecError(ValueError):
    """A stored value that is not of the type it is read as (one phrase: what and where)."""


def encode(value: object) -> object:
    """The JSON form of `value` (see the module docstring); TypeError for a value of a
    type the codec does not write."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: encode(getattr(value, f.name)) for f in _stored_fields(type(value))}
    if isinstance(value, (frozenset, set)):
        items = [encode(item) for item in value]
        return sorted(items, key=lambda item: json.dumps(item, sort_keys=True))
    if isinstance(value, (tuple, list)):
        return [encode(item) for item in value]
    if isinstance(value, Mapping):
        if not all(isinstance(k, str) for k in value):
            raise TypeError("a mapping whose keys are not all strings")
        return {k: encode(v) for k, v in value.items()}
    raise TypeError(f"a {type(value).__name__} is not a value the cache stores")


def decode(kind: type[_T], raw: object) -> _T:
    """`raw` (JSON, as `encode` writes it) as a value of `kind`, or CodecError."""
    try:
        return cast(_T, _decode(kind, raw, "payload"))
    except RecursionError as deep:
        raise CodecError("a value nested too deep") from deep


def _stored_fields(cls: type) -> tuple[dataclasses.Field[Any], ...]:
    return tuple(f for f in dataclasses.fields(cls) if f.metadata.get("cache.stored", True))


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _fail(raw: object, what: str, where: str) -> CodecError:
    return CodecError(f"a {type(raw).__name__} where {what} belongs ({where})")


def _decode(kind: Any, raw: object, where: str) -> object:
    if kind is Any:
        return raw
    origin = typing.get_origin(kind)
    args = typing.get_args(kind)
    if origin is Literal:
        if any(type(raw) is type(a) and raw == a for a in args):
            return raw
        raise CodecError(f"{raw!r} is none of {list(args)} ({where})")
    if origin in (Union, types.UnionType):
        errors: list[CodecError] = []
        for arm in args:
            try:
                return _decode(arm, raw, where)
            except CodecError as bad:
                errors.append(bad)
        # What the value is wrong as, where it is not None: its own arm's reason.
        raise next((e for a, e in zip(args, errors, strict=True) if a is not type(None)),
                   errors[0])
    if kind is type(None):
        if raw is None:
            return None
        raise _fail(raw, "None", where)
    if kind in (str, bool):
        if type(raw) is kind:
            return raw
        raise _fail(raw, f"a {kind.__name__}", where)
    if kind is int:
        if type(raw) is int:
            return raw
        raise _fail(raw, "an int", where)
    if kind is float:
        if type(raw) in (int, float):
            return float(cast(float, raw))
        raise _fail(raw, "a float", where)
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return _dataclass(kind, raw, where)
    if origin in (tuple, list, frozenset, set):
        if not isinstance(raw, list):
            raise _fail(raw, f"a {origin.__name__}", where)
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            if len(raw) != len(args):
                raise CodecError(f"{len(raw)} items where {len(args)} belong ({where})")
            return tuple(_decode(a, item, f"{where}[{i}]")
                         for i, (a, item) in enumerate(zip(args, raw, strict=True)))
        items = [_decode(args[0], item, f"{where}[{i}]") for i, item in enumerate(raw)]
        return origin(items)
    if origin in (dict, Mapping, typing.Mapping) or kind is dict:
        if not isinstance(raw, dict):
            raise _fail(raw, "a mapping", where)
        key_kind, value_kind = args or (str, Any)
        return {_decode(key_kind, k, where): _decode(value_kind, v, f"{where}[{k!r}]")
                for k, v in raw.items()}
    raise CodecError(f"{kind!r} is not a type the cache reads ({where})")


def _dataclass(cls: type, raw: object, where: str) -> object:
    if not isinstance(raw, dict):
        raise _fail(raw, cls.__name__, where)
    stored = _stored_fields(cls)
    names = {f.name for f in stored}
    if set(raw) != names:
        raise CodecError(f"a {cls.__name__} of other fields ({where})")
    hints = _hints(cls)
    values = {f.name: _decode(hints[f.name], raw[f.name], f"{where}.{f.name}") for f in stored}
    try:
        return cls(**values)
    except (TypeError, ValueError) as bad:  # a value its own checks refuse
        raise CodecError(f"a {cls.__name__} its constructor refuses ({where})") from bad
