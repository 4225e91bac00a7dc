"""The packages import without cycles (issue 22): read as source (`graph.read_graph`), every
`import` counts, also those inside functions (a late import that dodges a cycle is still a
cycle) and (issue 33) those of `if TYPE_CHECKING:` blocks, which never run but tie two
modules together all the same."""

from __future__ import annotations

import pytest

from tests.structure.graph import PACKAGES, ImportGraph, find_cycle


def _without_package_inits(graph: ImportGraph, type_checking: bool) -> dict[str, set[str]]:
    """Edges into a package's own `__init__` from inside it are how a package exports its
    modules; only module-to-module imports can form the cycles meant here."""
    inits = graph.inits()
    return {name: {t for t in targets if not (t in inits and name.startswith(f"{t}."))}
            for name, targets in graph.graph(type_checking).items()}


def test_the_graph_is_read_from_every_module(import_graph: ImportGraph) -> None:
    graph = import_graph.graph()
    assert {"contracts.hints", "contracts.verify", "nemo_rl_workers.model.registry",
            "nemo_rl_workers.model.table"} <= set(graph)
    assert "contracts.hints" in graph["contracts.verify"]
    assert "nemo_rl_workers.model.table" in graph["nemo_rl_workers.model.registry"]


def test_find_cycle_finds_a_late_import_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


@pytest.mark.parametrize("package", PACKAGES)
@pytest.mark.parametrize("type_checking", [False, True], ids=["run", "type-checking"])
def test_no_import_cycle(import_graph: ImportGraph, package: str, type_checking: bool) -> None:
    """Neither the imports that run nor, with them, those a type checker follows
    (`if TYPE_CHECKING:`): a cycle hidden behind one is still two modules that cannot be
    understood apart."""
    graph = _without_package_inits(import_graph, type_checking)
    inside = {m: {t for t in ts if t.split(".")[0] == package}
              for m, ts in graph.items() if m.split(".")[0] == package}
    cycle = find_cycle(inside)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])
