"""Generated Protocol/class pairs, judged by mypy, pyrefly and `contracts.check`.

Each pair is a Protocol `Proto`, a class `Impl` and the line `x: Proto = Impl()`
(or a specialised target such as `Proto[int]`). The enumerator below writes pairs in
every category of issue 10 as modules (many pairs per module, names suffixed per
pair), runs mypy once and pyrefly once over all of them, imports the modules and asks
the verifier. A pair's static verdict is "rejected" when the checker reports any
error on its assignment line.

`python -m tests.static.generator [--sample]` prints agreement per category and every
disagreement; `make bench` runs the full set, `test_generated.py` a fixed sample.
"""

from __future__ import annotations

import importlib.util
import itertools
import re
import sys
import tempfile
import textwrap
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from contracts import check
from contracts.report import STRICTER_RULES
from tests.static.checkers import Item, mypy_errors, pyrefly_errors

HEADER = """\
from __future__ import annotations

import functools
from abc import abstractmethod
from dataclasses import dataclass, field
from collections.abc import (
    AsyncGenerator, AsyncIterator, Awaitable, Callable, Coroutine, Iterable, Iterator, Mapping,
    Sequence,
)
from typing import (
    TYPE_CHECKING, Any, ClassVar, Generic, Literal, NamedTuple, NotRequired, Protocol, Self,
    TypedDict, TypeVar, Unpack, overload, runtime_checkable,
)

T = TypeVar("T")
S = TypeVar("S")
N = TypeVar("N", bound=float)
K = TypeVar("K", int, str)
"""

# Names a pair's code uses; each is suffixed with the pair's number in its module.
_LOCAL = re.compile(r"\b(Proto|Impl|Aux\w*|TD\w*|Base\w*)\b")
PER_MODULE = 60


@dataclass(frozen=True)
class Pair:
    category: str
    name: str
    code: str  # defines Proto and Impl (and helpers), dedented
    target: str = "Proto"

    def renamed(self, n: int) -> tuple[str, str]:
        """(code, target) with every local name suffixed by `_<n>`."""

        def sub(text: str) -> str:
            return _LOCAL.sub(lambda m: f"{m[1]}_{n}", text)

        return sub(textwrap.dedent(self.code)), sub(self.target)


# --- the enumerator ---------------------------------------------------------------------


def _method_pairs(category: str, protos: dict[str, str], impls: dict[str, str]) -> Iterator[Pair]:
    for (pn, proto), (iname, impl) in itertools.product(protos.items(), impls.items()):
        code = f"class Proto(Protocol):\n{_indent(proto)}\n\nclass Impl:\n{_indent(impl)}\n"
        yield Pair(category, f"{pn}/{iname}", code)


def _indent(text: str) -> str:
    return textwrap.indent(textwrap.dedent(text).strip("\n"), "    ")


def subclass_pairs() -> Iterator[Pair]:
    bodies = {
        "ellipsis": "...",
        "pass": "pass",
        "docstring": '"""Does f."""',
        "raise": "raise NotImplementedError",
        "default": "return 1",
    }
    for (bn, body), deco in itertools.product(bodies.items(), ("", "@abstractmethod")):
        proto = f"{deco}\ndef f(self) -> int:\n    {body}\n\ndef g(self) -> int:\n    ..."
        forgets = "def g(self) -> int:\n    return 2"
        both = forgets + "\n\ndef f(self) -> int:\n    return 1"
        for iname, impl, base in (
            ("forgets", forgets, "Proto"),
            ("implements", both, "Proto"),
            ("via-mixin", forgets, "BaseMix, Proto"),
            ("plain-forgets", forgets, ""),
        ):
            mix = "class BaseMix:\n    def f(self) -> int:\n        return 3\n\n"
            code = (
                f"class Proto(Protocol):\n{_indent(proto)}\n\n"
                f"{mix if 'BaseMix' in base else ''}"
                f"class Impl({base}):\n{_indent(impl)}\n"
            )
            yield Pair("subclass", f"{bn}{deco and '+abstract'}/{iname}", code)
    for member, sets in itertools.product(
        ("x: int", "@property\ndef x(self) -> int:\n    ..."),
        ("none", "init", "class", "property"),
    ):
        impl = {
            "none": "def g(self) -> int:\n    return 1",
            "init": "def __init__(self) -> None:\n    self.x = 1",
            "class": "x = 1",
            "property": "@property\ndef x(self) -> int:\n    return 1",
        }[sets]
        code = f"class Proto(Protocol):\n{_indent(member)}\n\nclass Impl(Proto):\n{_indent(impl)}\n"
        yield Pair("subclass", f"{member.split(':')[0][:9]}/{sets}", code)


def self_pairs() -> Iterator[Pair]:
    protos = {
        "ret-self": "def f(self) -> Self: ...",
        "param-self": "def f(self, other: Self) -> int: ...",
        "ret-list-self": "def f(self) -> list[Self]: ...",
    }
    impls = {
        "ret-impl": "def f(self) -> Impl:\n    return self",
        "ret-self": "def f(self) -> Self:\n    return self",
        "ret-aux": "def f(self) -> AuxOther:\n    return AuxOther()",
        "ret-int": "def f(self) -> int:\n    return 1",
        "param-impl": "def f(self, other: Impl) -> int:\n    return 1",
        "param-object": "def f(self, other: object) -> int:\n    return 1",
        "param-aux": "def f(self, other: AuxOther) -> int:\n    return 1",
        "ret-list-impl": "def f(self) -> list[Impl]:\n    return []",
        "ret-list-object": "def f(self) -> list[object]:\n    return []",
    }
    for pair in _method_pairs("self", protos, impls):
        yield Pair(pair.category, pair.name, "class AuxOther:\n    pass\n\n" + pair.code)


