"""The config a module's entry functions run on: the top-level keys it requires.

An algorithm module of a NeMo-RL tree (`algorithms/grpo.py`) declares the whole config its
entry functions take as a class with annotated fields (a `TypedDict`, or a pydantic model
in later trees), the annotation of a parameter of its module-level functions
(`setup(master_config: MasterConfig, ...)`) whose fields are config blocks themselves
(`policy: PolicyConfig`): a block such as the generation settings a rollout helper takes
is not a whole config. Its fields with no default, not `NotRequired`
and not optional, are the top-level keys a config must have for that module to run on it:
a recipe without a `ppo:` block does not run PPO's training loop. Read from the source
model (nothing imported); a module with no such class has no answer (None).
"""

from __future__ import annotations

import ast

from nemo_rl_workers.tree.source import ClassInfo, Module, SourceTree, resolve_local
from nemo_rl_workers.tree.source.resolve import dotted_name, resolve_fqn

# Annotations that make a field optional, by their last name (`typing.NotRequired`).
OPTIONAL_WRAPPERS = frozenset({"NotRequired", "Optional"})
# A whole config has at least this many fields that are config blocks themselves.
MIN_BLOCKS = 2


def required_keys(tree: SourceTree, module_name: str) -> tuple[str, ...] | None:
    """The top-level keys the module's entry config class requires, sorted; None when the
    module's functions take no whole config (a class whose fields are config blocks)."""
    module = tree.module(module_name)
    if module is None:
        return None
    best: tuple[int, tuple[str, ...]] | None = None
    seen: set[str] = set()
    for function in module.functions.values():
        for param in function.params:
            info = class_named(tree, module, param.annotation)
            if info is None or info.fqn in seen:
                continue
            seen.add(info.fqn)
            fields = _fields(info)
            blocks = block_count(tree, info)
            if blocks < MIN_BLOCKS:
                continue  # a block of a config (generation settings), not a whole one
            required = tuple(sorted(n for n, (_, needed) in fields.items() if needed))
            if best is None or blocks > best[0]:
                best = (blocks, required)
    return None if best is None else best[1]


def block_count(tree: SourceTree, info: ClassInfo) -> int:
    """How many of a config class's fields are config blocks themselves (a whole config
    has at least `MIN_BLOCKS`)."""
    return sum(1 for annotation, _ in _fields(info).values()
               if (block := class_named(tree, _module_of(tree, info), annotation))
               is not None and _fields(block))


def _module_of(tree: SourceTree, info: ClassInfo) -> Module | None:
    return tree.module(info.module)


def class_named(tree: SourceTree, module: Module | None,
                annotation: str | None) -> ClassInfo | None:
    """The tree's class an annotation names (`MasterConfig`, `"cfg.PolicyConfig"`)."""
    if annotation is None or module is None:
        return None
    name = annotation.strip("\"'")
    if not name.replace(".", "").replace("_", "").isalnum():
        return None  # `dict[str, Any]`, a union: not one class
    return resolve_fqn(tree, resolve_local(module, name))


def _fields(info: ClassInfo) -> dict[str, tuple[str, bool]]:
    """Annotated class-level fields -> (annotation as written, whether a value must be
    given)."""
    out: dict[str, tuple[str, bool]] = {}
    total = not any(k.arg == "total" and isinstance(k.value, ast.Constant)
                    and k.value.value is False for k in info.node.keywords)
    for statement in info.node.body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            out[statement.target.id] = (
                ast.unparse(statement.annotation),
                total and _no_default(statement.value) and not _optional(statement.annotation))
    return out


def _no_default(value: ast.expr | None) -> bool:
    """No value, or a pydantic `Field(...)` that gives none (`Field(min_length=1)`,
    `Field(..., description=...)`): the field must be given."""
    if value is None:
        return True
    if not (isinstance(value, ast.Call) and (dotted_name(value.func) or "").rpartition(
            ".")[2] == "Field"):
        return False
    if any(k.arg in ("default", "default_factory") or k.arg is None for k in value.keywords):
        return False
    return not value.args or (isinstance(value.args[0], ast.Constant)
                              and value.args[0].value is Ellipsis)


def _optional(annotation: ast.expr) -> bool:
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return any(isinstance(side, ast.Constant) and side.value is None
                   for side in (annotation.left, annotation.right)) or _optional(
            annotation.left) or _optional(annotation.right)
    if isinstance(annotation, ast.Subscript):
        head = annotation.value
        name = head.attr if isinstance(head, ast.Attribute) else (
            head.id if isinstance(head, ast.Name) else "")
        return name in OPTIONAL_WRAPPERS
    return False


def setup_keys(tree: SourceTree) -> dict[str, tuple[str, ...] | None]:
    """Each entry module with a `setup` taking a config (an algorithm's, the
    evaluation's) -> the top-level keys that config requires (None where the module
    declares none the model can read)."""
    from nemo_rl_workers.tree.entry_builds import entry_modules

    found: dict[str, tuple[str, ...] | None] = {}
    for name in entry_modules(tree):
        needs = required_keys(tree, name)
        found[name] = tuple(needs) if needs is not None else None
    return found
