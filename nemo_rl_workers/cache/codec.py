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
from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeVar, Union, cast

VERSION = 1
NOT_STORED: Mapping[str, bool] = types.MappingProxyType({"cache.stored": False})
_T = TypeVar("_T")


class CodecError(ValueError):
    """A stored value that is not of the type it is read as (one phrase: what and where)."""


def encode(value: object) -> object:
    """The JSON form of `value` (see the module docstring); TypeError for a value of a
    type the codec does not write."""
    kind: type = type(value)
    return _encoder(kind)(value)


_Encoder = Callable[[object], object]


@functools.cache
def _encoder(kind: type) -> _Encoder:
    """How a value of `kind` is written, worked out once per type (a kept report holds
    some 100,000 values: asking each what it is costs more than writing it)."""
    if kind is type(None) or issubclass(kind, (str, bool, int, float)):
        return lambda value: value
    if _is_dataclass(kind):
        names = tuple(f.name for f in _stored_fields(kind))
        return lambda value: {name: encode(getattr(value, name)) for name in names}
    if issubclass(kind, (frozenset, set)):
        return _encode_set
    if issubclass(kind, (tuple, list)):
        return lambda value: [encode(item) for item in cast(list[object], value)]
    if issubclass(kind, Mapping):
        return _encode_mapping

    def unwritten(value: object) -> object:
        raise TypeError(f"a {kind.__name__} is not a value the cache stores")
    return unwritten


def _is_dataclass(kind: type) -> bool:
    return dataclasses.is_dataclass(kind)


def _encode_set(value: object) -> object:
    items = [encode(item) for item in cast(set[object], value)]
    return sorted(items, key=lambda item: json.dumps(item, sort_keys=True))


def _encode_mapping(value: object) -> object:
    mapping = cast(Mapping[object, object], value)
    if not all(isinstance(k, str) for k in mapping):
        raise TypeError("a mapping whose keys are not all strings")
    return {k: encode(v) for k, v in mapping.items()}


def decode(kind: type[_T], raw: object) -> _T:
    """`raw` (JSON, as `encode` writes it) as a value of `kind`, or CodecError."""
    try:
        return cast(_T, _decoder(cast(Any, kind))(raw))
    except _Bad as bad:
        raise CodecError(f"{bad.what} ({''.join(['payload', *reversed(bad.where)])})") from None
    except RecursionError as deep:
        raise CodecError("a value nested too deep") from deep


class _Bad(Exception):
    """A value not of its type; where it is, gathered part by part on the way out (a kept
    report holds some 100,000 values: spelling each one's place would cost more than
    reading it)."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what
        self.where: list[str] = []  # innermost first

    def at(self, part: str) -> _Bad:
        self.where.append(part)
        return self


_Decoder = Callable[[object], object]


def _stored_fields(cls: type) -> tuple[dataclasses.Field[Any], ...]:
    return tuple(f for f in dataclasses.fields(cls) if f.metadata.get("cache.stored", True))


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _fail(raw: object, what: str) -> _Bad:
    return _Bad(f"a {type(raw).__name__} where {what} belongs")


@functools.cache
def _decoder(kind: Any) -> _Decoder:
    """How a value of `kind` is read, worked out once per type."""
    if kind is Any:
        return lambda raw: raw
    origin = typing.get_origin(kind)
    args = typing.get_args(kind)
    if origin is Literal:
        def literal(raw: object) -> object:
            if any(type(raw) is type(a) and raw == a for a in args):
                return raw
            raise _Bad(f"{raw!r} is none of {list(args)}")
        return literal
    if origin in (Union, types.UnionType):
        arms = [(arm, _decoder(arm)) for arm in args]

        def union(raw: object) -> object:
            errors: list[_Bad] = []
            for _, arm in arms:
                try:
                    return arm(raw)
                except _Bad as bad:
                    errors.append(bad)
            # What the value is wrong as, where it is not None: its own arm's reason.
            raise next((e for (a, _), e in zip(arms, errors, strict=True)
                        if a is not type(None)), errors[0])
        return union
    if kind is type(None):
        def none(raw: object) -> object:
            if raw is None:
                return None
            raise _fail(raw, "None")
        return none
    if kind in (str, bool, int):
        what = f"an {kind.__name__}" if kind is int else f"a {kind.__name__}"

        def exact(raw: object) -> object:
            if type(raw) is kind:
                return raw
            raise _fail(raw, what)
        return exact
    if kind is float:
        def number(raw: object) -> object:
            if type(raw) in (int, float):
                return float(cast(float, raw))
            raise _fail(raw, "a float")
        return number
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return _dataclass_decoder(kind)
    if origin in (tuple, list, frozenset, set):
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            fixed = [_decoder(a) for a in args]

            def row(raw: object) -> object:
                if not isinstance(raw, list):
                    raise _fail(raw, "a tuple")
                if len(raw) != len(fixed):
                    raise _Bad(f"{len(raw)} items where {len(fixed)} belong")
                out: list[object] = []
                try:
                    for read, item in zip(fixed, raw, strict=True):
                        out.append(read(item))
                except _Bad as bad:
                    raise bad.at(f"[{len(out)}]") from None
                return tuple(out)
            return row
        read_item = _decoder(args[0])
        name = origin.__name__

        def sequence(raw: object) -> object:
            if not isinstance(raw, list):
                raise _fail(raw, f"a {name}")
            out: list[object] = []
            try:
                for item in raw:
                    out.append(read_item(item))
            except _Bad as bad:
                raise bad.at(f"[{len(out)}]") from None
            return origin(out)
        return sequence
    if origin in (dict, Mapping, typing.Mapping) or kind is dict:
        key_kind, value_kind = args or (str, Any)
        read_key, read_value = _decoder(key_kind), _decoder(value_kind)

        def mapping(raw: object) -> object:
            if not isinstance(raw, dict):
                raise _fail(raw, "a mapping")
            out: dict[object, object] = {}
            for k, v in raw.items():
                key = read_key(k)  # a key's fault is the mapping's place
                try:
                    out[key] = read_value(v)
                except _Bad as bad:
                    raise bad.at(f"[{k!r}]") from None
            return out
        return mapping

    def unread(raw: object) -> object:
        raise _Bad(f"{kind!r} is not a type the cache reads")
    return unread


def _dataclass_decoder(cls: type) -> _Decoder:
    stored = _stored_fields(cls)
    names = {f.name for f in stored}
    fields: list[tuple[str, _Decoder]] = []

    def read(raw: object) -> object:
        if not isinstance(raw, dict):
            raise _fail(raw, cls.__name__)
        if raw.keys() != names:
            raise _Bad(f"a {cls.__name__} of other fields")
        if not fields:  # a field's type may be this class: worked out on first use
            hints = _hints(cls)
            fields.extend((f.name, _decoder(hints[f.name])) for f in stored)
        values: dict[str, object] = {}
        for name, decoder in fields:
            try:
                values[name] = decoder(raw[name])
            except _Bad as bad:
                raise bad.at(f".{name}") from None
        try:
            return cls(**values)
        except (TypeError, ValueError) as bad:  # a value its own checks refuse
            raise _Bad(f"a {cls.__name__} its constructor refuses") from bad
    return read