def unpack_pairs() -> Iterator[Pair]:
    td = "class TDArgs(TypedDict):\n    a: int\n    b: NotRequired[str]\n\n"
    protos = {"unpack": "def f(self, **kw: Unpack[TDArgs]) -> None: ..."}
    impls = {
        "exact": "def f(self, *, a: int, b: str = '') -> None: ...",
        "positional-ok": "def f(self, a: int, b: str = '') -> None: ...",
        "no-b": "def f(self, *, a: int) -> None: ...",
        "b-required": "def f(self, *, a: int, b: str) -> None: ...",
        "a-wrong-type": "def f(self, *, a: str, b: str = '') -> None: ...",
        "a-wider": "def f(self, *, a: float, b: str = '') -> None: ...",
        "kwargs-any": "def f(self, **kw: Any) -> None: ...",
        "kwargs-int": "def f(self, **kw: int) -> None: ...",
        "kwargs-object": "def f(self, **kw: object) -> None: ...",
        "same-unpack": "def f(self, **kw: Unpack[TDArgs]) -> None: ...",
        "extra-required": "def f(self, *, a: int, b: str = '', c: int) -> None: ...",
        "extra-optional": "def f(self, *, a: int, b: str = '', c: int = 0) -> None: ...",
        "nothing": "def f(self) -> None: ...",
    }
    for pair in _method_pairs("unpack", protos, impls):
        yield Pair(pair.category, pair.name, td + pair.code)
    # The implementation side unpacks, the Protocol spells the keywords out.
    for pn, proto in {
        "explicit": "def f(self, *, a: int, b: str = '') -> None: ...",
        "a-only": "def f(self, *, a: int) -> None: ...",
        "a-b-required": "def f(self, *, a: int, b: str) -> None: ...",
        "c": "def f(self, *, c: int) -> None: ...",
    }.items():
        code = (
            f"{td}class Proto(Protocol):\n{_indent(proto)}\n\nclass Impl:\n"
            "    def f(self, **kw: Unpack[TDArgs]) -> None: ...\n"
        )
        yield Pair("unpack", f"{pn}/impl-unpack", code)


def unpack_open_pairs() -> Iterator[Pair]:
    """A Protocol's `**kwargs: Unpack[TD]` against classes that spell TD's keys out (issue
    22): a TypedDict is open, so a class without `**kwargs` does not match (PEP 692)."""
    tds = {
        "total": "class TDArgs(TypedDict):\n    a: int\n    b: str\n\n",
        "not-total": "class TDArgs(TypedDict, total=False):\n    a: int\n    b: str\n\n",
        "one-key": "class TDArgs(TypedDict):\n    a: int\n\n",
    }
    impls = {
        "keywords": "def f(self, *, a: int, b: str = '') -> None: ...",
        "keywords-defaults": "def f(self, *, a: int = 0, b: str = '') -> None: ...",
        "standard": "def f(self, a: int = 0, b: str = '') -> None: ...",
        "keywords-kwargs": "def f(self, *, a: int = 0, b: str = '', **kw: object) -> None: ...",
        "a-kwargs-object": "def f(self, *, a: int = 0, **kw: object) -> None: ...",
        "kwargs-str": "def f(self, **kw: str) -> None: ...",
        "same-unpack": "def f(self, **kw: Unpack[TDArgs]) -> None: ...",
        "unpack-wider": "def f(self, **kw: Unpack[TDWide]) -> None: ...",
        "lead-positional": "def f(self, x: int = 0, **kw: Unpack[TDArgs]) -> None: ...",
    }
    wide = "class TDWide(TypedDict, total=False):\n    a: float\n    b: object\n\n"
    for tn, td in tds.items():
        protos = {f"{tn}": "def f(self, **kw: Unpack[TDArgs]) -> None: ..."}
        for pair in _method_pairs("unpack-open", protos, impls):
            yield Pair(pair.category, pair.name, td + wide + pair.code)


_OVERLOADED_PROTO = """\
@overload
def f(self, x: int) -> int: ...
@overload
def f(self, x: str) -> str: ...
def f(self, x: int | str) -> int | str: ...
"""
_OVERLOADED_IMPL = """\
@overload
def f(self, x: int) -> int: ...
@overload
def f(self, x: str) -> str: ...
def f(self, x: int | str) -> int | str:
    return x
"""


def overload_pairs() -> Iterator[Pair]:
    impls = {
        "same-overloads": _OVERLOADED_IMPL,
        "union": "def f(self, x: int | str) -> int | str:\n    return x",
        "object-any": "def f(self, x: object) -> Any:\n    return x",
        "int-only": "def f(self, x: int) -> int:\n    return x",
        "typevar": "def f(self, x: T) -> T:\n    return x",
        "bool-str": "def f(self, x: int | str) -> bool:\n    return True",
        "reversed-overloads": _OVERLOADED_IMPL.replace("-> int: ...", "-> str: ...", 1),
        "three-overloads": "@overload\ndef f(self, x: bytes) -> bytes: ...\n" + _OVERLOADED_IMPL,
        "int-float-overloads": _OVERLOADED_IMPL.replace(
            "x: str) -> str", "x: float) -> float"
        ).replace("int | str", "int | float"),
    }
    yield from _method_pairs("overload-protocol", {"overloaded": _OVERLOADED_PROTO}, impls)
    protos = {
        "int": "def f(self, x: int) -> int: ...",
        "str": "def f(self, x: str) -> str: ...",
        "bool": "def f(self, x: bool) -> int: ...",
        "float": "def f(self, x: float) -> float: ...",
        "union": "def f(self, x: int | str) -> int | str: ...",
        "object": "def f(self, x: int) -> object: ...",
    }
    yield from _method_pairs("overload-class", protos, {"overloaded": _OVERLOADED_IMPL})


