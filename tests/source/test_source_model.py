"""The one-pass source model: modules, imports, classes, signatures, MROs and call sites."""

from __future__ import annotations

import textwrap
from pathlib import Path

from nemo_rl_workers.tree.source import Resolver, read_tree, resolve_fqn


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def test_bases_resolve_through_relative_guarded_and_reexported_imports(tmp_path: Path) -> None:
    write(tmp_path, {
        "pkg/__init__.py": "from .base import Base as Base\n",
        "pkg/base.py": "class Base:\n    def run(self, x, *, y=1): ...\n",
        "pkg/mixins.py": """
            from typing import TYPE_CHECKING
            if TYPE_CHECKING:
                from pkg.base import Base
            class Mixin:
                def extra(self): return 1
        """,
        "pkg/sub/worker.py": """
            try:
                from ..mixins import Mixin
            except ImportError:
                Mixin = object
            import pkg
            class Worker(Mixin, pkg.Base):
                def run(self, x, *args, **kwargs):
                    yield x
        """,
    })
    tree = read_tree(tmp_path)
    worker = resolve_fqn(tree, "pkg.sub.worker.Worker")
    assert worker is not None
    mro = Resolver(tree).mro(worker)
    assert [c.fqn for c in mro.classes] == [
        "pkg.sub.worker.Worker", "pkg.mixins.Mixin", "pkg.base.Base"]
    assert mro.unknown == () and mro.problem is None
    found = Resolver(tree).find_method(worker, "extra")
    assert found is not None and found[1].fqn == "pkg.mixins.Mixin"
    run = worker.methods["run"]
    assert run.is_generator and not run.is_async_generator
    assert [(p.name, p.kind) for p in run.bound_params()] == [
        ("x", "positional"), ("args", "var-positional"), ("kwargs", "var-keyword")]
    base_run = tree.classes["pkg.base.Base"].methods["run"]
    assert base_run.stub == "..."
    assert [(p.name, p.kind, p.has_default) for p in base_run.bound_params()] == [
        ("x", "positional", False), ("y", "keyword-only", True)]


def test_stub_bodies_and_async_generators(tmp_path: Path) -> None:
    write(tmp_path, {"m.py": """
        class I:
            def a(self):
                '''doc'''
            def b(self):
                raise NotImplementedError("no")
            def c(self):
                pass
            def d(self):
                return 1
            async def e(self):
                yield 1
            async def f(self):
                return 1
    """})
    methods = read_tree(tmp_path).classes["m.I"].methods
    assert {n: m.stub for n, m in methods.items()} == {
        "a": "docstring only", "b": "raise NotImplementedError", "c": "pass", "d": None,
        "e": None, "f": None}
    assert methods["e"].is_async_generator and not methods["f"].is_generator


def test_a_class_that_is_its_own_base_is_a_problem_not_a_hang(tmp_path: Path) -> None:
    write(tmp_path, {"m.py": "class A(A): ...\nclass B(C): ...\nclass C(B): ...\n"})
    tree = read_tree(tmp_path)
    resolver = Resolver(tree)
    assert "is its own base" in str(resolver.mro(tree.classes["m.A"]).problem)
    assert "is its own base" in str(resolver.mro(tree.classes["m.B"]).problem)


def test_c3_failure_is_a_problem(tmp_path: Path) -> None:
    write(tmp_path, {"m.py": "class X: ...\nclass Y(X): ...\nclass Z(X, Y): ...\n"})
    tree = read_tree(tmp_path)
    assert "C3" in str(Resolver(tree).mro(tree.classes["m.Z"]).problem)


def test_unknown_bases_are_listed(tmp_path: Path) -> None:
    write(tmp_path, {"m.py": "from far.away import Worker\nclass W(Worker): ...\n"})
    tree = read_tree(tmp_path)
    assert Resolver(tree).mro(tree.classes["m.W"]).unknown == ("far.away.Worker",)


def test_call_sites_carry_guards_targets_and_iteration(tmp_path: Path) -> None:
    write(tmp_path, {"m.py": """
        class D:
            def go(self, flag):
                if not flag:
                    return None
                name = "a" if flag else "b"
                ref = self.group.call(name, k=1)
                async def inner():
                    async for item in self.group.stream():
                        pass
                for x in ref:
                    pass
    """})
    tree = read_tree(tmp_path)
    calls = {c.callee: c for c in tree.calls}
    call = calls["self.group.call"]
    assert (call.cls, call.function, call.assigned_to, call.line) == ("D", "D.go", "ref", 7)
    assert [(g.holds, type(g.test).__name__) for g in call.guards] == [(False, "UnaryOp")]
    assert calls["self.group.stream"].iterated
    go = tree.classes["m.D"].methods["go"]
    assert "ref" in go.iterated and [a.line for a in go.assignments["name"]] == [6]


def test_unreadable_files_are_problems(tmp_path: Path) -> None:
    write(tmp_path, {"ok.py": "x = 1\n", "bad.py": "def (:\n"})
    (tmp_path / "latin.py").write_bytes(b"x = '\xe9'\n")
    (tmp_path / "loop").symlink_to(tmp_path)  # a directory symlink is not followed
    tree = read_tree(tmp_path)
    messages = sorted(str(p) for p in tree.problems)
    assert len(messages) == 2
    assert "bad.py:1: is not valid Python" in messages[0]
    assert "latin.py: is not UTF-8 text (byte 0xe9 at offset 5)" in messages[1]
    assert set(tree.modules) == {"ok"}
