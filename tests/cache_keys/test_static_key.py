"""Every input of a cached static verdict is in its key: the folders the checker is told
to search (those of every class judged in the same run) and the whole of this program's
code. Real checker runs, through `static_check.judge` with the cache, as `check --static`
and `verify --static` call it (tests/static_cache covers the other inputs)."""

from __future__ import annotations

import importlib
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from nemo_rl_workers.cache import digest as digest_module
from nemo_rl_workers.cache.store import Store
from nemo_rl_workers.checks.static.static_check import StaticReport, Subject, judge
from nemo_rl_workers.checks.static.static_kept import KeptVerdicts

PROTOCOL = """from typing import Protocol


class Trainer(Protocol):
    def train(self, x: int) -> int: ...
"""


class Roots:
    """Two import roots on sys.path: `first` holds C, whose base is in `second`'s module
    `helper`; `second` also holds D. The checker finds `helper` only where `second` is
    one of the folders it is told to search, which it is where D is judged with C."""

    def __init__(self, tmp_path: Path) -> None:
        tag = uuid.uuid4().hex[:8]
        self.first, self.second = tmp_path / "first", tmp_path / "second"
        self.names = (f"pkg_{tag}", f"helper_{tag}", f"other_{tag}", f"protos_{tag}")
        pkg, helper, other, protos = self.names
        files = {
            self.first / protos / "__init__.py": PROTOCOL,
            self.first / pkg / "__init__.py": "",
            self.first / pkg / "c.py": f"from {helper} import Base\n\n\nclass C(Base):\n"
                                       "    pass\n",
            self.second / f"{helper}.py": "class Base:\n    def other(self) -> int:\n"
                                          "        return 0\n",
            self.second / other / "__init__.py": "",
            self.second / other / "d.py": "class D:\n    def train(self, x: int) -> int:\n"
                                          "        return x\n",
        }
        for path, text in files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        self.c = Subject(f"{pkg}.c.C", "Trainer")
        self.d = Subject(f"{other}.d.D", "Trainer")

    def protocols(self) -> dict[str, type]:
        return {"Trainer": importlib.import_module(self.names[3]).Trainer}


@pytest.fixture
def roots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Roots]:
    made = Roots(tmp_path)
    monkeypatch.syspath_prepend(str(made.second))
    monkeypatch.syspath_prepend(str(made.first))
    yield made
    for name in [m for m in sys.modules if m.startswith(made.names)]:
        del sys.modules[name]


def _judge(roots: Roots, subjects: list[Subject], cache: KeptVerdicts | None) -> StaticReport:
    return judge(subjects, checker="pyrefly", protocols=roots.protocols(), cache=cache)[0]


def test_the_folders_the_checker_searches_are_in_the_key(roots: Roots, tmp_path: Path) -> None:
    """C judged with D (the checker searches D's folder, which holds C's base) is another
    question than C alone (where C's base is unknown, so the verdict is undecided)."""
    cache = KeptVerdicts(Store.open(tmp_path / "cache"))
    with_d = _judge(roots, [roots.c, roots.d], cache)
    assert [f.rule for f in with_d.findings] == ["static"]  # Base has no train
    alone = _judge(roots, [roots.c], cache)
    assert alone == _judge(roots, [roots.c], None)
    assert [f.rule for f in alone.findings] == ["undecided"]
    assert _judge(roots, [roots.c, roots.d], cache) == with_d


def test_every_module_of_this_program_is_in_the_key(
        roots: Roots, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Not a list of the static modules (which fell behind: the source reader's size cap,
    the guarded reader, the distributions' versions are read by others): every module."""
    hashed: set[Path] = set()
    real = digest_module.file_digest

    def counting(path: Path, limit: int) -> str:
        hashed.add(Path(path))
        return real(path, limit)

    monkeypatch.setattr(digest_module, "file_digest", counting)
    _judge(roots, [roots.c], KeptVerdicts(Store.open(tmp_path / "cache")))
    assert set(digest_module.own_files()) <= hashed