def overload_only_pairs() -> Iterator[Pair]:
    """A Protocol member declared only by `@overload`, without an implementation (issue 22):
    at runtime the attribute is typing's shared placeholder."""
    protos = {
        "int-str": _OVERLOADED_PROTO.rsplit("def f(self, x: int | str)", 1)[0],
        "int-bytes": "@overload\ndef f(self, x: int) -> int: ...\n"
        "@overload\ndef f(self, x: bytes) -> bytes: ...\n",
        "kw-count": "@overload\ndef f(self) -> int: ...\n"
        "@overload\ndef f(self, *, n: int) -> list[int]: ...\n",
    }
    impls = {
        "same-overloads": _OVERLOADED_IMPL,
        "union": "def f(self, x: int | str) -> int | str:\n    return x",
        "object-any": "def f(self, x: object = 0, *, n: int = 0) -> Any:\n    return x",
        "int-only": "def f(self, x: int) -> int:\n    return x",
        "typevar": "def f(self, x: T) -> T:\n    return x",
        "no-param": "def f(self) -> int:\n    return 1",
        "kw-overloads": "@overload\ndef f(self) -> int: ...\n"
        "@overload\ndef f(self, *, n: int) -> list[int]: ...\n"
        "def f(self, *, n: int | None = None) -> int | list[int]:\n    return 1",
    }
    yield from _method_pairs("overload-only", protos, impls)


def nested_pairs() -> Iterator[Pair]:
    for runtime, (aux_name, aux) in itertools.product(
        ("@runtime_checkable\n", ""),
        {
            "method": "def g(self) -> int: ...",
            "attr": "y: int",
        }.items(),
    ):
        impls = {
            "good": ("def g(self) -> int:\n    return 1", "y: int = 0"),
            "wrong-type": ("def g(self) -> str:\n    return ''", "y: str = ''"),
            "missing": ("def h(self) -> int:\n    return 1", "z: int = 0"),
            "bool": ("def g(self) -> bool:\n    return True", "y: bool = True"),
        }
        for (iname, bodies), where in itertools.product(impls.items(), ("return", "param")):
            body = bodies[0] if aux_name == "method" else bodies[1]
            aux_impl = f"class AuxImpl:\n{_indent(body)}\n\n"
            if where == "return":
                proto = "def f(self) -> AuxP: ..."
                impl = "def f(self) -> AuxImpl:\n    return AuxImpl()"
            else:
                proto = "def f(self, x: AuxImpl) -> None: ..."
                impl = "def f(self, x: AuxP) -> None:\n    return None"
            code = (
                f"{runtime}class AuxP(Protocol):\n{_indent(aux)}\n\n{aux_impl}"
                f"class Proto(Protocol):\n{_indent(proto)}\n\nclass Impl:\n{_indent(impl)}\n"
            )
            kind = "runtime" if runtime else "plain"
            yield Pair("nested", f"{kind}-{aux_name}/{iname}-{where}", code)


def data_pairs() -> Iterator[Pair]:
    protos = {
        "attr": "x: {t}",
        "classvar": "x: ClassVar[{t}]",
        "property": "@property\ndef x(self) -> {t}: ...",
        "settable-property": (
            "@property\ndef x(self) -> {t}: ...\n@x.setter\ndef x(self, value: {t}) -> None: ..."
        ),
    }
    impls = {
        "annotated": "x: {t}",
        "default": "x: {t} = {v}",
        "classvar": "x: ClassVar[{t}] = {v}",
        "property": "@property\ndef x(self) -> {t}:\n    return {v}",
        "settable-property": (
            "@property\ndef x(self) -> {t}:\n    return {v}\n"
            "@x.setter\ndef x(self, value: {t}) -> None:\n    pass"
        ),
        "init": "def __init__(self) -> None:\n    self.x: {t} = {v}",
        "missing": "y: {t} = {v}",
        "method": "def x(self) -> {t}:\n    return {v}",
    }
    values = {"int": "1", "bool": "True", "float": "1.0", "str": "''"}
    for (pn, proto), (iname, impl), want, got in itertools.product(
        protos.items(), impls.items(), ("int", "float"), ("int", "bool", "float", "str")
    ):
        code = (
            f"class Proto(Protocol):\n{_indent(proto.format(t=want))}\n\n"
            f"class Impl:\n{_indent(impl.format(t=got, v=values[got]))}\n"
        )
        yield Pair("data", f"{pn}:{want}/{iname}:{got}", code)


def getattr_pairs() -> Iterator[Pair]:
    """Data members and properties a class provides only through `__getattr__` (issue 22)."""
    protos = {
        "attr-int": "x: int",
        "attr-object": "x: object",
        "property-int": "@property\ndef x(self) -> int: ...",
        "property-float": "@property\ndef x(self) -> float: ...",
        "classvar": "x: ClassVar[int]",
    }
    getattr_ = "def __getattr__(self, name: str) -> {}:\n    raise AttributeError(name)"
    setattr_ = "\n\ndef __setattr__(self, name: str, value: {}) -> None:\n    pass"
    impls = {
        f"get-{t}": getattr_.format(t) for t in ("int", "bool", "str", "Any", "object")
    } | {
        f"get-set-{t}": getattr_.format("int") + setattr_.format(t) for t in ("int", "str")
    } | {
        "unannotated": "def __getattr__(self, name):  # type: ignore[no-untyped-def]\n"
        "    raise AttributeError(name)",
        "get-int-own-x": getattr_.format("int") + "\n\nx: str = ''",
    }
    yield from _method_pairs("getattr", protos, impls)


def protocol_typevar_pairs() -> Iterator[Pair]:
    """A type variable assigned in a Protocol's body (issue 22): a name for annotations,
    not a member the class must have."""
    protos = {
        "typevar-used": "U = TypeVar('U')\n\ndef f(self, x: U) -> U: ...",
        "typevar-unused": "U = TypeVar('U')\n\ndef f(self, x: int) -> int: ...",
        "bound-typevar": "U = TypeVar('U', bound=int)\n\ndef f(self, x: U) -> U: ...",
        "typevar-and-attr": "U = TypeVar('U')\nn: int\n\ndef f(self, x: int) -> int: ...",
    }
    impls = {
        "generic": "def f(self, x: T) -> T:\n    return x",
        "int": "def f(self, x: int) -> int:\n    return x",
        "str": "def f(self, x: str) -> str:\n    return x",
        "generic-with-n": "n: int = 0\n\ndef f(self, x: T) -> T:\n    return x",
        "no-f": "n: int = 0",
    }
    yield from _method_pairs("protocol-typevar", protos, impls)


