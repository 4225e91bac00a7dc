"""The tree's own extensions: every worker class a driver starts and class the tree hands
vLLM as `worker_extension_cls`, and every class of the tree that subclasses one, judged
as `audit ... EXTENSION` judges a user's class (`extension_rules`), and its overrides
against the calls its base classes make on `self` (a worker whose base's lifecycle calls
`self._create_engine(llm_kwargs)` and which overrides `_create_engine(self)`).

- `super().m(...)` / `self.m(...)` in the class's own methods, against its MRO: a method
  no class defines, an unknown keyword, a missing argument, too many positional ones
  (the `extension-*` rules);
- each method it overrides, against every `self.m(...)` its bases' own methods make (the
  base's lifecycle calls the subclass's override): the `base-call-*` rules.

What cannot be told (a base outside the tree, a decorated method, `*`/`**` at the call)
is passed over here, as the extension side lists it as unknown.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from nemo_rl_workers.checks.audit.call_fit import Sent, fit
from nemo_rl_workers.checks.audit.extension_rules import (
    ExtensionAudit,
    MethodCalls,
    keeps_signature,
    self_nodes,
)
from nemo_rl_workers.checks.audit.rules import Finding
from nemo_rl_workers.findings import registry as said
from nemo_rl_workers.findings.registry import Message
from nemo_rl_workers.tree.source import (
    ClassInfo,
    Function,
    Resolver,
    SourceTree,
    base_names,
    resolve_fqn,
)


def model_mentioning(tree: SourceTree, names: Iterable[str]) -> None:
    """Model every pending module whose text names one of these classes (a subclass
    must import or name its base)."""
    wanted = sorted({n for n in names if n})
    if not wanted:
        return
    # As a word: `Value` names the driver, `ValueError` does not.
    pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, wanted)) + r")\b")
    for module in [m for m, (_, text) in tree.pending.items() if pattern.search(text)]:
        tree.module(module)


MAX_CHAIN = 200  # a chain of bases longer than this is the MRO's problem, not ours


def subclasses_of(tree: SourceTree, resolver: Resolver, roots: set[str]) -> list[ClassInfo]:
    """Classes of the tree (not the stubs) among `roots` (with bases) or with an ancestor
    among them: each
    class's bases are resolved once (memoized), so a tree of 10,000 classes costs 10,000
    steps, not 10,000 MROs."""
    known: dict[str, bool] = {}

    def descends(start: ClassInfo) -> bool:
        path: list[ClassInfo] = []
        todo = [start]
        result = False
        while todo and len(path) < MAX_CHAIN and not result:
            info = todo.pop()
            if info.fqn in known:
                result = known[info.fqn]
                continue
            if info in path:
                continue
            path.append(info)
            for name in base_names(tree, info):
                if name in roots:
                    result = True
                    break
                base = resolve_fqn(tree, name)
                if base is not None:
                    todo.append(base)
        for info in path:
            known.setdefault(info.fqn, result)
        return result

    out = [info for info in list(tree.classes.values())
           if info.bases and info.file.startswith(tree.roots[0])
           and (info.fqn in roots or descends(info))]
    return sorted(out, key=lambda c: c.fqn)


def audit_subclasses(
    tree: SourceTree, resolver: Resolver, roots: set[str]
) -> list[Finding]:
    findings: list[Finding] = []
    cache: dict[str, _SelfCalls] = {}
    for info in subclasses_of(tree, resolver, roots):
        findings.extend(audit_subclass(tree, resolver, info, cache))
    return findings


def audit_subclass(tree: SourceTree, resolver: Resolver, info: ClassInfo,
                   cache: dict[str, _SelfCalls] | None = None) -> list[Finding]:
    """One class's own methods: its `super()`/`self` calls, and its overrides against
    what its bases call on `self` (`cache`: the bases' calls, shared across classes)."""
    if resolver.mro(info).problem is not None:
        return []
    audit = ExtensionAudit(info.fqn, info)
    checker = MethodCalls(tree, resolver, info, audit)
    for function in info.methods.values():
        checker.body_calls(info, function)
    return [*audit.findings, *_base_calls(checker, info, {} if cache is None else cache)]


_SelfCalls = dict[str, list[tuple[Function, ast.Call]]]


def _self_calls(info: ClassInfo, cache: dict[str, _SelfCalls]) -> _SelfCalls:
    """`self.<name>(...)` calls in a class's own methods, by name (once per class)."""
    if info.fqn not in cache:
        found: _SelfCalls = {}
        for function in info.methods.values():
            for node in self_nodes(function):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and isinstance(node.func.value, ast.Name)
                        and node.func.value.id == "self"):
                    found.setdefault(node.func.attr, []).append((function, node))
        cache[info.fqn] = found
    return cache[info.fqn]


def _base_calls(checker: MethodCalls, info: ClassInfo,
                cache: dict[str, _SelfCalls]) -> list[Finding]:
    """Each override of `info` against the `self.<name>(...)` calls of its bases."""
    out: list[Finding] = []
    for name, override in info.methods.items():
        if name.startswith("__") or not keeps_signature(override):
            continue
        for base in checker.mro[1:]:
            for function, node in _self_calls(base, cache).get(name, ()):
                out.extend(_judge(info, override, base, function, node))
    return out


def _judge(info: ClassInfo, override: Function, base: ClassInfo, caller: Function,
           node: ast.Call) -> list[Finding]:
    where = f"{caller.file}:{node.lineno}"
    spelled = f"{base.name}.{caller.name}"

    def finding(message: Message, **args: str) -> Finding:
        return Finding(message, spelled, override.name, info.fqn, where, override.where,
                       tuple(args.items()))

    out: list[Finding] = []
    shape = fit(override, Sent.of(node))
    for keyword in shape.unknown_keywords:
        out.append(finding(said.BASE_CALL_NO_SUCH_PARAMETER, keyword=keyword))
    if shape.too_many_positional:
        out.append(finding(said.BASE_CALL_TOO_MANY, count=str(len(node.args)),
                           takes=str(shape.takes)))
    for name in shape.missing:
        out.append(finding(said.BASE_CALL_WITHOUT, name=name))
    return out
