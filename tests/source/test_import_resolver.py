"""The one import resolver (`tree.source.imports`), and the readers that use it: relative
imports at each level (in a module and in a package's `__init__`), above the top-level
package (nothing bound, as Python refuses it), a package's re-export, a function-level
import; the guard's judgement on the same model (a name bound under `try`). On trees this
test writes; nothing is imported."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from nemo_rl_workers.guard import judgement
from nemo_rl_workers.tree.knowledge import is_actor_class, makes_actor
from nemo_rl_workers.tree.source import (
    ImportRoots,
    Outline,
    absolute_module,
    demand_tree,
    find_class,
    function_imports,
    import_bindings,
    module_outline,
    read_tree,
    resolve_fqn,
)


@pytest.mark.parametrize(("importer", "is_package", "name", "level", "absolute"), [
    ("a.b.c", False, "m", 0, "m"),
    ("a.b.c", False, "m", 1, "a.b.m"),
    ("a.b.c", False, None, 1, "a.b"),
    ("a.b.c", False, "m", 2, "a.m"),
    ("a.b.c", False, None, 2, "a"),
    ("a.b.c", False, "m", 3, None),  # above the top-level package: Python refuses it
    ("a.b", True, "m", 1, "a.b.m"),  # an `__init__` starts at its own package
    ("a.b", True, None, 2, "a"),
    ("a.b", True, "m", 3, None),
    ("a.c", False, "m", 2, None),  # was "m" in the model and the static walk
    ("top", False, "m", 1, None),  # a top-level module has no package
    ("top", True, "m", 1, "top.m"),
])
def test_a_relative_import_resolves_as_python_resolves_it(
    importer: str, is_package: bool, name: str | None, level: int, absolute: str | None
) -> None:
    assert absolute_module(importer, is_package, name, level) == absolute


def _statement(text: str) -> ast.Import | ast.ImportFrom:
    (stmt,) = ast.parse(text).body
    assert isinstance(stmt, (ast.Import, ast.ImportFrom))
    return stmt


@pytest.mark.parametrize(("text", "bound"), [
    ("import a.b", {"a": "a"}),
    ("import a.b as c", {"c": "a.b"}),
    ("from m import x as y, z", {"y": "m.x", "z": "m.z"}),
    ("from m import *", {}),
    ("from . import x", {"x": "pkg.sub.x"}),  # in pkg/sub/__init__.py
    ("from .. import x", {"x": "pkg.x"}),
    ("from ... import x", {}),
])
def test_what_an_import_binds_in_a_package_init(text: str, bound: dict[str, str]) -> None:
    # The tree rules' walk took `from . import x` in an `__init__` as its parent's.
    assert import_bindings(_statement(text), "pkg.sub", True) == bound


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_a_package_re_export_resolves_to_its_class_in_every_model(tmp_path: Path) -> None:
    _write(tmp_path, {
        "pkg/__init__.py": "from .workers import Worker\nfrom .sub import Helper as Aid\n",
        "pkg/workers.py": "from .sub.impl import Base\n\n\nclass Worker(Base): ...\n",
        "pkg/sub/__init__.py": "from .impl import Helper\nfrom .. import workers\n",
        "pkg/sub/impl.py": "class Base: ...\n\n\nclass Helper: ...\n",
    })
    tree = read_tree(tmp_path)
    assert tree.modules["pkg.sub"].imports == {"Helper": "pkg.sub.impl.Helper",
                                               "workers": "pkg.workers"}
    for fqn, defined in [("pkg.Worker", "pkg.workers.Worker"),
                         ("pkg.Aid", "pkg.sub.impl.Helper")]:
        info = resolve_fqn(tree, fqn)
        assert info is not None and info.fqn == defined
        on_demand = find_class(demand_tree((tmp_path,)), fqn)
        assert not isinstance(on_demand, str) and on_demand.fqn == defined


def test_a_function_level_import_binds_for_the_function(tmp_path: Path) -> None:
    _write(tmp_path, {"pkg/__init__.py": "", "pkg/driver.py": (
        "def start():\n"
        "    from .workers import Worker as W\n"
        "    import ray.util\n"
        "    if True:\n"
        "        from ..elsewhere import Nothing\n"
        "    return W\n")})
    tree = read_tree(tmp_path)
    start = tree.modules["pkg.driver"].functions["start"]
    assert function_imports(start.node, "pkg.driver", False) == {
        "W": "pkg.workers.Worker", "ray": "ray"}
    assert "W" not in tree.modules["pkg.driver"].imports  # not a module-level name


def test_the_outline_holds_function_level_and_relative_imports(tmp_path: Path) -> None:
    _write(tmp_path, {"pkg/__init__.py": "", "pkg/mod.py": (
        "import torch.nn\n"
        "from . import sibling\n"
        "\n\nclass Worker:\n"
        "    def run(self):\n"
        "        from vllm import LLM\n")})
    found = module_outline(tmp_path / "pkg" / "mod.py", "pkg.mod")
    assert isinstance(found, Outline)
    assert found.imports == ("torch.nn", "pkg", "pkg.sibling", "vllm", "vllm.LLM")
    assert found.absolute_tops == {"torch", "vllm"}
    assert {"Worker", "sibling", "torch", "LLM"} <= found.binds


def test_the_guard_finds_a_class_re_exported_under_try(tmp_path: Path) -> None:
    """The guard's own index read top-level `from ... import` only: a class its package
    re-exports under `try: ... except ImportError:` was refused as not defined."""
    _write(tmp_path, {
        "ext/__init__.py": ("try:\n    from .impl import Worker\n"
                            "except ImportError:\n    Worker = None\n"),
        "ext/impl.py": "import ray\n\n\n@ray.remote\nclass Worker: ...\n",
    })
    model = judgement.source_model(ImportRoots((str(tmp_path),)))
    assert judgement.judge_source("ext.Worker", model, None) == judgement.PASS


def test_the_guard_refuses_a_subclass_of_an_actor_class_imported_as_a_module(
        tmp_path: Path) -> None:
    """`import m as b` then `class Mine(b.Base)`: the guard's own index saw `from` imports
    only, and passed the subclass that Ray refuses to define."""
    _write(tmp_path, {
        "ext/__init__.py": "",
        "ext/base.py": "import ray\n\n\n@ray.remote\nclass Base: ...\n",
        "ext/mine.py": "import ray\nimport ext.base as base\n\n\n"
                       "@ray.remote\nclass Mine(base.Base): ...\n",
    })
    model = judgement.source_model(ImportRoots((str(tmp_path),)))
    verdict = judgement.judge_source("ext.mine.Mine", model, None)
    assert verdict.rule == "actor-subclass"
    assert verdict.what.startswith(f"subclasses the actor class base.Base ({tmp_path}/ext/base.py:")


@pytest.mark.parametrize(("written", "imports", "actor"), [
    ("remote", {"remote": "ray.remote"}, True),
    ("r.remote(num_gpus=1)", {"r": "ray"}, True),
    ("ray.remote", {}, True),
    ("remote", {"remote": "mylib.remote"}, False),  # another package's `remote`
    ("remote", None, True),  # not followed through an import: a maker's name counts
])
def test_one_test_of_an_actor_maker(written: str, imports: dict[str, str] | None,
                                    actor: bool) -> None:
    assert makes_actor(written, imports) is actor


def test_an_actor_class_is_one_decorated_by_a_maker() -> None:
    assert is_actor_class(("staticmethod", "ray.remote(num_gpus=1)"))
    assert not is_actor_class(("functools.cache",))
