"""The repository's import graph, read from source once per session (`conftest.graph`).

Every `import` counts: those inside functions (a late import that dodges a cycle is still a
cycle) and those of `if TYPE_CHECKING:` blocks (which never run but tie two modules
together all the same), each edge marked with which it is. Besides the module-to-module
edges it keeps what each import names, so that a private name (`_x`) taken from another
module, by `from m import _x` or as `m._x`, is found too.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

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


@dataclass(frozen=True)
class Edge:
    """One project module importing another (`target`), where and how."""

    module: str
    target: str
    line: int
    type_checking: bool  # only inside `if TYPE_CHECKING:`


@dataclass(frozen=True)
class PrivateUse:
    """A private name of `target` used in `module` (`from target import _x`, `target._x`)."""

    module: str
    target: str
    name: str
    line: int

    def __str__(self) -> str:
        return f"{self.module}:{self.line} uses {self.target}.{self.name}"


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def modules() -> dict[str, Path]:
    """Every project module's dotted name -> its file."""
    found: dict[str, Path] = {}
    for package, root in ROOTS.items():
        for path in sorted((root / package).rglob("*.py")):
            if ".egg-info" in path.as_posix() or "__pycache__" in path.parts:
                continue
            parts = path.relative_to(root).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import statement, with whether it sits in an `if TYPE_CHECKING:` body."""
    todo: list[tuple[ast.AST, bool]] = [(tree, False)]
    while todo:
        node, type_checking = todo.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            todo.extend((child, True) for child in node.body)
            todo.extend((child, type_checking) for child in node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, type_checking
        todo.extend((child, type_checking) for child in ast.iter_child_nodes(node))


def _nearest_module(name: str, known: Mapping[str, Path]) -> str:
    while name and name not in known:
        name = name.rpartition(".")[0]  # `import a.b.c` of a module a.b
    return name


@dataclass(frozen=True)
class ImportGraph:
    """The project's modules and every import edge and private use between them."""

    files: Mapping[str, Path]
    edges: tuple[Edge, ...]
    private_uses: tuple[PrivateUse, ...]

    def graph(self, type_checking: bool = False) -> dict[str, set[str]]:
        """Module -> the project modules it imports; with `type_checking`, those of
        `if TYPE_CHECKING:` blocks too."""
        found: dict[str, set[str]] = {name: set() for name in self.files}
        for edge in self.edges:
            if type_checking or not edge.type_checking:
                found[edge.module].add(edge.target)
        return found

    def inits(self) -> set[str]:
        return {name for name, path in self.files.items() if path.name == "__init__.py"}


def read_graph(files: Mapping[str, Path] | None = None) -> ImportGraph:
    """Parse every module once and collect its edges and private uses."""
    files = modules() if files is None else files
    edges: list[Edge] = []
    private: list[PrivateUse] = []
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        bound: dict[str, str] = {}  # a local name bound to a project module -> that module
        for node, type_checking in _imports(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    target = _nearest_module(alias.name, files)
                    if target and target != name:
                        edges.append(Edge(name, target, node.lineno, type_checking))
                        if alias.asname and target == alias.name:
                            bound[alias.asname] = target
                continue
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join([*parts[: len(parts) - node.level + 1], *([base] if base else [])])
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                target = submodule if submodule in files else _nearest_module(base, files)
                if not target or target == name:
                    continue
                edges.append(Edge(name, target, node.lineno, type_checking))
                if target == submodule:
                    bound[alias.asname or alias.name] = target
                    if is_private(alias.name):  # a private module
                        private.append(PrivateUse(name, base, alias.name, node.lineno))
                elif is_private(alias.name) and target == base:
                    private.append(PrivateUse(name, target, alias.name, node.lineno))
        for used in ast.walk(tree):
            if (isinstance(used, ast.Attribute) and isinstance(used.value, ast.Name)
                    and used.value.id in bound and is_private(used.attr)):
                private.append(PrivateUse(name, bound[used.value.id], used.attr, used.lineno))
    return ImportGraph(files, tuple(edges), tuple(private))


def find_cycle(graph: Mapping[str, set[str]]) -> list[str] | None:
    """One import cycle as [a, b, ..., a], or None; iterative depth-first search."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in sorted(graph):
        if start in state:
            continue
        path = [start]
        todo: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        state[start] = 1
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
                todo.append((child, iter(sorted(graph.get(child, set())))))
    return None
