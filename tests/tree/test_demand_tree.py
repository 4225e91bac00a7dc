"""The source model read on demand: a class and its bases are modelled from the few files
name resolution asks for, across roots in order; a module that cannot be read is absent
(its class an unknown base), never a crash. On trees this test writes."""

from __future__ import annotations

from pathlib import Path

from nemo_rl_workers.tree.source import Resolver, demand_tree, resolve_fqn


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_a_class_and_its_bases_are_read_and_nothing_else(tmp_path: Path) -> None:
    user, tree = tmp_path / "user", tmp_path / "tree"
    _write(user / "mine.py", "from base_pkg.workers import Base\n\n\nclass Mine(Base):\n"
                             "    def run(self, x):\n        return x\n")
    _write(tree / "base_pkg" / "__init__.py", "")
    _write(tree / "base_pkg" / "workers.py", "from .core import Core\n\n\nclass Base(Core):\n"
                                             "    def step(self): ...\n")
    _write(tree / "base_pkg" / "core.py", "class Core:\n    def start(self): ...\n")
    for n in range(20):  # the rest of the tree, never asked for
        _write(tree / "base_pkg" / f"other_{n}.py", "class Other: ...\n")
    model = demand_tree((user, tree))
    info = resolve_fqn(model, "mine.Mine")
    assert info is not None and info.file == str(user / "mine.py")
    mro = Resolver(model).mro(info)
    assert [c.fqn for c in mro.classes] == ["mine.Mine", "base_pkg.workers.Base",
                                            "base_pkg.core.Core"]
    assert mro.unknown == ()
    assert model.files_read == 3  # mine, workers, core: no package __init__, no other
    assert Resolver(model).find_method(info, "start") is not None


def test_an_unreadable_base_module_is_an_unknown_base(tmp_path: Path) -> None:
    _write(tmp_path / "mine.py", "from broken import Base\n\n\nclass Mine(Base):\n    pass\n")
    (tmp_path / "broken.py").write_bytes(b"\xff\xfe not utf-8 \x00")
    model = demand_tree((tmp_path,))
    info = resolve_fqn(model, "mine.Mine")
    assert info is not None
    assert Resolver(model).mro(info).unknown == ("broken.Base",)
    assert [p.file for p in model.problems] == [str(tmp_path / "broken.py")]
    assert resolve_fqn(model, "nowhere.Thing") is None  # no such module: nothing raised
