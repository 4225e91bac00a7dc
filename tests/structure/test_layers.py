"""The tool's layers, in the order its data flows (issue 26, issue 45's "Done when"): no
import cycle (`test_import_cycles`), no arrow back up (a module imports only from its own
layer or one below it), and no private name (`_x`) taken from another module, by
`from m import _x` or as `m._x`. Read from source once (`graph.read_graph`), late imports
inside functions and `if TYPE_CHECKING:` blocks included: an annotation ties two modules
together as much as a call.

What is wrong today is listed below, entry by entry, with the item of issue 45 that removes
it: a new violation fails, and so does an entry that no longer is one (shrink the list as
the items land; never grow it).

Also the boundaries between the distributions: `contracts` imports neither the tool nor
the runtime, and the tool never imports the runtime `nemo_rl` (it is installed beside a
user's NeMo-RL, which owns that name).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.structure.graph import ImportGraph, PrivateUse, find_cycle

# Lowest first, as DESIGN.md's "The tool's package, by pipeline stage" lets data flow; a
# folder DESIGN names that does not exist yet (io/, config/, reference/, migrate/,
# interpret/, cache/, cli/) has its place already, so a move into it needs no edit here.
# The package's own `__init__` (the lazy public API and `__version__`), `errors` (the
# exception catalogue every layer raises) and the audit's rule registry (the rules and
# sentences every layer's findings hold, pure data) are the floor.
LAYERS = (
    ("nemo_rl_workers", "nemo_rl_workers.errors", "nemo_rl_workers.lazy",
     "nemo_rl_workers.findings.registry"),
    ("nemo_rl_workers.reading", "nemo_rl_workers.io"),
    # One content-keyed store, digest and codec: what the tree stage and the checks cache.
    ("nemo_rl_workers.cache",),
    ("nemo_rl_workers.config",),
    ("nemo_rl_workers.model", "nemo_rl_workers.reference"),
    ("nemo_rl_workers.migrate",),
    # The tree stage: the model of a NeMo-RL tree, which every check reads.
    ("nemo_rl_workers.tree",),
    # Evaluating the tree's own code on a config, which the rule families extend.
    ("nemo_rl_workers.interpret",),
    ("nemo_rl_workers.checks",),
    ("nemo_rl_workers.findings",),
    # The runtime guard reads the tree and judges with the checks, in the user's process;
    # `nemo-rl-workers run` (a command) arms it, so it sits below the commands.
    ("nemo_rl_workers.guard",),
    ("nemo_rl_workers.commands", "nemo_rl_workers.cli", "nemo_rl_workers.__main__"),
)

# Today's arrows back up: "module -> target" -> the item of issue 45 that removes it.
UPWARD_TODAY: dict[str, str] = {}

# Private names used across the tool's modules: "module uses target.name" -> the change that
# removes it. None today; an entry needs a reason and a way out, like the lists beside it.
PRIVATE_TODAY: dict[str, str] = {}

# Tests that reach into the tool's private names (issue 45, item 7: a test holds what users
# see, so a move of code does not break it): "test uses target.name" -> who removes it.
# None today.
TESTS_PRIVATE_TODAY: dict[str, str] = {}

# The packages the private-name rule holds: the tool and `contracts`.
HELD = ("nemo_rl_workers", "contracts")
# The package's own `__init__` is the lazy public API: at run time it imports `lazy` only;
# its `if TYPE_CHECKING:` block names, for type checkers, what it re-exports from above.
FACADE = "nemo_rl_workers"


def layer_of(module: str) -> int | None:
    """The index of the layer holding `module` (the longest matching prefix wins)."""
    best: tuple[int, int] | None = None  # (prefix length, layer)
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            exact_only = prefix == "nemo_rl_workers"  # the package's own __init__
            matches = module == prefix or (not exact_only and module.startswith(f"{prefix}."))
            if matches and (best is None or len(prefix) > best[0]):
                best = (len(prefix), index)
    return None if best is None else best[1]


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Every "module -> target" where `target` sits in a higher layer than `module`."""
    found = []
    for module, targets in sorted(graph.items()):
        here = layer_of(module)
        if here is None:
            continue
        for target in sorted(targets):
            there = layer_of(target)
            if there is not None and there > here:
                found.append(f"{module} -> {target}")
    return found


