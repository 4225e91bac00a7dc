"""Every cached computation is keyed by its declared inputs (issue 45, item 4): changing
any one field of its inputs gives another key, so the entry stored before is a miss; the
inputs are a dataclass with no defaults (a missing input is a type error), and a payload
of another type is a miss with one phrase, never a crash."""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import pytest

from nemo_rl_workers.cache import codec
from nemo_rl_workers.cache.digest import INDEX
from nemo_rl_workers.cache.key import Computation
from nemo_rl_workers.cache.store import Store, checksum
from nemo_rl_workers.checks.config import derived_answers
from nemo_rl_workers.checks.static.static_kept import STATIC_VERDICT
from nemo_rl_workers.commands.audit_cache import AUDIT
from nemo_rl_workers.guard.driver_model import DRIVERS, LATEST
from nemo_rl_workers.tree.stage import REVISION

COMPUTATIONS: list[Computation[Any, Any]] = [
    REVISION, DRIVERS, LATEST, INDEX, STATIC_VERDICT, AUDIT, derived_answers.CONFIG_PARSE,
    derived_answers.CONFIG_RESOLUTION, derived_answers.TREE_RULES,
    derived_answers.WORLD_SIZE, derived_answers.SCOPED_FINDINGS]


def _sample(kind: Any, salt: str) -> Any:
    """A value of `kind`, different for each `salt`."""
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if kind is str or kind is Any:
        return f"v-{salt}"
    if kind is bool:
        return salt == "b"
    if kind is int:
        return len(salt) + (7 if salt == "b" else 0)
    if origin is Literal:
        return args[0] if salt == "a" else args[-1]
    if origin in (typing.Union, types.UnionType):
        return _sample(next(a for a in args if a is not type(None)), salt)
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        hints = typing.get_type_hints(kind)
        return kind(**{f.name: _sample(hints[f.name], salt)
                       for f in dataclasses.fields(kind) if f.metadata != codec.NOT_STORED})
    if origin is frozenset:
        return frozenset([_sample(args[0], salt)])
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return (_sample(args[0], salt),)
        return tuple(_sample(a, salt) for a in args)
    if origin in (dict, Mapping):
        return {f"k-{salt}": _sample(args[1] if args else Any, salt)}
    raise AssertionError(f"no sample of {kind!r}")


def _changed(inputs: Any, name: str) -> Any:
    hints = typing.get_type_hints(type(inputs))
    return dataclasses.replace(inputs, **{name: _sample(hints[name], "b")})


@pytest.mark.parametrize("computation", COMPUTATIONS, ids=[c.name for c in COMPUTATIONS])
def test_a_changed_input_is_a_miss(computation: Computation[Any, Any], tmp_path: Path) -> None:
    store = Store.open(tmp_path / "cache")
    inputs = _sample(computation.inputs, "a")
    payload = _sample(computation.payload, "a")
    store.put(computation, inputs, payload)
    assert store.get(computation, inputs).payload == payload  # what it stored, read back
    fields = dataclasses.fields(computation.inputs)
    assert fields and all(f.default is dataclasses.MISSING and
                          f.default_factory is dataclasses.MISSING for f in fields)
    for field in fields:
        other = _changed(inputs, field.name)
        got = store.get(computation, other)
        assert (got.payload, got.ignored) == (None, None), field.name


def test_computations_never_share_an_entry() -> None:
    keys = {c.name: c.key(_sample(c.inputs, "a")) for c in COMPUTATIONS}
    assert len(set(keys.values())) == len(keys)
    assert len({c.name for c in COMPUTATIONS}) == len(COMPUTATIONS)


def test_inputs_of_another_computation_are_refused() -> None:
    with pytest.raises(TypeError):
        REVISION.key(_sample(AUDIT.inputs, "a"))


def test_a_payload_of_another_type_is_a_miss_with_one_phrase(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "cache")
    inputs = _sample(AUDIT.inputs, "a")
    key = store.put(AUDIT, inputs, _sample(AUDIT.payload, "a"))
    entry = store.entry_path(key)
    data = json.loads(entry.read_text())
    data["payload"]["exit"] = "zero"
    data["sha256"] = checksum(data["payload"])
    entry.write_text(json.dumps(data))
    got = store.get(AUDIT, inputs)
    assert got.payload is None
    assert got.ignored == "holds a damaged answer (a str where an int belongs (payload.exit))"


@pytest.mark.parametrize("raw", [True, 1.5, None, [], {"a": 1}])
def test_the_codec_refuses_what_is_not_of_the_type(raw: object) -> None:
    with pytest.raises(codec.CodecError):
        codec.decode(tuple[int, ...], raw if raw != [] else ["x"])
