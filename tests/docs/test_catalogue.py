"""The guide's error catalogue covers every exception class and every Problem rule in the code.

The code is scanned, not imported, so a new `class FooError(...)` or a new `rule="..."`
anywhere under nemo_rl_workers/, runtime/nemo_rl/, contracts/ or research/ fails this test
until the guide's catalogue has an entry for it; an entry whose name the code no longer has
fails too.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import get_args

import pytest

from contracts.verify import Rule as ViolationKind
from nemo_rl_workers.model.preflight import RULES as PREFLIGHT_RULES
from nemo_rl_workers.reading.loader import LoadErrorKind
from tests.docs.snippets import REPO

GUIDE = REPO / "docs" / "guides" / "worker-extensions.md"
PACKAGES = ("nemo_rl_workers", "runtime/nemo_rl", "contracts", "research")
EXCEPTION_BASES = {"Exception", "BaseException"}


def sources() -> Iterator[tuple[Path, ast.Module]]:
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            yield path, ast.parse(path.read_text(encoding="utf-8"), str(path))


def _base_name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def exception_classes(modules: Iterable[ast.Module]) -> set[str]:
    """Classes named *Error, and classes deriving from an exception type, by name."""
    found: set[str] = set()
    for module in modules:
        for node in ast.walk(module):
            if not isinstance(node, ast.ClassDef):
                continue
            bases = {_base_name(b) for b in node.bases}
            if node.name.endswith("Error") or bases & EXCEPTION_BASES or any(
                b.endswith("Error") for b in bases
            ):
                found.add(node.name)
    return found


def _literal(node: ast.expr | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def problem_rules(modules: Iterable[ast.Module]) -> tuple[set[str], list[str]]:
    """Rule names written in the code, and the places that compute one (not catalogued).

    A rule is a `rule=` keyword, the fifth argument of `Problem(...)`, a `rule` parameter's
    default, or the last item of the 5-tuples that `contract_check` returns as ProblemFields.
    """
    rules: set[str] = set()
    dynamic: list[str] = []
    for module in modules:
        for node in ast.walk(module):
            if isinstance(node, ast.Call):
                for kw in node.keywords:
                    if kw.arg == "rule":
                        value = _literal(kw.value)
                        if value is not None:
                            rules.add(value)
                        elif isinstance(kw.value, ast.JoinedStr):
                            dynamic.append(ast.unparse(node)[:80])
                if _base_name(node.func) == "Problem" and len(node.args) >= 5:
                    value = _literal(node.args[4])
                    if value is not None:
                        rules.add(value)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                args = node.args.args + node.args.kwonlyargs
                defaults = [None] * (len(node.args.args) - len(node.args.defaults)) + list(
                    node.args.defaults) + list(node.args.kw_defaults)
                for arg, default in zip(args, defaults, strict=True):
                    value = _literal(default)
                    if arg.arg == "rule" and value:
                        rules.add(value)
                returns = ast.unparse(node.returns) if node.returns else ""
                if "ProblemFields" in returns:
                    for inner in ast.walk(node):
                        if isinstance(inner, ast.Tuple) and len(inner.elts) == 5:
                            value = _literal(inner.elts[4])
                            if value is not None:
                                rules.add(value)
    return rules, dynamic


def catalogue_section(title: str) -> str:
    text = GUIDE.read_text(encoding="utf-8")
    catalogue = text.split("## Error catalogue", 1)[1]
    return catalogue.split(f"### {title}", 1)[1].split("\n### ", 1)[0]


def table_names(section: str) -> list[str]:
    """The backticked name in the first cell of each table row."""
    return re.findall(r"^\| `([^`]+)` \|", section, flags=re.MULTILINE)


def code_rules() -> set[str]:
    modules = [m for _, m in sources()]
    rules, dynamic = problem_rules(modules)
    assert dynamic == [], f"rule names must be literals to be catalogued: {dynamic}"
    return rules | {r.name for r in PREFLIGHT_RULES}


@pytest.mark.slow  # reads every module: 5.5 s on 2 busy cores
def test_every_exception_class_has_an_entry() -> None:
    names = table_names(catalogue_section("Exceptions"))
    assert len(names) == len(set(names))
    assert sorted(names) == sorted(exception_classes(m for _, m in sources()))


@pytest.mark.slow  # 9.7 s on 2 busy cores
def test_every_problem_rule_has_an_entry() -> None:
    names = table_names(catalogue_section("Problem rules"))
    assert len(names) == len(set(names))
    assert sorted(names) == sorted(code_rules())


def test_every_contract_violation_kind_has_an_entry() -> None:
    names = table_names(catalogue_section("Contract violations"))
    assert names == list(get_args(ViolationKind))


def test_every_load_error_kind_has_an_entry() -> None:
    names = table_names(catalogue_section("Config load errors"))
    assert names == list(get_args(LoadErrorKind))


def test_a_new_class_or_rule_without_an_entry_is_caught() -> None:
    """What a contributor adds is found by the same scan the catalogue tests use."""
    new = ast.parse(
        "class QuotaError(RuntimeError): ...\n"
        "class Refused(Exception): ...\n"
        "def f(path):\n"
        "    return Problem(path, 'a', 'b', 'msg', 'quota.gpus')\n"
        "def g(path):\n"
        "    return Problem(path=path, expected='a', given='b', message='m', rule='quota.cpus')\n"
        "def h(path, rule='quota.default'): ...\n"
        "def i(path) -> list[ProblemFields]:\n"
        "    return [(path, 'a', 'b', 'm', 'quota.env')]\n"
    )
    assert exception_classes([new]) == {"QuotaError", "Refused"}
    rules, dynamic = problem_rules([new])
    assert rules == {"quota.gpus", "quota.cpus", "quota.default", "quota.env"}
    assert not rules & set(table_names(catalogue_section("Problem rules")))
    computed = ast.parse("Problem(path='p', expected='e', given='g', message='m', rule=f'x.{y}')")
    assert problem_rules([computed])[1] != []
