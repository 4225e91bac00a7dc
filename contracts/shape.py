"""Call shape: is every call the Protocol's signature accepts accepted by the class's?

Signatures are compared as an instance exposes them (self bound), after the spec's
normalisations: old-style positional-only parameters (`__x`, PEP 484), `**kwargs:
Unpack[TD]` expanded into one keyword parameter per field (PEP 692), and a Protocol
signature `(*args: Any, **kwargs: Any)` that accepts any implementation's shape.
"""

from __future__ import annotations

import collections.abc as cabc
import inspect
import typing
from typing import Any, Final

import typing_extensions
from typing_extensions import is_typeddict

from contracts.hints import typeddict_fields
from contracts.members import MethodKind

_EMPTY: Final = inspect.Parameter.empty
_POSITIONAL: Final = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
_BY_NAME: Final = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
_UNPACK: Final = (typing.Unpack, typing_extensions.Unpack)


def caller_signature(func: object, kind: MethodKind) -> inspect.Signature | None:
    """The signature as a caller of `instance.member(...)` sees it; None if self cannot bind."""
    sig = inspect.signature(typing.cast("cabc.Callable[..., object]", func))
    if kind != "instance method":
        return sig  # getattr() already bound a classmethod's cls
    params = list(sig.parameters.values())
    if params and params[0].kind in _POSITIONAL:
        return sig.replace(parameters=params[1:])
    if params and params[0].kind is inspect.Parameter.VAR_POSITIONAL:
        return sig  # *args swallows self
    return None


def shape_problems(proto: inspect.Signature, impl: inspect.Signature) -> list[str]:
    """Calls the Protocol's signature accepts that the implementation's would refuse."""
    problems: list[str] = []
    p_params = list(proto.parameters.values())
    i_params = list(impl.parameters.values())
    p_pos = [p for p in p_params if p.kind in _POSITIONAL]
    i_pos = [p for p in i_params if p.kind in _POSITIONAL]
    p_names = {p.name: p for p in p_params if p.kind in _BY_NAME}
    i_names = {p.name: p for p in i_params if p.kind in _BY_NAME}
    p_var = any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in p_params)
    i_var = any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in i_params)
    p_varkw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in p_params)
    i_varkw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in i_params)

    i_positional_only = {p.name for p in i_pos if p.kind is inspect.Parameter.POSITIONAL_ONLY}
    if p_var and not i_var:
        problems.append("has no *args, the Protocol accepts any number of positional arguments")
    if p_varkw and not i_varkw:
        problems.append("has no **kwargs, the Protocol accepts any keyword argument")

    for index, param in enumerate(p_pos):
        by_keyword = param.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
        if index < len(i_pos):
            other = i_pos[index]
            if by_keyword and other.name != param.name:
                problems.append(
                    f"positional parameter {index + 1} is named {other.name!r}, "
                    f"the Protocol names it {param.name!r}"
                )
            elif by_keyword and other.kind is inspect.Parameter.POSITIONAL_ONLY:
                problems.append(
                    f"{param.name!r} is positional-only, the Protocol allows it by keyword"
                )
            elif (
                not by_keyword
                and other.name in p_names
                and other.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
            ):
                problems.append(
                    f"positional parameter {index + 1} is named {other.name!r}, "
                    f"which the Protocol passes by keyword"
                )
            continue
        named = i_names.get(param.name)
        if (
            by_keyword
            and named is not None
            and named.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
        ):
            continue  # it sits at another position: reported as a name mismatch above
        if by_keyword and param.name in i_positional_only:
            problems.append(f"{param.name!r} is positional-only, the Protocol allows it by keyword")
        elif not by_keyword:
            if not i_var and index == len(i_pos):
                problems.append(
                    f"takes {len(i_pos)} positional argument(s), the Protocol allows {len(p_pos)}"
                )
        elif named is None and not i_varkw and not i_var:
            problems.append(f"has no parameter {param.name!r}, the Protocol has")
        elif named is None and not i_varkw:
            problems.append(f"does not accept {param.name!r} by keyword, the Protocol does")
        elif not i_var or (named is not None and named.default is _EMPTY):
            # Passed positionally it would land in no parameter, or in *args and not here.
            problems.append(
                f"takes {param.name!r} by keyword only, the Protocol allows it positionally"
            )
    if p_var:
        # The Protocol's extra positional arguments land on these.
        for index, other in enumerate(i_pos[len(p_pos) :], start=len(p_pos)):
            if other.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD and other.name in p_names:
                problems.append(
                    f"positional parameter {index + 1} is named {other.name!r}, "
                    f"which the Protocol passes by keyword"
                )
    for name, param in p_names.items():
        if param.kind is not inspect.Parameter.KEYWORD_ONLY:
            continue
        if name in i_positional_only:
            problems.append(f"{name!r} is positional-only, the Protocol passes it by keyword")
        elif name not in i_names and not i_varkw:
            problems.append(f"has no keyword parameter {name!r}, the Protocol has")

    # Implementation parameters every Protocol call must fill.
    for index, other in enumerate(i_pos):
        if other.default is not _EMPTY:
            continue
        if index < len(p_pos):
            param = p_pos[index]
            renamed = param.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD and (
                param.name != other.name
            )  # already reported as a name mismatch
            if param.default is not _EMPTY and not renamed:
                problems.append(_required_here(other.name))
            continue
        supplied = p_names.get(other.name)
        if other.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD and supplied is not None:
            if supplied.default is not _EMPTY:
                problems.append(_required_here(other.name))
            continue
        problems.append(f"extra parameter {other.name!r} needs a default")
    for name, other in i_names.items():
        if other.kind is not inspect.Parameter.KEYWORD_ONLY or other.default is not _EMPTY:
            continue
        supplied = p_names.get(name)
        if supplied is None:
            problems.append(f"extra keyword-only parameter {name!r} needs a default")
        elif supplied.default is not _EMPTY:
            problems.append(_required_here(name))
    return problems


