"""A package API loaded on first use (PEP 562): importing the package costs nothing, and
each name imports its module when it is first asked for."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_api(package: str, namespace: dict[str, Any],
             api: Mapping[str, str]) -> Callable[[str], Any]:
    """The package's `__getattr__` for `api` (name -> the module defining it); a name,
    once loaded, is kept in `namespace` so later lookups skip it."""

    def __getattr__(name: str) -> Any:
        module = api.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return __getattr__
