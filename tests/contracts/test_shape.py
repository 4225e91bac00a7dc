"""Call shape: the verifier's verdict against what Python itself accepts."""

from __future__ import annotations

import inspect
import itertools
import random
from collections.abc import Callable, Iterator

import pytest

from contracts.verify import shape_problems

P = inspect.Parameter
KINDS = (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD, P.KEYWORD_ONLY)
Call = tuple[list[tuple[str, object]], dict[str, tuple[str, object]]]


def sig(text: str) -> inspect.Signature:
    return inspect.signature(_func(text))


def _func(text: str) -> Callable[..., dict[str, object]]:
    namespace: dict[str, object] = {}
    exec(f"def f({text}): return dict(locals())", namespace)  # noqa: S102 - test signatures
    func = namespace["f"]
    assert callable(func)
    return func


@pytest.mark.parametrize(
    ("proto", "impl", "problems"),
    [
        ("a, b=0", "a, b=0, c=0", []),
        ("a, b=0", "*args, **kwargs", []),
        ("a, *, k", "a, **kwargs", []),
        ("a, b=0", "a", ["has no parameter 'b', the Protocol has"]),
        ("a, b=0", "a, b", ["'b' has no default, the Protocol makes it optional"]),
        ("a", "a, c", ["extra parameter 'c' needs a default"]),
        ("a", "a, *, c", ["extra keyword-only parameter 'c' needs a default"]),
        ("a", "b", ["positional parameter 1 is named 'b', the Protocol names it 'a'"]),
        ("a", "a, /", ["'a' is positional-only, the Protocol allows it by keyword"]),
        ("*, k", "a=0", ["has no keyword parameter 'k', the Protocol has"]),
        ("a, b", "a, *, b", ["takes 'b' by keyword only, the Protocol allows it positionally"]),
        ("*args", "a=0", ["has no *args, the Protocol accepts any number of positional arguments"]),
        ("**kw", "", ["has no **kwargs, the Protocol accepts any keyword argument"]),
        ("a, /", "", ["takes 0 positional argument(s), the Protocol allows 1"]),
    ],
)
def test_examples(proto: str, impl: str, problems: list[str]) -> None:
    assert shape_problems(sig(proto), sig(impl)) == problems


def _random_signature(rng: random.Random) -> inspect.Signature:
    params: list[P] = []
    seen_default = False
    drawn = sorted(
        (
            (rng.choice(KINDS), name, rng.random() < 0.4)
            for name in rng.sample("abcd", rng.randint(0, 4))
        ),
        key=lambda t: KINDS.index(t[0]),
    )
    for kind, name, has_default in drawn:
        if kind is not P.KEYWORD_ONLY:
            has_default = has_default or seen_default  # no required after optional
            seen_default = has_default
        params.append(P(name, kind, default=0 if has_default else P.empty))
    if rng.random() < 0.25:
        params.insert(
            sum(p.kind is not P.KEYWORD_ONLY for p in params), P("args", P.VAR_POSITIONAL)
        )
    if rng.random() < 0.25:
        params.append(P("kwargs", P.VAR_KEYWORD))
    return inspect.Signature(params)


def _calls(proto: inspect.Signature) -> Iterator[Call]:
    """Every call shape the Protocol accepts; values say where they were meant to go."""
    accepts = _func(str(proto)[1:-1])
    params = list(proto.parameters.values())
    positional = [p for p in params if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)]
    by_name = [p for p in params if p.kind in (P.POSITIONAL_OR_KEYWORD, P.KEYWORD_ONLY)]
    var = any(p.kind is P.VAR_POSITIONAL for p in params)
    varkw = any(p.kind is P.VAR_KEYWORD for p in params)
    for count in range(len(positional) + (6 if var else 1)):
        args: list[tuple[str, object]] = [("pos", i) for i in range(count)]
        rest = [p for p in by_name if p not in positional[:count]]
        for mask in itertools.product((False, True), repeat=len(rest)):
            kwargs = {p.name: ("kw", p.name) for p, on in zip(rest, mask, strict=True) if on}
            for extra in ({}, {"zz": ("kw", "zz")}) if varkw else ({},):
                try:
                    accepts(*args, **kwargs, **extra)
                except TypeError:
                    continue
                yield args, {**kwargs, **extra}


def _python_accepts(proto: inspect.Signature, impl: inspect.Signature) -> bool:
    """Every Protocol call binds, and each value lands where the Protocol meant it to."""
    call = _func(str(impl)[1:-1])
    positional = [
        p
        for p in proto.parameters.values()
        if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)
    ]
    positional_only = {p.name for p in impl.parameters.values() if p.kind is P.POSITIONAL_ONLY}
    for args, kwargs in _calls(proto):
        try:
            landed = call(*args, **kwargs)
        except TypeError:
            return False
        swallowed = landed.get("kwargs", {})
        assert isinstance(swallowed, dict)
        if any(name in positional_only for name in swallowed):
            return False  # meant for a parameter, lost in **kwargs
        for name, value in landed.items():
            if name in ("args", "kwargs") or not isinstance(value, tuple):
                continue
            how, meant = value
            if how == "kw" and meant != name:
                return False
            if how == "pos" and isinstance(meant, int) and meant < len(positional):
                target = positional[meant]
                if target.kind is P.POSITIONAL_OR_KEYWORD and target.name != name:
                    return False
    return True


def test_agrees_with_python_on_random_signatures() -> None:
    rng = random.Random(20261129)
    disagreements = []
    accepted = 0
    for _ in range(2000):
        proto, impl = _random_signature(rng), _random_signature(rng)
        python_says = _python_accepts(proto, impl)
        accepted += python_says
        if python_says != (not shape_problems(proto, impl)):
            disagreements.append(f"{proto} vs {impl}: {shape_problems(proto, impl)}")
    assert disagreements == []
    assert 100 < accepted < 1900  # both verdicts are exercised
