"""Typed keys: a computation declares its inputs, and its entries' keys are their digest.

A `Computation` names what is cached, the frozen dataclass of its inputs (every field
one input: the bytes of a file by its digest, an argument, the key of the model it is
derived from) and the dataclass of its payload. An entry's key is the digest of the
computation's name, the codec's version and its inputs' JSON (`codec.encode`): so an
input a caller forgets does not type-check (the dataclass has no defaults), and two
computations over the same inputs never share an entry.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from nemo_rl_workers.cache import codec


class Dataclass(Protocol):
    __dataclass_fields__: ClassVar[dict[str, Any]]


In = TypeVar("In", bound=Dataclass)
Out = TypeVar("Out", bound=Dataclass)


@dataclass(frozen=True)
class Computation(Generic[In, Out]):
    """What one kind of entry holds: `payload`, computed from `inputs` alone."""

    name: str
    inputs: type[In]
    payload: type[Out]
    what: str = "answer"  # how a line names a payload: "model", "verdict"

    def __post_init__(self) -> None:
        for kind in (self.inputs, self.payload):
            if not dataclasses.is_dataclass(kind):
                raise TypeError(f"{self.name}: {kind!r} is not a dataclass")

    def key(self, inputs: In) -> str:
        """The key of the entry answering `inputs` (see the module docstring)."""
        if type(inputs) is not self.inputs:
            raise TypeError(f"{self.name} is keyed by {self.inputs.__name__}, "
                            f"not {type(inputs).__name__}")
        return digest_of([codec.VERSION, self.name, codec.encode(inputs)])


def digest_of(value: object) -> str:
    """sha256 of a JSON value's canonical text."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=True, allow_nan=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()