def _required_here(name: str) -> str:
    return f"{name!r} has no default, the Protocol makes it optional"


def receivers(
    proto: inspect.Signature, impl: inspect.Signature
) -> list[tuple[inspect.Parameter, inspect.Parameter]]:
    """(Protocol parameter, implementation parameter receiving it) pairs, where one exists."""
    params = list(impl.parameters.values())
    positional = [p for p in params if p.kind in _POSITIONAL]
    by_name = {p.name: p for p in params if p.kind in _BY_NAME}
    var = {p.kind: p for p in params if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    pairs: list[tuple[inspect.Parameter, inspect.Parameter]] = []
    proto_positional = [p for p in proto.parameters.values() if p.kind in _POSITIONAL]
    for param in proto.parameters.values():
        receiver: inspect.Parameter | None
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            receiver = var.get(param.kind)
        elif param.kind in _BY_NAME and param.name in by_name:
            receiver = by_name[param.name]
        elif param.kind in _POSITIONAL:
            index = proto_positional.index(param)
            receiver = (
                positional[index] if index < len(positional) else var.get(param.VAR_POSITIONAL)
            )
        else:
            receiver = var.get(param.VAR_KEYWORD)
        if receiver is not None:
            pairs.append((param, receiver))
    return pairs


def old_style_positional_only(sig: inspect.Signature, owner: str) -> inspect.Signature:
    """PEP 484: leading parameters named `__x` (mangled `_Owner__x` in a class) are
    positional-only."""
    params = list(sig.parameters.values())
    if not params or not params[0].name.startswith("_"):
        return sig  # the common case, decided at once
    mangled = f"_{owner.lstrip('_')}__"
    if any(p.kind is inspect.Parameter.POSITIONAL_ONLY for p in params):
        return sig
    changed = False
    for index, param in enumerate(params):
        name = param.name
        dunder = name.startswith("__") and not name.endswith("__")
        if param.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD or not (
            dunder or (owner and name.startswith(mangled))
        ):
            break
        params[index] = param.replace(kind=inspect.Parameter.POSITIONAL_ONLY)
        changed = True
    return sig.replace(parameters=params) if changed else sig


def unpacks_typeddict(sig: inspect.Signature) -> bool:
    """Is the last parameter `**kwargs: Unpack[TD]` with TD a TypedDict (PEP 692)?"""
    params = list(sig.parameters.values())
    if not params or params[-1].kind is not inspect.Parameter.VAR_KEYWORD:
        return False
    hint = params[-1].annotation
    if typing.get_origin(hint) not in _UNPACK:
        return False
    args = typing.get_args(hint)
    return len(args) == 1 and is_typeddict(args[0])


def expand_unpacked_kwargs(sig: inspect.Signature) -> inspect.Signature:
    """`**kwargs: Unpack[TD]` as one keyword-only parameter per field of TD (PEP 692)."""
    params = list(sig.parameters.values())
    if not params or params[-1].kind is not inspect.Parameter.VAR_KEYWORD:
        return sig
    hint = params[-1].annotation
    if typing.get_origin(hint) not in _UNPACK:
        return sig
    (td,) = typing.get_args(hint)
    if not is_typeddict(td):
        return sig
    names = {p.name for p in params[:-1]}
    fields = [
        inspect.Parameter(
            key,
            inspect.Parameter.KEYWORD_ONLY,
            default=_EMPTY if required else ...,
            annotation=value,
        )
        for key, (value, required) in typeddict_fields(td).items()
        if key not in names
    ]
    return sig.replace(parameters=[*params[:-1], *fields])


def is_gradual(sig: inspect.Signature) -> bool:
    """`(..., *args: Any, **kwargs: Any)`: the spec reads it as `...`, any call shape."""
    kinds = {p.kind: p for p in sig.parameters.values()}
    var = kinds.get(inspect.Parameter.VAR_POSITIONAL)
    varkw = kinds.get(inspect.Parameter.VAR_KEYWORD)
    return (
        var is not None and varkw is not None and var.annotation is Any and varkw.annotation is Any
    )


def gradual_problems(proto: inspect.Signature, impl: inspect.Signature) -> list[str]:
    """Shape problems against a gradual Protocol signature: only its leading parameters count."""
    lead = [
        p
        for p in proto.parameters.values()
        if p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    ]
    if not lead:
        return []
    problems = shape_problems(proto.replace(parameters=lead), impl)
    return [p for p in problems if "needs a default" not in p]


__all__ = ["cabc"]
