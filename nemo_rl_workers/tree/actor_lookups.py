"""Actor classes a tree starts that a plain `Cls.remote()` reading does not name.

Two shapes, read from the source model (nothing imported):
- a dict lookup: `worker_cls = self.WORKER_CLASS_DICT[verifier_type]` then
  `worker_cls.options(...).remote()`, where the dict is a class attribute bound by the
  calling class or by its subclasses (each subclass its own dict: each is a driver of the
  classes its dict holds), a module-level dict of the calling module, or a dict written
  in place (`{"math": HFVerifyWorker, ...}[verifier_type]`);
- an explicit Python environment: `.options(runtime_env={"py_executable": X})` on the
  call, or `@ray.remote(runtime_env={"py_executable": X})` on the class: the actor runs
  in `X` whatever the registry says, so it is not "unregistered".
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nemo_rl_workers.tree.source import (
    CallSite,
    ClassInfo,
    Function,
    Resolver,
    SourceTree,
    resolve_local,
)
from nemo_rl_workers.tree.source.resolve import resolve_fqn

RUNTIME_ENV = "runtime_env"
PY_EXECUTABLE = "py_executable"
OPTIONS = "options"


def remote_target(node: ast.Call) -> tuple[ast.expr, ast.Call | None] | None:
    """(`x`, its `.options(...)` call if any) of `x[.options(...)].remote(...)`."""
    func = node.func
    if not isinstance(func, ast.Attribute) or func.attr != "remote":
        return None
    target = func.value
    if isinstance(target, ast.Call) and isinstance(target.func, ast.Attribute) and \
            target.func.attr == OPTIONS:
        return target.func.value, target
    return target, None


def looked_up(tree: SourceTree, resolver: Resolver, call: CallSite,
              function: Function | None) -> list[tuple[ClassInfo, ClassInfo]]:
    """(driver class, worker class) for each class a dict lookup at `call` may start:
    one pair per class in each dict that the lookup may read."""
    found = remote_target(call.node)
    if found is None:
        return []
    target = found[0]
    if isinstance(target, ast.Name) and function is not None:
        assigned = function.assignments.get(target.id, [])
        if len(assigned) != 1:
            return []
        target = assigned[0].value
    if not isinstance(target, ast.Subscript):
        return []
    container = target.value
    module = tree.modules.get(call.module)
    caller = tree.classes.get(f"{call.module}.{call.cls}") if call.cls else None
    if isinstance(container, ast.Attribute) and isinstance(container.value, ast.Name) and \
            container.value.id == "self" and caller is not None:
        return [(holder, worker) for holder in _holders(tree, resolver, caller, container.attr)
                for worker in _dict_classes(tree, holder, container.attr)]
    if isinstance(container, ast.Dict) and caller is not None:  # `{...}[key]` in place
        return [(caller, worker) for worker in _values(tree, caller.module, container)]
    if isinstance(container, ast.Name) and module is not None and caller is not None:
        value = module.assignments.get(container.id)
        if isinstance(value, ast.Dict):
            return [(caller, worker) for worker in _values(tree, caller.module, value)]
    return []


def _holders(tree: SourceTree, resolver: Resolver, caller: ClassInfo,
             attribute: str) -> list[ClassInfo]:
    """The caller and its subclasses in the tree that bind `attribute` to a dict."""
    return [info for info in sorted(tree.classes.values(), key=lambda c: c.fqn)
            if _dict_in(info, attribute) is not None
            and any(c.fqn == caller.fqn for c in resolver.mro(info).classes)]


def _dict_in(info: ClassInfo, attribute: str) -> ast.Dict | None:
    for statement in info.node.body:
        targets = statement.targets if isinstance(statement, ast.Assign) else (
            [statement.target] if isinstance(statement, ast.AnnAssign) else [])
        value = statement.value if isinstance(statement, ast.Assign | ast.AnnAssign) else None
        if isinstance(value, ast.Dict) and any(
                isinstance(t, ast.Name) and t.id == attribute for t in targets):
            return value
    return None


def _dict_classes(tree: SourceTree, holder: ClassInfo, attribute: str) -> list[ClassInfo]:
    value = _dict_in(holder, attribute)
    return _values(tree, holder.module, value) if value is not None else []


def _values(tree: SourceTree, module_name: str, value: ast.Dict) -> list[ClassInfo]:
    module = tree.modules.get(module_name)
    out: list[ClassInfo] = []
    for node in value.values:
        if module is None or not isinstance(node, ast.Name | ast.Attribute):
            continue
        info = resolve_fqn(tree, resolve_local(module, ast.unparse(node)))
        if info is not None and info not in out:
            out.append(info)
    return out


def explicit_executable(call: CallSite, function: Function | None,
                        worker: ClassInfo) -> str | None:
    """The Python environment the call's `.options(runtime_env=...)` or the class's
    `@ray.remote(runtime_env=...)` names for the actor, as written; None when neither
    names one the source shows (a value the registry computes is the registry's)."""
    found = remote_target(call.node)
    options = found[1] if found is not None else None
    if options is not None:
        env = _executable_of(options, function)
        if env is not None:
            return env
    for decorator in worker.node.decorator_list:
        if isinstance(decorator, ast.Call):
            env = _executable_of(decorator, None)
            if env is not None:
                return env
    return None


def _executable_of(node: ast.Call, function: Function | None) -> str | None:
    runtime = next((k.value for k in node.keywords if k.arg == RUNTIME_ENV), None)
    if isinstance(runtime, ast.Name) and function is not None:
        assigned = function.assignments.get(runtime.id, [])
        runtime = assigned[0].value if len(assigned) == 1 else None
    if not isinstance(runtime, ast.Dict):
        return None
    for key, value in zip(runtime.keys, runtime.values, strict=True):
        if isinstance(key, ast.Constant) and key.value == PY_EXECUTABLE:
            return _named(value, function)
    return None


def _named(value: ast.expr, function: Function | None, hops: int = 0) -> str | None:
    """A literal, or a name or attribute chain that is not a local computed at run time."""
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return value.value
    if isinstance(value, ast.Name) and function is not None and any(
            p.name == value.id for p in function.params):
        return None  # the caller's value
    if isinstance(value, ast.Name) and function is not None and value.id in function.assignments:
        assigned = function.assignments[value.id]
        return _named(assigned[0].value, function, hops + 1) if len(
            assigned) == 1 and hops < 4 else None
    if isinstance(value, ast.Attribute | ast.Name) and all(
            isinstance(n, ast.Attribute | ast.Name | ast.Load) for n in _nodes(value)):
        return ast.unparse(value)
    return None


def _nodes(node: ast.AST) -> Iterator[ast.AST]:
    yield from ast.walk(node)