def arrows(graph: ImportGraph) -> dict[str, set[str]]:
    """What each module names, annotations included; the facade's run-time imports only."""
    named = graph.graph(type_checking=True)
    return {**named, FACADE: graph.graph()[FACADE]}


def private_uses(graph: ImportGraph) -> list[str]:
    """Every private name a held module takes from another module."""
    return sorted({f"{use.module} uses {use.target}.{use.name}" for use in graph.private_uses
                   if use.module.split(".")[0] in HELD})


def test_every_tool_module_has_a_layer(import_graph: ImportGraph) -> None:
    tool = [m for m in import_graph.graph() if m.split(".")[0] == "nemo_rl_workers"]
    assert len(tool) > 50
    assert [m for m in tool if layer_of(m) is None] == []


def test_layer_of_takes_the_longest_prefix() -> None:
    assert layer_of("nemo_rl_workers") == 0
    assert layer_of("nemo_rl_workers.errors") == 0
    assert layer_of("nemo_rl_workers.reading.guarded_file") == 1
    assert layer_of("nemo_rl_workers.tree.source.model") == layer_of("nemo_rl_workers.tree")
    assert layer_of("nemo_rl_workers.commands.cli") == len(LAYERS) - 1
    assert layer_of("nemo_rl_workers.treeish") is None
    assert layer_of("nemo_rl.models") is None


def test_upward_imports_are_found() -> None:
    graph = {"nemo_rl_workers.model.resolver": {"nemo_rl_workers.commands.cli"},
             "nemo_rl_workers.commands.cli": {"nemo_rl_workers.model.resolver"},
             "nemo_rl_workers.guard.hooks": {"nemo_rl_workers.commands.run"}}
    assert upward_imports(graph) == [
        "nemo_rl_workers.guard.hooks -> nemo_rl_workers.commands.run",
        "nemo_rl_workers.model.resolver -> nemo_rl_workers.commands.cli"]


def test_private_uses_are_found(tmp_path: object) -> None:
    """`from m import _x`, `m._x` after `import m as m` or `from package import m`, and a
    private module; a dunder and a module's own private names are not."""
    from pathlib import Path

    from tests.structure.graph import read_graph

    root = Path(str(tmp_path))
    sources = {
        "pkg/__init__.py": "__version__ = '1'\n",
        "pkg/low.py": "def _hidden(): pass\ndef shown(): pass\n_ALSO = 1\n",
        "pkg/_inner.py": "",
        "pkg/high.py": ("from pkg.low import _hidden, shown\nfrom pkg import low\n"
                        "from pkg import __version__, _inner\nimport pkg.low as alias\n"
                        "def f():\n    return low._ALSO, alias._hidden, low.shown, _own\n"
                        "_own = 1\n"),
    }
    files = {}
    for relative, text in sources.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        name = relative[: -len(".py")].replace("/", ".").removesuffix(".__init__")
        files[name] = path
    found = sorted(str(use) for use in read_graph(files).private_uses)
    assert found == ["pkg.high:1 uses pkg.low._hidden", "pkg.high:3 uses pkg._inner",
                     "pkg.high:6 uses pkg.low._ALSO", "pkg.high:6 uses pkg.low._hidden"]
    assert isinstance(read_graph(files).private_uses[0], PrivateUse)


def test_no_arrow_back_up(import_graph: ImportGraph) -> None:
    """No module imports a higher layer than its own, beyond today's listed exceptions."""
    upward = upward_imports(arrows(import_graph))
    new = [line for line in upward if line not in UPWARD_TODAY]
    assert new == [], "imports from a lower layer into a higher one:\n" + "\n".join(new)


def folder_of(module: str) -> str:
    """`nemo_rl_workers.tree.source.model` -> `nemo_rl_workers.tree` (a stage's folder); a
    module LAYERS places on its own (`findings.registry`, on the floor) is its own stage."""
    own = [prefix for prefixes in LAYERS for prefix in prefixes
           if prefix.count(".") > 1 and (module == prefix or module.startswith(f"{prefix}."))]
    return max(own, key=len) if own else ".".join(module.split(".")[:2])


