"""The packages import without cycles (issue 22): read as source, every `import` counts,
also those inside functions (a late import that dodges a cycle is still a cycle), and
(issue 33) those of `if TYPE_CHECKING:` blocks, which never run but tie two modules
together all the same."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# Every package of the repository -> the folder that holds it (its sys.path entry).
ROOTS = {
    "contracts": REPO,
    "nemo_rl_workers": REPO,
    "nemo_rl": REPO / "runtime",
    "template_project": REPO / "research" / "template_project",
    "tests": REPO,
    "bench": REPO,
}
PACKAGES = tuple(ROOTS)


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package, root in ROOTS.items():
        for path in sorted((root / package).rglob("*.py")):
            if ".egg-info" in path.as_posix() or "__pycache__" in path.parts:
                continue
            parts = path.relative_to(root).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, type_checking: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        if not type_checking and isinstance(node, ast.If) and _is_type_checking(node.test):
            todo.extend(node.orelse)  # the body never runs
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        todo.extend(ast.iter_child_nodes(node))


def import_graph(type_checking: bool = False) -> dict[str, set[str]]:
    """Module -> the project modules it imports (the module a name is taken from; a
    submodule when `from package import submodule`); with `type_checking`, those of
    `if TYPE_CHECKING:` blocks too."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"), str(path)),
                             type_checking):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([base] if base else [])])
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                           for a in node.names]
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]  # `import a.b.c` of a module a.b
                if target and target != name:
                    graph[name].add(target)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as [a, b, ..., a], or None; iterative depth-first search."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in sorted(graph):
        if start in state:
            continue
        path: list[str] = []
        todo: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        state[start] = 1
        path.append(start)
        while todo:
            node, children = todo[-1]
            child = next(children, None)
            if child is None:
                state[node] = 2
                path.pop()
                todo.pop()
            elif state.get(child) == 1:
                return [*path[path.index(child):], child]
            elif child not in state:
                state[child] = 1
                path.append(child)
                todo.append((child, iter(sorted(graph[child]))))
    return None


def _without_package_inits(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Edges into a package's own `__init__` from inside it are how a package exports its
    modules; only module-to-module imports can form the cycles meant here."""
    inits = {name for name, path in _modules().items() if path.name == "__init__.py"}
    return {
        name: {t for t in targets if not (t in inits and name.startswith(f"{t}."))}
        for name, targets in graph.items()
    }


def test_the_graph_is_read_from_every_module() -> None:
    graph = import_graph()
    assert {"contracts.hints", "contracts.verify", "nemo_rl_workers.model.registry",
            "nemo_rl_workers.model.table"} <= set(graph)
    assert "contracts.hints" in graph["contracts.verify"]
    assert "nemo_rl_workers.model.table" in graph["nemo_rl_workers.model.registry"]


def test_find_cycle_finds_a_late_import_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


@pytest.mark.parametrize("package", PACKAGES)
@pytest.mark.parametrize("type_checking", [False, True], ids=["run", "type-checking"])
def test_no_import_cycle(package: str, type_checking: bool) -> None:
    """Neither the imports that run nor, with them, those a type checker follows
    (`if TYPE_CHECKING:`): a cycle hidden behind one is still two modules that cannot be
    understood apart."""
    graph = _without_package_inits(import_graph(type_checking))
    inside = {m: {t for t in ts if t.split(".")[0] == package}
              for m, ts in graph.items() if m.split(".")[0] == package}
    cycle = find_cycle(inside)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])
