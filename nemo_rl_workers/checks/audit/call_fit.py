"""Whether what a call sends fits a function's parameters: the one mechanism behind every
call-shape rule of the audit (a driver's dispatch, a call on an interface, a base's
`self.m(...)`, an extension's `super().m(...)`, a driver's call of an override). Each
rule words its own sentence from the same `Fit`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from nemo_rl_workers.tree.source import Function

POSITIONAL_KINDS = ("positional-only", "positional")
VARIADIC_KINDS = ("var-positional", "var-keyword")


@dataclass(frozen=True)
class Sent:
    """What a call sends: its keywords (in the order a finding names them), how many
    positional arguments, and whether a `*args`/`**kwargs` at the call makes the rest
    uncountable."""

    keywords: tuple[str, ...]
    positional: int
    open: bool

    @classmethod
    def of(cls, node: ast.Call) -> Sent:
        return cls(tuple(k.arg for k in node.keywords if k.arg is not None), len(node.args),
                   any(isinstance(a, ast.Starred) for a in node.args)
                   or any(k.arg is None for k in node.keywords))


@dataclass(frozen=True)
class Fit:
    """Where a call does not fit: keywords no parameter takes (and no `**kwargs`); with
    no `*`/`**` at the call, more positional arguments than `takes` (and no `*args`),
    and the required parameters it never gives."""

    unknown_keywords: tuple[str, ...]
    too_many_positional: bool
    takes: int
    missing: tuple[str, ...]


def fit(function: Function, sent: Sent) -> Fit:
    params = function.bound_params()
    names = {p.name for p in params if p.kind != "positional-only"}
    unknown = () if function.takes_var_keyword else tuple(
        k for k in sent.keywords if k not in names)
    positional = [p for p in params if p.kind in POSITIONAL_KINDS]
    if sent.open:
        return Fit(unknown, False, len(positional), ())
    # A keyword never gives a positional-only parameter (under `**kwargs` it lands there).
    given = {p.name for p in positional[: sent.positional]} | (set(sent.keywords) & names)
    missing = tuple(p.name for p in params
                    if p.kind not in VARIADIC_KINDS and not p.has_default
                    and p.name not in given)
    too_many = sent.positional > len(positional) and not function.takes_var_positional
    return Fit(unknown, too_many, len(positional), missing)