def record_pairs() -> Iterator[Pair]:
    """Dataclasses and NamedTuples: fields settable or not."""
    protos = {
        "attr": "class Proto(Protocol):\n    x: Sequence[float]\n\n",
        "property": "class Proto(Protocol):\n    @property\n"
        "    def x(self) -> Sequence[float]: ...\n\n",
    }
    impls = {
        "dataclass": "@dataclass\nclass Impl:\n    x: {t} = field(default_factory=list)\n",
        "frozen": "@dataclass(frozen=True)\nclass Impl:\n"
        "    x: {t} = field(default_factory=list)\n",
        "namedtuple": "class Impl(NamedTuple):\n    x: {t} = []\n",
    }
    for (pn, proto), (iname, impl), t in itertools.product(
        protos.items(), impls.items(), ("Sequence[float]", "Sequence[int]", "list[float]", "str")
    ):
        yield Pair("records", f"{pn}/{iname}:{t}", proto + impl.format(t=t))


def generic_method_pairs() -> Iterator[Pair]:
    protos = {
        "T->T": "def f(self, x: T) -> T: ...",
        "int->int": "def f(self, x: int) -> int: ...",
        "list[T]->T": "def f(self, x: list[T]) -> T: ...",
        "N->N": "def f(self, x: N) -> N: ...",
        "K->K": "def f(self, x: K) -> K: ...",
        "bool->bool": "def f(self, x: bool) -> bool: ...",
        "str->str": "def f(self, x: str) -> str: ...",
    }
    impls = {
        "T->T": "def f(self, x: T) -> T:\n    return x",
        "S->S": "def f(self, x: S) -> S:\n    return x",
        "int->int": "def f(self, x: int) -> int:\n    return x",
        "object->object": "def f(self, x: object) -> object:\n    return x",
        "object->Any": "def f(self, x: object) -> Any:\n    return x",
        "list[S]->S": "def f(self, x: list[S]) -> S:\n    return x[0]",
        "N->N": "def f(self, x: N) -> N:\n    return x",
        "K->K": "def f(self, x: K) -> K:\n    return x",
        "T->list[T]": "def f(self, x: T) -> list[T]:\n    return [x]",
    }
    yield from _method_pairs("generic-method", protos, impls)


def generic_protocol_pairs() -> Iterator[Pair]:
    proto = (
        "class Proto(Protocol[T]):\n    def get(self) -> T: ...\n"
        "    def put(self, x: T) -> None: ...\n\n"
    )
    ro_proto = "class Proto(Protocol[T]):\n    def get(self) -> T: ...\n\n"
    for (pname, pcode), t, (iname, u), target_arg in itertools.product(
        (("box", proto), ("readonly", ro_proto)),
        ("int",),
        (
            ("int", "int"),
            ("bool", "bool"),
            ("float", "float"),
            ("str", "str"),
            ("object", "object"),
        ),
        ("int", "float", "object", None),
    ):
        impl = (
            f"class Impl:\n    def get(self) -> {u}:\n        raise RuntimeError\n"
            f"    def put(self, x: {u}) -> None:\n        return None\n"
        )
        target = f"Proto[{target_arg}]" if target_arg else "Proto"
        yield Pair("generic-protocol", f"{pname}/{iname}->{target_arg}", pcode + impl, target)
        del t


def self_type_pairs() -> Iterator[Pair]:
    """`self: T` annotations and generic bases specialised by the class."""
    protos = {
        "self-T": "def f(self: T) -> T: ...",
        "property-self-T": "@property\ndef f(self: T) -> T: ...",
        "list-self-T": "def f(self: T, other: T) -> list[T]: ...",
    }
    impls = {
        "self": "def f(self) -> Self:\n    return self",
        "impl": "def f(self) -> Impl:\n    return self",
        "int": "def f(self) -> int:\n    return 0",
        "self-T": "def f(self: S) -> S:\n    return self",
        "property-self": "@property\ndef f(self) -> Self:\n    return self",
        "property-int": "@property\ndef f(self) -> int:\n    return 0",
        "other-impl": "def f(self, other: Impl) -> list[Impl]:\n    return []",
        "other-object": "def f(self, other: object) -> list[Self]:\n    return []",
    }
    yield from _method_pairs("self-type", protos, impls)
    base = "class BaseGen(Generic[T]):\n    def get(self) -> T:\n        raise RuntimeError\n\n"
    for arg, want in itertools.product(("int", "str", "bool"), ("int", "float", "str")):
        code = (
            f"{base}class Proto(Protocol):\n    def get(self) -> {want}: ...\n\n"
            f"class Impl(BaseGen[{arg}]):\n    pass\n"
        )
        yield Pair("self-type", f"base-gen[{arg}]->{want}", code)
    two = (
        "class ProtoIter(Protocol[T]):\n    def it(self) -> Iterator[T]: ...\n\n"
        "class Proto(ProtoIter[S], Protocol[T, S]):\n    def m(self, x: T) -> T: ...\n\n"
        "class Impl:\n    def it(self) -> Iterator[int]:\n        raise RuntimeError\n"
        "    def m(self, x: str) -> str:\n        return x\n"
    )
    for target in ("Proto[str, int]", "Proto[int, str]", "Proto[str, float]", "Proto[str, bool]"):
        yield Pair("self-type", f"two-params->{target}", two, target)


