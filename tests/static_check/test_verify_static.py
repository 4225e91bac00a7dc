"""`verify --static` judges a class from its source and never imports its package.

The package under test writes a marker file when imported, and its module imports a
heavy package that is not installed: the verdict must still name every broken member,
and the marker must not exist afterwards.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nemo_rl_workers.checks.static.static_check import Subject, judge
from nemo_rl_workers.commands import static as static_cli
from nemo_rl_workers.commands.cli import main

PACKAGE_INIT = '''\
from pathlib import Path

Path(__file__).with_name("IMPORTED").write_text("the package was imported")
'''
WORKERS = '''\
from __future__ import annotations

from heavy_framework_not_installed import Tensor  # not installed anywhere

from contracts import LogprobBatch, LogprobResult, TrainBatch, TrainResult


class _Base:
    def is_alive(self) -> bool:
        return True

    def get_logprobs(self, batch: LogprobBatch) -> LogprobResult:
        return {"logprobs": []}

    def load_checkpoint(self, path: str, weights: Tensor | None = None) -> None:
        return None


class GoodWorker(_Base):
    def train(self, batch: TrainBatch) -> TrainResult:
        return {"loss": 0.0, "grad_norm": 0.0, "num_tokens": 0, "step": 0}

    def save_checkpoint(self, path: str) -> None:
        return None

    def shutdown(self) -> bool:
        return True


class BrokenWorker(_Base):
    def train(self, batch: int) -> TrainResult:  # wrong parameter type
        return {"loss": 0.0, "grad_norm": 0.0, "num_tokens": 0, "step": 0}

    # save_checkpoint is missing

    async def shutdown(self) -> bool:  # async where the Protocol is sync
        return True
'''
BROKEN = "sidefx_pkg.workers.BrokenWorker"
GOOD = "sidefx_pkg.workers.GoodWorker"
BROKEN_MEMBERS = {"train", "save_checkpoint", "shutdown"}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    package = tmp_path / "sidefx_pkg"
    package.mkdir()
    (package / "__init__.py").write_text(PACKAGE_INIT)
    (package / "workers.py").write_text(WORKERS)
    (package / "syntax.py").write_text("class Worker(:\n")
    (package / "binary.py").write_bytes(b"\xff\xfe\x00garbage")
    return tmp_path


def _cli(tree: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run(
        [sys.executable, "-m", "nemo_rl_workers", *args],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )


@pytest.mark.parametrize("checker", ["pyrefly", "mypy"])
def test_every_broken_member_is_named_and_nothing_is_imported(tree: Path, checker: str) -> None:
    done = _cli(tree, "verify", BROKEN, "--protocol", "PolicyWorker", "--static",
                "--checker", checker)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    violations = [line for line in lines if not line.startswith("skipped: ")]
    prefix = f"{BROKEN} does not implement PolicyWorker."
    assert all(line.startswith(prefix) for line in violations), violations
    assert {line[len(prefix):].split(":")[0] for line in violations} == BROKEN_MEMBERS
    assert any("heavy_framework_not_installed" in line for line in lines if "skipped" in line)
    assert done.stderr == ""
    assert not (tree / "sidefx_pkg" / "IMPORTED").exists()


def test_a_correct_class_whose_module_cannot_import_passes(tree: Path) -> None:
    done = _cli(tree, "verify", GOOD, "--protocol", "PolicyWorker", "--static")
    assert (done.returncode, done.stdout.splitlines()[0]) == (0, f"{GOOD} implements PolicyWorker")
    assert not (tree / "sidefx_pkg" / "IMPORTED").exists()
    # The runtime path cannot even start: importing the module fails.
    runtime = _cli(tree, "verify", GOOD, "--protocol", "PolicyWorker")
    assert runtime.returncode == 2
    assert "heavy_framework_not_installed" in runtime.stderr
    assert (tree / "sidefx_pkg" / "IMPORTED").exists()  # the marker works


def test_in_process_the_package_stays_out_of_sys_modules(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(tree))
    good, broken = judge([Subject(GOOD, "PolicyWorker"), Subject(BROKEN, "PolicyWorker")])
    assert good.ok and not broken.ok
    assert {f.member for f in broken.findings} == BROKEN_MEMBERS
    assert not any(name.startswith("sidefx_pkg") for name in sys.modules)
    assert not (tree / "sidefx_pkg" / "IMPORTED").exists()


def test_json_has_the_runtime_shape(tree: Path) -> None:
    done = _cli(tree, "verify", BROKEN, "--protocol", "PolicyWorker", "--static", "--json")
    payload = json.loads(done.stdout)
    assert done.returncode == 1
    assert (payload["class"], payload["protocol"], payload["ok"]) == (BROKEN, "PolicyWorker", False)
    assert {v["member"] for v in payload["violations"]} == BROKEN_MEMBERS
    assert {v["rule"] for v in payload["violations"]} == {"static"}
    assert payload["checker"] == "pyrefly"


def test_a_required_base_is_checked_from_source(tree: Path) -> None:
    done = _cli(tree, "verify", GOOD, "--protocol", "PolicyWorker", "--static",
                "--base", "sidefx_pkg.workers.BrokenWorker")
    assert done.returncode == 1
    (line,) = [line for line in done.stdout.splitlines() if not line.startswith("skipped: ")]
    assert line.startswith(
        f"{GOOD} does not implement PolicyWorker: not a subclass of sidefx_pkg.workers.BrokenWorker"
        " (pyrefly: "
    ), line


@pytest.mark.parametrize(
    ("fqn", "protocol", "says"),
    [
        # A class that does not exist, said before anything else (issue 43, item 6).
        ("sidefx_pkg.workers.NoSuchWorker", "PolicyWorker", "no such class (module "),
        ("sidefx_pkg.nowhere.Worker", "PolicyWorker", "no such class (no source file"),
        ("not_on_the_path.Worker", "PolicyWorker", "no folder on the import path"),
        (GOOD, "NoSuchProtocol", "unknown protocol 'NoSuchProtocol'"),
        ("sidefx_pkg..Worker", "PolicyWorker", "FQN"),
        ("sidefx_pkg.syntax.Worker", "PolicyWorker", "is not valid Python (line 1"),
        ("sidefx_pkg.binary.Worker", "PolicyWorker", "cannot be read"),
    ],
)
def test_unusable_input_is_one_line_and_exit_2(
    tree: Path, fqn: str, protocol: str, says: str
) -> None:
    done = _cli(tree, "verify", fqn, "--protocol", protocol, "--static")
    assert done.returncode == 2, done.stdout
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("nemo-rl-workers: ") and says in line, line
    assert not (tree / "sidefx_pkg" / "IMPORTED").exists()


def test_no_checker_installed_is_unusable_input(monkeypatch: pytest.MonkeyPatch) -> None:
    # Fault injected on purpose: this environment does have pyrefly.
    monkeypatch.setattr(static_cli, "checker_command", lambda checker: None)
    out, err = io.StringIO(), io.StringIO()
    code = main(["verify", "contracts.PolicyWorker", "--protocol", "PolicyWorker", "--static"],
                out, err)
    assert (code, out.getvalue()) == (2, "")
    assert err.getvalue() == (
        "nemo-rl-workers: pyrefly is not installed in this environment (pip install pyrefly); "
        "--checker chooses another\n"
    )


def test_the_guide_lists_every_static_finding_kind() -> None:
    from typing import get_args

    from nemo_rl_workers.checks.static.static_check import StaticRule
    from tests.docs.test_catalogue import catalogue_section, table_names

    assert table_names(catalogue_section("Static findings")) == list(get_args(StaticRule))


def test_a_regular_package_wins_over_an_earlier_namespace_folder(tmp_path: Path) -> None:
    """As in Python's path finder: namespace portions count only if no package exists."""
    from nemo_rl_workers.checks.static.static_check import ImportRoots, Located, locate

    (tmp_path / "first" / "pkg").mkdir(parents=True)  # a bare folder named like the package
    (tmp_path / "second" / "pkg").mkdir(parents=True)
    (tmp_path / "second" / "pkg" / "__init__.py").write_text("")
    (tmp_path / "second" / "pkg" / "mod.py").write_text("class C: ...\n")
    roots = ImportRoots((str(tmp_path / "first"), str(tmp_path / "second")))
    found = locate("pkg.mod", roots)
    assert isinstance(found, Located)
    assert (found.file, found.root) == (tmp_path / "second" / "pkg" / "mod.py",
                                        tmp_path / "second")
    assert locate("pkg.other", roots) == (
        f"no source file for pkg.other (looked in {tmp_path / 'second' / 'pkg'}, "
        f"{tmp_path / 'first' / 'pkg'})"
    )
