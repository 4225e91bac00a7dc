"""Every rule name the tool can print, collected from its code (read as source, nothing
imported), so that a rule added anywhere (guard, audit, check, verify, static, formats) is
found without a list to keep up to date.

A rule name is a string literal in a place that names a rule:
- a `rule=` keyword, of any call; a `rule` parameter's default;
- the rule argument of the calls that make findings: `Problem(path, expected, given,
  message, RULE)`, `Verdict(RULE, ...)` (the guard), `Finding(RULE, ...)` (formats, audit),
  `StaticFinding(member, RULE, ...)`, `PreflightRule(RULE, ...)`, `Rule(RULE, ...)` (the
  audit's registry, `findings.registry`), and the last item of
  the 5-tuples `contract_check` returns as ProblemFields;
- a `"rule": RULE` entry of a dict display (the JSON payloads `verify` builds);
- a module constant named `RULE` or `*_RULE` (a name the code passes on);
- either side of `x or RULE` in any of those places (a fallback);
- each value of a `Literal` type alias that a finding class annotates its `rule` field
  with (`rule: RuleName`), aliases nested in it included.
A rule place holding anything else (an f-string) is reported as not collectable.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

from tests.docs.snippets import REPO

PACKAGES = ("nemo_rl_workers", "contracts")
# Call name -> the index of its rule argument.
RULE_ARGUMENT = {"Problem": 4, "Verdict": 0, "Finding": 0, "StaticFinding": 1,
                 "PreflightRule": 0, "Rule": 0}


def sources(packages: Iterable[str] = PACKAGES) -> Iterator[tuple[str, ast.Module]]:
    for package in packages:
        for path in sorted((REPO / package).rglob("*.py")):
            yield str(path.relative_to(REPO)), ast.parse(path.read_text(encoding="utf-8"))


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _literals(node: ast.expr) -> Iterator[str | None]:
    """The rule names a rule place holds; None for one that is no literal and no name
    (a name is a variable or a constant, which the other places find)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, ast.BoolOp):
        for value in node.values:
            yield from _literals(value)
    elif isinstance(node, ast.JoinedStr):
        yield None


def _aliases(modules: list[tuple[str, ast.Module]]) -> dict[str, list[str]]:
    """Each `X: TypeAlias = Literal[...]` (or `X = Literal[...]`): its values, nested
    aliases written as names."""
    found: dict[str, list[str]] = {}
    for _, module in modules:
        for node in module.body:
            target, value = (
                (node.target, node.value) if isinstance(node, ast.AnnAssign)
                else (node.targets[0], node.value) if isinstance(node, ast.Assign)
                and len(node.targets) == 1 else (None, None))
            if not isinstance(target, ast.Name) or not isinstance(value, ast.Subscript) \
                    or _name(value.value) != "Literal":
                continue
            items = value.slice.elts if isinstance(value.slice, ast.Tuple) else [value.slice]
            found[target.id] = [
                item.value if isinstance(item, ast.Constant) and isinstance(item.value, str)
                else f"alias:{_name(item)}" for item in items]
    return found


def _expand(alias: str, aliases: dict[str, list[str]]) -> set[str]:
    out: set[str] = set()
    for item in aliases.get(alias, ()):
        out |= _expand(item[6:], aliases) if item.startswith("alias:") else {item}
    return out


def collect(modules: list[tuple[str, ast.Module]]) -> tuple[dict[str, str], list[str]]:
    """(rule name -> the first place it is written, "file:line"; the rule places that
    hold something not collectable)."""
    found: dict[str, str] = {}
    dynamic: list[str] = []

    def add(node: ast.expr, file: str) -> None:
        for value in _literals(node):
            if value is None:
                dynamic.append(f"{file}:{node.lineno}: {ast.unparse(node)[:60]}")
            elif value:
                found.setdefault(value, f"{file}:{node.lineno}")

    aliases = _aliases(modules)
    for file, module in modules:
        for node in ast.walk(module):
            if isinstance(node, ast.Call):
                for keyword in node.keywords:
                    if keyword.arg == "rule":
                        add(keyword.value, file)
                index = RULE_ARGUMENT.get(_name(node.func))
                if index is not None and len(node.args) > index \
                        and not isinstance(node.args[index], ast.Starred):
                    add(node.args[index], file)
            elif isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values, strict=True):
                    if isinstance(key, ast.Constant) and key.value == "rule":
                        add(value, file)
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 \
                    and isinstance(node.targets[0], ast.Name) \
                    and (node.targets[0].id == "RULE" or node.targets[0].id.endswith("_RULE")):
                add(node.value, file)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                args = node.args.args + node.args.kwonlyargs
                defaults = [None] * (len(node.args.args) - len(node.args.defaults)) + list(
                    node.args.defaults) + list(node.args.kw_defaults)
                for arg, default in zip(args, defaults, strict=True):
                    if arg.arg == "rule" and default is not None:
                        add(default, file)
                if node.returns is not None and "ProblemFields" in ast.unparse(node.returns):
                    for inner in ast.walk(node):
                        if isinstance(inner, ast.Tuple) and len(inner.elts) == 5:
                            add(inner.elts[4], file)
            elif isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.AnnAssign) and _name(item.target) == "rule":
                        names = {n.id for n in ast.walk(item.annotation)
                                 if isinstance(n, ast.Name)}
                        for rule in (r for alias in names for r in _expand(alias, aliases)):
                            found.setdefault(rule, f"{file}:{item.lineno}")
    return found, dynamic


def emitted_rules() -> dict[str, str]:
    found, dynamic = collect(list(sources()))
    assert dynamic == [], f"rule names must be literals to be explained: {dynamic}"
    return found