def gradual_pairs() -> Iterator[Pair]:
    protos = {
        "any-any": "def f(self, *args: Any, **kwargs: Any) -> int: ...",
        "lead-any-any": "def f(self, a: int, *args: Any, **kwargs: Any) -> int: ...",
        "object-object": "def f(self, *args: object, **kwargs: object) -> int: ...",
        "args-only": "def f(self, *args: Any) -> int: ...",
    }
    impls = {
        "none": "def f(self) -> int:\n    return 1",
        "a-b": "def f(self, a: int, b: str) -> int:\n    return 1",
        "kw-only": "def f(self, *, k: int) -> int:\n    return 1",
        "same": "def f(self, *args: Any, **kwargs: Any) -> int:\n    return 1",
        "a-str": "def f(self, a: str) -> int:\n    return 1",
        "returns-str": "def f(self, *args: Any, **kwargs: Any) -> str:\n    return ''",
    }
    yield from _method_pairs("gradual", protos, impls)


def positional_only_pairs() -> Iterator[Pair]:
    protos = {
        "old-style": "def f(self, __x: int) -> None: ...",
        "new-style": "def f(self, x: int, /) -> None: ...",
        "by-name": "def f(self, x: int) -> None: ...",
        "old-two": "def f(self, __x: int, __y: str) -> None: ...",
    }
    impls = {
        "named-y": "def f(self, y: int) -> None: ...",
        "named-x": "def f(self, x: int) -> None: ...",
        "new-style": "def f(self, x: int, /) -> None: ...",
        "old-style": "def f(self, __x: int) -> None: ...",
        "kw-only": "def f(self, *, x: int) -> None: ...",
        "two": "def f(self, a: int, b: str) -> None: ...",
        "two-old": "def f(self, __a: int, __b: str) -> None: ...",
    }
    yield from _method_pairs("positional-only", protos, impls)


def static_class_pairs() -> Iterator[Pair]:
    protos = {
        "instance": "def f(self, x: int) -> int: ...",
        "classmethod": "@classmethod\ndef f(cls, x: int) -> int: ...",
        "staticmethod": "@staticmethod\ndef f(x: int) -> int: ...",
    }
    impls = {
        "instance": "def f(self, x: int) -> int:\n    return x",
        "classmethod": "@classmethod\ndef f(cls, x: int) -> int:\n    return x",
        "staticmethod": "@staticmethod\ndef f(x: int) -> int:\n    return x",
        "static-str": "@staticmethod\ndef f(x: str) -> int:\n    return 1",
        "class-two": "@classmethod\ndef f(cls, x: int, y: int) -> int:\n    return x",
        "static-noarg": "@staticmethod\ndef f() -> int:\n    return 1",
    }
    yield from _method_pairs("static-class", protos, impls)


_NUMERIC = ("int", "bool", "float", "complex")
_CONTAINERS = (
    "{}",
    "Sequence[{}]",
    "list[{}]",
    "Mapping[str, {}]",
    "tuple[{}, ...]",
    "Iterable[{}]",
    "dict[str, {}]",
    "Callable[[], {}]",
)


def numeric_pairs() -> Iterator[Pair]:
    for box, want, got in itertools.product(_CONTAINERS, _NUMERIC, _NUMERIC):
        if want == got:
            continue
        w, g = box.format(want), box.format(got)
        code = (
            f"class Proto(Protocol):\n    def f(self) -> {w}: ...\n\n"
            f"class Impl:\n    def f(self) -> {g}:\n        raise RuntimeError\n"
        )
        yield Pair("numeric", f"{w}<-{g}", code)


_SIGS = (
    "self",
    "self, a: int",
    "self, a: int = 0",
    "self, b: int",
    "self, a: int, b: int = 0",
    "self, *, a: int",
    "self, *, a: int = 0",
    "self, *args: int",
    "self, **kw: int",
    "self, a: int, /",
    "self, *args: int, **kw: int",
    "self, a: int, *, b: int",
)


def shape_pairs() -> Iterator[Pair]:
    for proto, impl in itertools.product(_SIGS, _SIGS):
        code = (
            f"class Proto(Protocol):\n    def f({proto}) -> None: ...\n\n"
            f"class Impl:\n    def f({impl}) -> None:\n        return None\n"
        )
        yield Pair("shape", f"({proto})<-({impl})", code)


_TYPES = (
    "int",
    "bool",
    "str",
    "object",
    "None",
    "int | None",
    "int | str",
    "list[int]",
    "list[object]",
    "Sequence[int]",
    "dict[str, int]",
    "Mapping[str, object]",
    "tuple[int, str]",
    "tuple[int, ...]",
    "Literal[1]",
    "Literal['a']",
    "Callable[[int], str]",
    "Callable[[object], str]",
    "Callable[..., Any]",
    "type[int]",
    "type[bool]",
    "Any",
    "Iterator[int]",
    "frozenset[int]",
)


def annotation_pairs() -> Iterator[Pair]:
    combos = list(itertools.product(("return", "param"), itertools.product(_TYPES, _TYPES)))
    for where, (want, got) in combos[::3]:  # every third: about 400 pairs
        if where == "return":
            proto, impl = (
                f"def f(self) -> {want}: ...",
                f"def f(self) -> {got}:\n    raise RuntimeError",
            )
        else:
            proto, impl = (
                f"def f(self, x: {want}) -> None: ...",
                f"def f(self, x: {got}) -> None:\n    return None",
            )
        code = f"class Proto(Protocol):\n{_indent(proto)}\n\nclass Impl:\n{_indent(impl)}\n"
        yield Pair("annotation", f"{where}:{want}<-{got}", code)


def async_pairs() -> Iterator[Pair]:
    protos = {
        "async-int": "async def f(self) -> int: ...",
        "sync-awaitable": "def f(self) -> Awaitable[int]: ...",
        "async-iter": "def f(self) -> AsyncIterator[int]: ...",
        "sync-int": "def f(self) -> int: ...",
    }
    impls = {
        "async-int": "async def f(self) -> int:\n    return 1",
        "async-bool": "async def f(self) -> bool:\n    return True",
        "async-str": "async def f(self) -> str:\n    return ''",
        "coroutine": "def f(self) -> Coroutine[Any, Any, int]:\n    raise RuntimeError",
        "sync-int": "def f(self) -> int:\n    return 1",
        "async-gen": "async def f(self) -> AsyncIterator[int]:\n    yield 1",
        "async-gen-str": "async def f(self) -> AsyncGenerator[str, None]:\n    yield ''",
    }
    yield from _method_pairs("async", protos, impls)


