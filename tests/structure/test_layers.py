"""The tool's layers, in the order its data flows (issue 26): a module imports only from
its own layer or one below it. Read from source, late imports inside functions included
(`test_import_cycles.import_graph`); `if TYPE_CHECKING:` blocks, which never run, are not.

Also the boundaries between the distributions: `contracts` imports neither the tool nor
the runtime, and the tool never imports the runtime `nemo_rl` (it is installed beside a
user's NeMo-RL, which owns that name).
"""

from __future__ import annotations

import pytest

from tests.structure.test_import_cycles import import_graph

# Lowest first. The package's own `__init__` (the lazy public API and `__version__`) and
# `errors` (the exception catalogue every layer raises) are the floor.
LAYERS = (
    ("nemo_rl_workers", "nemo_rl_workers.errors", "nemo_rl_workers.lazy"),
    # Guarded reading, and the one cache (its store reads and writes through it).
    ("nemo_rl_workers.reading", "nemo_rl_workers.cache"),
    ("nemo_rl_workers.model",),
    # The tree stage: the model of a NeMo-RL tree, which every check reads.
    ("nemo_rl_workers.tree",),
    ("nemo_rl_workers.checks",),
    ("nemo_rl_workers.findings",),
    # The runtime guard runs beside the commands: it reads the tree and judges with the
    # checks, in the user's process.
    ("nemo_rl_workers.commands", "nemo_rl_workers.guard", "nemo_rl_workers.__main__"),
)


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
    found = []
    for module, targets in sorted(graph.items()):
        here = layer_of(module)
        if here is None:
            continue
        for target in sorted(targets):
            there = layer_of(target)
            if there is not None and there > here:
                found.append(f"{module} (layer {here}) imports {target} (layer {there})")
    return found


def test_every_tool_module_has_a_layer() -> None:
    tool = [m for m in import_graph() if m.split(".")[0] == "nemo_rl_workers"]
    assert len(tool) > 50
    assert [m for m in tool if layer_of(m) is None] == []


def test_layer_of_takes_the_longest_prefix() -> None:
    assert layer_of("nemo_rl_workers") == 0
    assert layer_of("nemo_rl_workers.errors") == 0
    assert layer_of("nemo_rl_workers.reading.guarded_file") == 1
    assert layer_of("nemo_rl_workers.tree.source.model") == 3
    assert layer_of("nemo_rl_workers.commands.cli") == 6
    assert layer_of("nemo_rl.models") is None


def test_upward_imports_are_found() -> None:
    graph = {"nemo_rl_workers.model.resolver": {"nemo_rl_workers.commands.cli"},
             "nemo_rl_workers.commands.cli": {"nemo_rl_workers.model.resolver"}}
    assert upward_imports(graph) == [
        "nemo_rl_workers.model.resolver (layer 2) imports nemo_rl_workers.commands.cli "
        "(layer 6)"]


def test_no_import_runs_from_a_lower_layer_to_a_higher_one() -> None:
    upward = upward_imports(import_graph())
    assert upward == [], "\n".join(upward)


def test_the_tree_stage_names_nothing_above_it() -> None:
    """Not even for an annotation (`if TYPE_CHECKING:` counts here, issue 33): the model of
    a tree is built without knowing the checks, findings or commands that read it."""
    graph = import_graph(type_checking=True)
    tree = layer_of("nemo_rl_workers.tree")
    assert tree is not None
    upward = [line for line in upward_imports(graph)
              if line.startswith("nemo_rl_workers.tree")]
    assert upward == [], "\n".join(upward)
    assert any(m.startswith("nemo_rl_workers.tree.") for m in graph)


@pytest.mark.parametrize(("package", "forbidden"), [
    ("contracts", ("nemo_rl_workers", "nemo_rl", "tests")),
    ("nemo_rl_workers", ("nemo_rl", "tests", "bench")),
    ("nemo_rl", ("tests", "bench")),
])
def test_distributions_import_only_what_they_ship_with(
    package: str, forbidden: tuple[str, ...]
) -> None:
    crossing = sorted(
        f"{module} imports {target}"
        for module, targets in import_graph().items() if module.split(".")[0] == package
        for target in targets if target.split(".")[0] in forbidden
    )
    assert crossing == [], "\n".join(crossing)
