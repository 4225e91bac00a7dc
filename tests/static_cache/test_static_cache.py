"""The cache of static verdicts: answered from the cache only while nothing the verdict
read has changed (a file deep in the class's MRO, a stub, the Protocol's module, a module
shadowing another, the checker's options), and never trusting a damaged entry.

Real checker runs throughout; `runs` counts them by wrapping the real `judge_located`
(one checker run each).
"""

from __future__ import annotations

import importlib
import os
import sys
import textwrap
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from nemo_rl_workers.cache.store import FORMAT, MAX_ENTRY_BYTES, Store, checksum
from nemo_rl_workers.checks.static import static_check
from nemo_rl_workers.checks.static.static_check import StaticReport, Subject, judge
from nemo_rl_workers.checks.static.static_kept import KeptVerdicts

PROTOCOL = """\
from __future__ import annotations

from typing import Protocol


class Trainer(Protocol):
    def train(self, x: int) -> int: ...
"""


@dataclass
class Tree:
    """A small source tree on sys.path: pkg.a.A <- pkg.b.B <- pkg.c.C, and a Protocol."""

    root: Path
    package: str
    protocol: type
    protocol_module: str

    def write(self, relative: str, text: str) -> None:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")

    def subject(self, name: str = "C") -> Subject:
        return Subject(f"{self.package}.c.{name}", "Trainer")

    def reload_protocol(self) -> None:
        module = importlib.reload(sys.modules[self.protocol_module])
        self.protocol = module.Trainer


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Tree]:
    tag = uuid.uuid4().hex[:8]
    package, protocols = f"pkg_{tag}", f"protos_{tag}"
    root = tmp_path / "src"
    made = Tree(root, package, type, protocols)
    made.write(f"{protocols}.py", PROTOCOL)
    made.write(f"{package}/__init__.py", "")
    made.write(f"{package}/a.py", """\
        class A:
            def train(self, x: int) -> int:
                return x
        """)
    made.write(f"{package}/b.py", f"from {package}.a import A\n\n\nclass B(A):\n    pass\n")
    made.write(f"{package}/c.py", f"from {package}.b import B\n\n\nclass C(B):\n    pass\n")
    monkeypatch.syspath_prepend(str(root))
    made.protocol = importlib.import_module(protocols).Trainer
    yield made
    for name in [m for m in sys.modules if m.startswith((package, protocols))]:
        del sys.modules[name]


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per real checker run."""
    real = static_check.judge_located
    counted: list[int] = []

    def counting(*args: Any, **kwargs: Any) -> Any:
        counted.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(static_check, "judge_located", counting)
    return counted


def verdict(tree: Tree, cache: KeptVerdicts | None, checker: str = "pyrefly",
            name: str = "C") -> StaticReport:
    (report,) = judge([tree.subject(name)], checker=checker,
                      protocols={"Trainer": tree.protocol}, cache=cache)
    assert report.unusable is None, report.unusable
    return report


@pytest.fixture
def cache(tmp_path: Path) -> KeptVerdicts:
    return KeptVerdicts(Store.open(tmp_path / "cache"))


def entries(cache: KeptVerdicts) -> list[Path]:
    return sorted((cache.store.folder / f"v{FORMAT}").glob("*.json"))


def test_second_run_comes_from_the_cache(tree: Tree, cache: KeptVerdicts, runs: list[int]) -> None:
    first = verdict(tree, cache)
    second = verdict(tree, cache)
    assert first.ok and second == first
    assert len(runs) == 1
    assert len(entries(cache)) == 1
    assert (cache.store.folder / "CACHEDIR.TAG").is_file()


def test_a_change_deep_in_the_mro_changes_the_verdict(
    tree: Tree, cache: KeptVerdicts, runs: list[int]
) -> None:
    assert verdict(tree, cache).ok
    tree.write(f"{tree.package}/a.py", """\
        class A:
            def train(self, x: str) -> int:
                return len(x)
        """)
    broken = verdict(tree, cache)
    assert not broken.ok
    assert [f.member for f in broken.findings] == ["train"]
    assert len(runs) == 2
    assert not verdict(tree, cache).ok and len(runs) == 2  # the new verdict is cached
    tree.write(f"{tree.package}/a.py", """\
        class A:
            def train(self, x: int) -> int:
                return x
        """)
    assert verdict(tree, cache).ok and len(runs) == 3


def test_a_change_in_a_stub_changes_the_verdict(
    tree: Tree, cache: KeptVerdicts, runs: list[int]
) -> None:
    tree.write("extlib_ret.py", "Ret = int\n")
    tree.write("extlib_ret.pyi", "Ret = int\n")
    tree.write(f"{tree.package}/c.py", f"""\
        from extlib_ret import Ret

        from {tree.package}.b import B


        class C(B):
            def train(self, x: int) -> Ret:
                return x
        """)
    assert verdict(tree, cache).ok
    tree.write("extlib_ret.pyi", "Ret = str\n")  # the checker reads the stub, not the .py
    assert not verdict(tree, cache).ok
    assert len(runs) == 2


def test_a_package_that_comes_to_shadow_a_module_changes_the_verdict(
    tree: Tree, cache: KeptVerdicts, runs: list[int]
) -> None:
    """`pkg/helper/__init__.py` takes the place of `pkg/helper.py`, as for Python."""
    tree.write(f"{tree.package}/helper.py", "Ret = int\n")
    tree.write(f"{tree.package}/c.py", f"""\
        from {tree.package}.b import B
        from {tree.package}.helper import Ret


        class C(B):
            def train(self, x: int) -> Ret:
                return x
        """)
    assert verdict(tree, cache).ok
    tree.write(f"{tree.package}/helper/__init__.py", "Ret = str\n")
    assert not verdict(tree, cache).ok
    assert len(runs) == 2


def test_a_change_to_the_protocol_changes_the_verdict(
    tree: Tree, cache: KeptVerdicts, runs: list[int]
) -> None:
    assert verdict(tree, cache).ok
    tree.write(f"{tree.protocol_module}.py", PROTOCOL.replace("x: int", "x: bytes"))
    tree.reload_protocol()
    assert not verdict(tree, cache).ok
    assert len(runs) == 2


def test_the_checkers_options_and_the_checker_are_in_the_key(
    tree: Tree, cache: KeptVerdicts, runs: list[int]
) -> None:
    tree.write(f"{tree.package}/a.py", """\
        class A:
            def train(self, x: str) -> int:
                return len(x)
        """)
    assert not verdict(tree, cache, "mypy").ok
    assert not verdict(tree, cache, "pyrefly").ok  # another checker: its own entry
    assert len(runs) == 2
    # mypy told not to report assignment errors (every probe line is one) passes it.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(static_check, "MYPY_CONFIG", static_check.MYPY_CONFIG.replace(
            "[mypy]\n", "[mypy]\ndisable_error_code = assignment\n"))
        assert verdict(tree, cache, "mypy").ok
        assert len(runs) == 3
    assert not verdict(tree, cache, "mypy").ok and len(runs) == 3  # the first entry again


# ------------------------------------------------------------------------------ damage


def _truncate(entry: Path) -> None:
    data = entry.read_bytes()
    entry.write_bytes(data[: len(data) // 2])


def _garbage(entry: Path) -> None:
    entry.write_bytes(b"\xff\xfe not json \x00")


def _empty(entry: Path) -> None:
    entry.write_bytes(b"")


def _forged(entry: Path) -> None:
    """A well-formed entry whose verdict was changed without its checksum."""
    import json

    data = json.loads(entry.read_text(encoding="utf-8"))
    data["payload"]["findings"] = []
    entry.write_text(json.dumps(data), encoding="utf-8")


def _unknown_rule(entry: Path) -> None:
    """A verdict of a rule the tool does not have, its checksum made to fit: not of its
    type, so a miss."""
    import json

    data = json.loads(entry.read_text(encoding="utf-8"))
    data["payload"]["findings"][0]["rule"] = "no-such-rule"
    data["sha256"] = checksum(data["payload"])
    entry.write_text(json.dumps(data), encoding="utf-8")


def _other_key(entry: Path) -> None:
    import json

    data = json.loads(entry.read_text(encoding="utf-8"))
    data["key"] = "0" * 64
    entry.write_text(json.dumps(data), encoding="utf-8")


def _huge(entry: Path) -> None:
    with entry.open("ab") as f:
        f.truncate(MAX_ENTRY_BYTES + 10)


def _fifo(entry: Path) -> None:
    entry.unlink()
    os.mkfifo(entry)


def _symlink(entry: Path) -> None:
    entry.unlink()
    entry.symlink_to("/dev/zero")


def _directory(entry: Path) -> None:
    entry.unlink()
    entry.mkdir()


DAMAGE = [_truncate, _garbage, _empty, _forged, _unknown_rule, _other_key, _huge, _fifo,
          _symlink, _directory]


@pytest.mark.parametrize("damage", DAMAGE, ids=[d.__name__.strip("_") for d in DAMAGE])
def test_a_damaged_entry_is_ignored_and_rewritten(
    damage: Any, tree: Tree, cache: KeptVerdicts, runs: list[int]
) -> None:
    tree.write(f"{tree.package}/a.py", """\
        class A:
            def train(self, x: str) -> int:
                return len(x)
        """)
    assert not verdict(tree, cache).ok
    (entry,) = entries(cache)
    damage(entry)
    again = verdict(tree, cache)
    assert not again.ok and [f.member for f in again.findings] == ["train"]
    assert len(runs) == 2  # judged afresh, never from the damaged entry
    # One line for the command to say (commands.cache.say_static_notes), naming the entry.
    (note,) = cache.notes
    assert note.startswith(f"cache entry {entry} ") and note.endswith(
        f"; ignored, {tree.package}.c.C is judged again"), note
    cache.notes.clear()
    if damage is not _directory:  # a directory cannot be replaced by a file: not stored
        assert entry.is_file() and not entry.is_symlink()
        assert not verdict(tree, cache).ok and len(runs) == 2  # rewritten whole


def test_a_damaged_entry_of_one_subject_leaves_the_others_cached(
    tree: Tree, cache: KeptVerdicts, runs: list[int]
) -> None:
    tree.write(f"{tree.package}/c.py", f"""\
        from {tree.package}.b import B


        class C(B):
            pass


        class D(B):
            def train(self, x: bytes) -> int:
                return 0
        """)
    subjects = [tree.subject("C"), tree.subject("D")]
    protocols = {"Trainer": tree.protocol}
    first = judge(subjects, protocols=protocols, cache=cache)
    assert [r.ok for r in first] == [True, False] and len(runs) == 1
    for entry in entries(cache):
        _truncate(entry)
        break
    assert judge(subjects, protocols=protocols, cache=cache) == first
    assert len(runs) == 2