def typeddict_pairs() -> Iterator[Pair]:
    tds = (
        "class TDWant(TypedDict):\n    a: int\n    b: NotRequired[str]\n\n"
        "class TDSame(TypedDict):\n    a: int\n    b: NotRequired[str]\n\n"
        "class TDMore(TypedDict):\n    a: int\n    b: NotRequired[str]\n    c: float\n\n"
        "class TDRequired(TypedDict):\n    a: int\n    b: str\n\n"
        "class TDBool(TypedDict):\n    a: bool\n    b: NotRequired[str]\n\n"
    )
    types = (
        "TDWant",
        "TDSame",
        "TDMore",
        "TDRequired",
        "TDBool",
        "dict[str, object]",
        "Mapping[str, object]",
        "dict[str, int]",
    )
    for where, got in itertools.product(("return", "param"), types):
        want = "TDWant"
        for w, g in ((want, got), (got, want)):
            if where == "return":
                proto, impl = (
                    f"def f(self) -> {w}: ...",
                    f"def f(self) -> {g}:\n    raise RuntimeError",
                )
            else:
                proto = f"def f(self, x: {w}) -> None: ..."
                impl = f"def f(self, x: {g}) -> None:\n    return None"
            code = (
                f"{tds}class Proto(Protocol):\n{_indent(proto)}\n\nclass Impl:\n{_indent(impl)}\n"
            )
            yield Pair("typeddict", f"{where}:{w}<-{g}", code)


def inheritance_pairs() -> Iterator[Pair]:
    base = "class ProtoBase(Protocol):\n    def f(self) -> int: ...\n\n"
    proto = "class Proto(ProtoBase, Protocol):\n    def g(self, x: str) -> str: ...\n\n"
    impls = {
        "both": "class Impl:\n    def f(self) -> int:\n        return 1\n"
        "    def g(self, x: str) -> str:\n        return x\n",
        "only-g": "class Impl:\n    def g(self, x: str) -> str:\n        return x\n",
        "mixin": "class BaseF:\n    def f(self) -> int:\n        return 1\n\n"
        "class Impl(BaseF):\n    def g(self, x: str) -> str:\n        return x\n",
        "mixin-wrong": "class BaseF:\n    def f(self) -> str:\n        return ''\n\n"
        "class Impl(BaseF):\n    def g(self, x: str) -> str:\n        return x\n",
        "subclass-base-only": "class Impl(ProtoBase):\n    def f(self) -> int:\n        return 1\n"
        "    def g(self, x: str) -> str:\n        return x\n",
        "subclass-proto-forgets-f": "class Impl(Proto):\n    def g(self, x: str) -> str:\n"
        "        return x\n",
        "subclass-proto": "class Impl(Proto):\n    def f(self) -> int:\n        return 1\n"
        "    def g(self, x: str) -> str:\n        return x\n",
        "generic-impl": "class Impl(Generic[T]):\n    def f(self) -> int:\n        return 1\n"
        "    def g(self, x: str) -> str:\n        return x\n",
        "none-attr": "class Impl:\n    f = None\n"
        "    def g(self, x: str) -> str:\n        return x\n",
    }
    for name, impl in impls.items():
        yield Pair("inheritance", name, base + proto + impl)


def callable_member_pairs() -> Iterator[Pair]:
    protos = {
        "callable-attr": "f: Callable[[int], int]",
        "call-protocol-ret": "def f(self) -> AuxCall: ...",
    }
    impls = {
        "method": "def f(self, x: int) -> int:\n    return x",
        "method-str": "def f(self, x: str) -> int:\n    return 1",
        "callable-attr": "f: Callable[[int], int]",
        "callable-attr-wide": "f: Callable[[object], bool]",
        "returns-func": "def f(self) -> Callable[[int], int]:\n    raise RuntimeError",
        "returns-func-str": "def f(self) -> Callable[[str], int]:\n    raise RuntimeError",
        "returns-aux": "def f(self) -> AuxImplCall:\n    return AuxImplCall()",
    }
    aux = (
        "class AuxCall(Protocol):\n    def __call__(self, x: int) -> int: ...\n\n"
        "class AuxImplCall:\n    def __call__(self, x: int) -> int:\n        return x\n\n"
    )
    for pair in _method_pairs("callable-member", protos, impls):
        yield Pair(pair.category, pair.name, aux + pair.code)


def blind_spot_pairs() -> Iterator[Pair]:
    """Runtime blind spots (the guide lists them): the verifier accepts, the checkers see."""
    deco = (
        "def to_str(func: Callable[..., int]) -> Callable[..., str]:\n"
        "    @functools.wraps(func)\n"
        "    def wrapper(*args: Any) -> str:\n"
        "        return str(func(*args))\n"
        "    return wrapper  # type: ignore[return-value]\n\n"
    )
    yield Pair(
        "blind-spot",
        "wraps-changes-return",
        deco + "class Proto(Protocol):\n    def f(self, x: int) -> int: ...\n\n"
        "class Impl:\n    @to_str\n    def f(self, x: int) -> int:\n        return x\n",
    )


