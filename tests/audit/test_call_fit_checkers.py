"""`call_fit` (the audit's one call-shape mechanism) against mypy and pyrefly, on calls
generated over every kind of parameter: a call fits exactly when both checkers accept it.

Left out, as the audit does not judge them: calls with `*`/`**` (what they send cannot be
counted) and calls that give one parameter twice (positionally and by keyword).
"""

from __future__ import annotations

import ast
import itertools
import random
from dataclasses import dataclass

import pytest

from nemo_rl_workers.checks.audit.call_fit import Sent, fit
from nemo_rl_workers.tree.source import read_tree
from tests.static.checkers import mypy_errors, pyrefly_errors

SEED = 28
CASES = 400
KEYWORDS = ("a", "b", "c", "d")


@dataclass(frozen=True)
class Case:
    signature: str  # the parameters after `self`
    positional: int
    keywords: tuple[str, ...]

    def call(self) -> str:
        return ", ".join([*(["1"] * self.positional), *(f"{k}=1" for k in self.keywords)])


def _signatures() -> list[str]:
    out = []
    for pos_only, positional, star, kw_only, var_kw in itertools.product(
            ([], ["a: int"]), ([], ["b: int"], ["b: int = 1"]), ("", "*args: int", "*"),
            ([], ["c: int"], ["c: int = 1"]), ("", "**kwargs: int")):
        if star == "*" and not kw_only:
            continue  # a bare `*` needs a keyword-only parameter after it
        if star == "" and kw_only:
            star = "*"
        parts = [*pos_only, *(["/"] if pos_only else []), *positional,
                 *([star] if star else []), *kw_only, *([var_kw] if var_kw else [])]
        out.append(", ".join(parts))
    return sorted(set(out))


def _positional_names(signature: str) -> list[str]:
    names = []
    for part in signature.split(", "):
        if part.startswith("*"):
            break
        if part != "/" and part:
            names.append(part.split(":")[0])
    return names


def _cases() -> list[Case]:
    rng = random.Random(SEED)
    signatures = _signatures()
    out: list[Case] = []
    while len(out) < CASES:
        signature = rng.choice(signatures)
        positional = rng.randrange(4)
        keywords = tuple(k for k in KEYWORDS if rng.random() < 0.4)
        if set(_positional_names(signature)[:positional]) & set(keywords):
            continue  # one parameter given twice: not judged by the audit
        out.append(Case(signature, positional, keywords))
    return out


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Case, bool, bool, bool]]:
    """(case, fits by call_fit, mypy accepts, pyrefly accepts) per generated case."""
    root = tmp_path_factory.mktemp("call_fit")
    lines: list[str] = []
    call_lines: dict[int, Case] = {}
    cases = _cases()
    for index, case in enumerate(cases):
        lines += [f"class C{index}:", f"    def m(self, {case.signature}) -> None: ...", ""]
        lines.append(f"C{index}().m({case.call()})")
        call_lines[len(lines)] = case
        lines.append("")
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    module = root / "pkg" / "calls.py"
    module.write_text("\n".join(lines) + "\n")
    tree = read_tree(root)
    tree.module("pkg.calls")
    rejected_by = [{line for _, line, _, _ in errors([module])}
                   for errors in (mypy_errors, pyrefly_errors)]
    out = []
    for index, case in enumerate(cases):
        function = tree.classes[f"pkg.calls.C{index}"].methods["m"]
        node = ast.parse(f"C().m({case.call()})").body[0]
        assert isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
        shape = fit(function, Sent.of(node.value))
        fits = not (shape.unknown_keywords or shape.too_many_positional or shape.missing)
        line = next(n for n, c in call_lines.items() if c is case)
        out.append((case, fits, line not in rejected_by[0], line not in rejected_by[1]))
    return out


def test_the_checkers_agree_with_each_other(
        judged: list[tuple[Case, bool, bool, bool]]) -> None:
    assert [c for c, _, by_mypy, by_pyrefly in judged if by_mypy != by_pyrefly] == []


def test_call_fit_is_the_checkers_verdict(judged: list[tuple[Case, bool, bool, bool]]) -> None:
    assert [(c, fits) for c, fits, by_mypy, _ in judged if fits != by_mypy] == []
    # Both verdicts occur often enough to mean something.
    assert 50 < sum(fits for _, fits, _, _ in judged) < CASES - 50
