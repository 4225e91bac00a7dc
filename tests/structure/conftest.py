"""The repository's import graph, parsed once for every structure test of the session."""

from __future__ import annotations

import pytest

from tests.structure.graph import ImportGraph, read_graph


@pytest.fixture(scope="session")
def import_graph() -> ImportGraph:
    return read_graph()