CATEGORIES: dict[str, Callable[[], Iterator[Pair]]] = {
    "subclass": subclass_pairs,
    "self": self_pairs,
    "self-type": self_type_pairs,
    "unpack": unpack_pairs,
    "unpack-open": unpack_open_pairs,
    "overload": overload_pairs,
    "overload-only": overload_only_pairs,
    "nested": nested_pairs,
    "data": data_pairs,
    "records": record_pairs,
    "getattr": getattr_pairs,
    "protocol-typevar": protocol_typevar_pairs,
    "generic-method": generic_method_pairs,
    "generic-protocol": generic_protocol_pairs,
    "gradual": gradual_pairs,
    "positional-only": positional_only_pairs,
    "static-class": static_class_pairs,
    "numeric": numeric_pairs,
    "shape": shape_pairs,
    "annotation": annotation_pairs,
    "async": async_pairs,
    "typeddict": typeddict_pairs,
    "inheritance": inheritance_pairs,
    "callable-member": callable_member_pairs,
    "blind-spot": blind_spot_pairs,
}
# Categories of known runtime blind spots: a disagreement there is documented, not a bug.
BLIND_SPOTS = frozenset({"blind-spot"})


def all_pairs() -> list[Pair]:
    return [pair for make in CATEGORIES.values() for pair in make()]