def test_a_module_placed_on_its_own_is_its_own_stage() -> None:
    assert folder_of("nemo_rl_workers.findings.registry") == "nemo_rl_workers.findings.registry"
    assert folder_of("nemo_rl_workers.findings.report") == "nemo_rl_workers.findings"
    assert folder_of("nemo_rl_workers.tree.source.model") == "nemo_rl_workers.tree"


def test_no_circle_between_stages(import_graph: ImportGraph) -> None:
    """Between the tool's folders too (two stages that import each other are one), beyond
    today's listed arrows back up; within a folder `test_import_cycles` holds."""
    folders: dict[str, set[str]] = {}
    for module, targets in arrows(import_graph).items():
        if module.split(".")[0] != "nemo_rl_workers" or module == FACADE:
            continue
        folders.setdefault(folder_of(module), set()).update(
            folder_of(t) for t in targets if t.split(".")[0] == "nemo_rl_workers"
            and t != FACADE and folder_of(t) != folder_of(module)
            and f"{module} -> {t}" not in UPWARD_TODAY)
    cycle = find_cycle(folders)
    assert cycle is None, "stages that import each other: " + " -> ".join(cycle or [])


def test_no_private_name_crosses_a_module(import_graph: ImportGraph) -> None:
    """A private name is its module's own: another module that needs it needs a public API."""
    new = [line for line in private_uses(import_graph) if line not in PRIVATE_TODAY]
    assert new == [], "private names used across modules:\n" + "\n".join(new)


def pinned_privates(graph: ImportGraph) -> list[str]:
    """Every private name of the tool or `contracts` a test uses."""
    return sorted({f"{use.module} uses {use.target}.{use.name}" for use in graph.private_uses
                   if use.module.split(".")[0] == "tests" and use.target.split(".")[0] in HELD})


def test_no_test_pins_a_private_name_of_the_tool(import_graph: ImportGraph) -> None:
    """A test of a private name breaks when the code moves, though nothing users see did."""
    new = [line for line in pinned_privates(import_graph) if line not in TESTS_PRIVATE_TODAY]
    assert new == [], "tests using private names of the tool:\n" + "\n".join(new)


@pytest.mark.parametrize(("listed", "find"), [
    (UPWARD_TODAY, lambda graph: upward_imports(arrows(graph))),
    (PRIVATE_TODAY, private_uses),
    (TESTS_PRIVATE_TODAY, pinned_privates),
], ids=["upward", "private", "tests-private"])
def test_every_listed_exception_is_still_one(
        import_graph: ImportGraph, listed: dict[str, str],
        find: Callable[[ImportGraph], list[str]]) -> None:
    """An entry whose violation is gone is stale: remove it, so it cannot hide the next."""
    stale = sorted(set(listed) - set(find(import_graph)))
    assert stale == [], "no longer violations; remove from the list:\n" + "\n".join(stale)
    assert all(reason.startswith("item ") for reason in listed.values())


def test_the_tree_stage_names_nothing_above_it(import_graph: ImportGraph) -> None:
    """Not even for an annotation (`if TYPE_CHECKING:` counts, issue 33): the model of a
    tree is built without knowing the checks, findings or commands that read it."""
    graph = import_graph.graph(type_checking=True)
    upward = [line for line in upward_imports(graph) if line.startswith("nemo_rl_workers.tree")]
    assert upward == [], "\n".join(upward)
    assert any(m.startswith("nemo_rl_workers.tree.") for m in graph)


@pytest.mark.parametrize(("package", "forbidden"), [
    ("contracts", ("nemo_rl_workers", "nemo_rl", "tests")),
    ("nemo_rl_workers", ("nemo_rl", "tests", "bench")),
    ("nemo_rl", ("tests", "bench")),
])
def test_distributions_import_only_what_they_ship_with(
        import_graph: ImportGraph, package: str, forbidden: tuple[str, ...]) -> None:
    crossing = sorted(
        f"{module} imports {target}"
        for module, targets in import_graph.graph().items() if module.split(".")[0] == package
        for target in targets if target.split(".")[0] in forbidden
    )
    assert crossing == [], "\n".join(crossing)