def sample(pairs: list[Pair], per_category: int = 14) -> list[Pair]:
    """A fixed, evenly spread sample: up to `per_category` pairs of each category."""
    by: dict[str, list[Pair]] = defaultdict(list)
    for pair in pairs:
        by[pair.category].append(pair)
    chosen: list[Pair] = []
    for group in by.values():
        step = max(1, len(group) // per_category)
        chosen.extend(group[::step][:per_category])
    return chosen


# --- running the checkers --------------------------------------------------------------


@dataclass
class Verdict:
    pair: Pair
    module: str
    line: int
    mypy: list[str] = field(default_factory=list)  # messages on the line; empty: accepted
    pyrefly: list[str] = field(default_factory=list)
    runtime: list[str] = field(default_factory=list)  # violations under the spec's rules
    undecidable: list[str] = field(default_factory=list)
    block: range = range(0)  # lines of the class body whose errors count too

    @property
    def reference_rejects(self) -> bool:
        """mypy's verdict; where pyrefly differs, the one the spec's text supports."""
        if self.mypy_rejects == self.pyrefly_rejects:
            return self.mypy_rejects
        return self.pyrefly_rejects if ruling(self.pair)[0] == "pyrefly" else self.mypy_rejects

    @property
    def mypy_rejects(self) -> bool:
        return bool(self.mypy)

    @property
    def pyrefly_rejects(self) -> bool:
        return bool(self.pyrefly)

    @property
    def runtime_rejects(self) -> bool:
        return bool(self.runtime)


# Where mypy and pyrefly disagree, which one the typing spec's text supports, and why.
PYREFLY_FOLLOWS_SPEC: dict[str, str] = {
    "shape": "Callables: a parameter callable by keyword must keep its name; mypy ignores "
    "positional names on protocol members",
    "positional-only": "same rule: names count where the Protocol allows passing by keyword",
    "gradual args-only": "only `(*args: Any, **kwargs: Any)` together is the gradual form; "
    "`*args: Any` alone still passes positional arguments",
    "callable-member call-protocol-ret": "a Callable's parameters are positional-only; a "
    "__call__ that allows passing by keyword needs the name (as in shape)",
    "unpack-open": "PEP 692 (callables, `Source contains **kwargs and destination doesn't`): a "
    "destination with `**kwargs: Unpack[TD]` and a source without `**kwargs` is disallowed, "
    "since a TypedDict is open and callers may pass more keys; mypy accepts it",
    "unpack unpack": "same rule as unpack-open: the class spells TD's keys out but takes no "
    "**kwargs",
    "getattr": "Protocols: a protocol variable is readable and writable by default; "
    "`__getattr__` alone makes an attribute readable only (mypy itself refuses `obj.x = 1` on "
    "such a class, yet accepts it for a settable member)",
    "overload-class": "Overloads: an overloaded callable is assignable when one of its "
    "signatures is; mypy also unions the overloads",
}
MYPY_FOLLOWS_SPEC: dict[str, str] = {
    "subclass": "an explicit subclass inherits the Protocol's unimplemented members as "
    "abstract (declared-only attributes, `raise NotImplementedError` bodies)",
    "data": "a ClassVar member is settable through the class, hence invariant",
    "static-class": "a Protocol classmethod needs a class or static method",
    "protocol-typevar": "`U = TypeVar('U')` in a class body declares a type variable, a name "
    "for use in annotations (generics), not an attribute with a type; pyrefly demands it of "
    "the class as a member",
    "gradual lead-any-any": "`(a: int, *args: Any, **kwargs: Any)` is `Concatenate[int, ...]`: "
    "the leading parameter is still passed and must be accepted",
}


def ruling(pair: Pair) -> tuple[str, str]:
    """Which checker the spec supports for this pair where they differ, and why."""
    for key in (f"{pair.category} {pair.name.split('/')[0]}", pair.category):
        if key in PYREFLY_FOLLOWS_SPEC:
            return "pyrefly", PYREFLY_FOLLOWS_SPEC[key]
        if key in MYPY_FOLLOWS_SPEC:
            return "mypy", MYPY_FOLLOWS_SPEC[key]
    return "mypy", "no ruling recorded: mypy, the project's first oracle"


# Error codes that are not about the pair's compatibility (strict-mode noise).
IGNORED_CODES = frozenset({"type-arg", "empty-body"})


def write_modules(pairs: list[Pair], into: Path) -> list[Verdict]:
    verdicts: list[Verdict] = []
    for start in range(0, len(pairs), PER_MODULE):
        module = f"gen_pairs_{start // PER_MODULE:03d}"
        lines = HEADER.splitlines()
        for n, pair in enumerate(pairs[start : start + PER_MODULE], start=start):
            code, target = pair.renamed(n)
            lines += ["", ""]
            first = len(lines) + 1
            lines += [*code.rstrip("\n").splitlines(), ""]
            impl = [
                i
                for i, text in enumerate(lines[first - 1 :], start=first)
                if text.startswith(f"class Impl_{n}")
            ]
            # An explicit subclass of the Protocol is judged at its overrides, in its body.
            block = (
                range(impl[0], len(lines) + 1)
                if impl and f"Proto_{n}" in lines[impl[0] - 1]
                else range(0)
            )
            # Judged by the checkers only: instantiating an abstract class would raise.
            lines += ["if TYPE_CHECKING:", f"    x_{n}: {target} = Impl_{n}()"]
            verdicts.append(Verdict(pair, module, len(lines), block=block))
        (into / f"{module}.py").write_text("\n".join(lines) + "\n")
    return verdicts


def _messages(items: list[Item]) -> dict[tuple[str, int], list[str]]:
    found: dict[tuple[str, int], list[str]] = defaultdict(list)
    for path, line, code, message in items:
        if code not in IGNORED_CODES:
            found[(Path(path).stem, line)].append(f"{message} [{code}]")
    return found


def _import(path: Path) -> object:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module  # get_type_hints resolves names through it
    spec.loader.exec_module(module)
    return module


def judge(pairs: list[Pair], workdir: Path) -> list[Verdict]:
    """Every pair's verdict from mypy, pyrefly (one run each) and the verifier."""
    verdicts = write_modules(pairs, workdir)
    files = sorted(workdir.glob("gen_pairs_*.py"))
    cache = ("--cache-dir", str(workdir / ".mypy_cache"))
    mypy = _messages(mypy_errors(files, *cache, timeout=900))
    pyrefly = _messages(pyrefly_errors(files, timeout=900))
    modules = {f.stem: _import(f) for f in files}
    for n, verdict in enumerate(verdicts):
        lines = [verdict.line, *verdict.block]
        verdict.mypy = [m for ln in lines for m in mypy.get((verdict.module, ln), [])]
        verdict.pyrefly = [m for ln in lines for m in pyrefly.get((verdict.module, ln), [])]
        namespace = vars(modules[verdict.module])
        target = eval(verdict.pair.renamed(n)[1], namespace)  # noqa: S307 - our own pair text
        report = check(namespace[f"Impl_{n}"], target)
        verdict.runtime = [str(v) for v in report.violations if v.rule not in STRICTER_RULES]
        verdict.undecidable = [str(v) for v in report.undecidable]
    return verdicts


def summary(verdicts: list[Verdict]) -> str:
    total = Counter[str]()
    agree_mypy = Counter[str]()
    agree_pyrefly = Counter[str]()
    checkers_differ = Counter[str]()
    agree_ref = Counter[str]()
    lines: list[str] = []
    for v in verdicts:
        cat = v.pair.category
        total[cat] += 1
        agree_mypy[cat] += v.runtime_rejects == v.mypy_rejects
        agree_pyrefly[cat] += v.runtime_rejects == v.pyrefly_rejects
        checkers_differ[cat] += v.mypy_rejects != v.pyrefly_rejects
        agree_ref[cat] += v.runtime_rejects == v.reference_rejects
    lines.append(
        "Agreement of contracts.check with each checker and with the reference verdict "
        "(mypy; the spec's side where mypy and pyrefly differ):"
    )
    lines.append(
        f"{'category':18} {'pairs':>6} {'mypy':>8} {'pyrefly':>8} {'reference':>10} "
        f"{'mypy!=pyrefly':>14}"
    )
    for cat in [*sorted(total), "all"]:
        t = total[cat] if cat != "all" else sum(total.values())
        m = agree_mypy[cat] if cat != "all" else sum(agree_mypy.values())
        p = agree_pyrefly[cat] if cat != "all" else sum(agree_pyrefly.values())
        r = agree_ref[cat] if cat != "all" else sum(agree_ref.values())
        d = checkers_differ[cat] if cat != "all" else sum(checkers_differ.values())
        lines.append(f"{cat:18} {t:6} {m / t:8.1%} {p / t:8.1%} {r / t:10.1%} {d:14}")
    false_accepts = [v for v in verdicts if v.reference_rejects and not v.runtime_rejects]
    outside = [v for v in false_accepts if v.pair.category not in BLIND_SPOTS]
    lines.append(
        f"false accepts against the reference: {len(false_accepts)} "
        f"({len(outside)} outside the documented blind spots)"
    )
    lines.append("")
    lines.append("Disagreements with the reference verdict (and why):")
    for v in verdicts:
        if v.runtime_rejects != v.reference_rejects:
            lines.append(_explain(v))
    lines.append("")
    lines.append("mypy and pyrefly disagree; the reference follows the spec's text:")
    for v in verdicts:
        if v.mypy_rejects != v.pyrefly_rejects:
            side, why = ruling(v.pair)
            lines.append(_explain(v) + f"\n    spec: follows {side}: {why}")
    return "\n".join(lines)


def _explain(v: Verdict) -> str:
    def word(rejects: bool) -> str:
        return "rejects" if rejects else "accepts"

    parts = [
        f"- {v.pair.category} {v.pair.name}: verifier {word(v.runtime_rejects)}, "
        f"mypy {word(v.mypy_rejects)}, pyrefly {word(v.pyrefly_rejects)}"
    ]
    parts += [f"    mypy: {m}" for m in v.mypy[:2]]
    parts += [f"    pyrefly: {m}" for m in v.pyrefly[:2]]
    parts += [f"    verifier: {m.split(': ', 1)[-1]}" for m in v.runtime[:3]]
    parts += [f"    undecidable: {m.split(': ', 1)[-1]}" for m in v.undecidable[:2]]
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    pairs = all_pairs()
    if "--sample" in args:
        pairs = sample(pairs)
    if "--keep" in args:  # leave the modules for reading: --keep DIR
        keep = Path(args[args.index("--keep") + 1])
        keep.mkdir(parents=True, exist_ok=True)
        verdicts = judge(pairs, keep)
    else:
        with tempfile.TemporaryDirectory(prefix="gen-pairs-") as tmp:
            verdicts = judge(pairs, Path(tmp))
    print(summary(verdicts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
