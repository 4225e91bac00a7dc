"""End to end, as a NeMo-RL maintainer runs the tool on an extension package of their own
(issue 43, "Tests (real parts)").

For each corpus tree, the package (`extension_package`: worker classes subclassing the
tree's own, a registration module, a driver script, a config whose `defaults:` is the
tree's recipe) is written into a folder of its own, correct or with one deliberate mistake,
and the installed `nemo-rl-workers` is run there in a subprocess, as the user types it,
with a cache folder of the test's own. A case is (tree, mistake, command) -> the exit code
and a pattern of the line that must say what is wrong and how to fix it. The correct
package passes every command that can see it; each mistake is caught by each command
that can see it. Every case passes: each was a strict xfail naming the issue-43 item (or
the gap this suite found) until the fix merged.

What sees what, on these trees: `check` reads the config, and both trees read
`worker_extension_cls_fqn` only as a constructor argument (2025-09: not at all), so it
says the field is ignored and judges no class: it sees only that the correct package's
config passes. `audit --path` reads the package's source. `verify --static` judges a
class from source against its role's contract. `verify` imports the class: upstream's
workers do not import without their heavy dependencies (nemo_automodel, vLLM, zmq, ...),
so it is skipped where the correct package's worker module does not import.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from tests.user_extension.extension_package import (
    CONFIG,
    MISTAKES,
    PROTOCOL_OF_SECTION,
    TREES,
    apply,
    configured_classes,
    write_package,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
COMMAND_TIMEOUT_S = 600
# The section whose class each tree's mistakes are made in.
SUBJECT = {"2026-08": "policy", "2025-09": "policy.generation"}

@dataclass(frozen=True)
class Expect:
    """What the user must see: the exit code (or the codes allowed), a pattern some
    output line matches, and, for a contract verdict, a pattern every verdict line on the
    package's classes matches (no verdict on another member)."""

    exit: int | tuple[int, ...]
    pattern: str
    every_verdict: str | None = None


CORRECT: dict[str, Expect] = {
    "check": Expect(0, r"^\S.*: ok(, \d+ warnings?)? \("),
    "audit": Expect(0, r"^audit: .*: no findings \(\d+ more in the baseline\)$"),
    "verify-static": Expect(0, r" implements "),
    "verify": Expect(0, r" implements "),
}

# A misspelt class's line names the class the user meant: that is the fix.
_MEANT_POLICY = r"MyPolicyWroker\b.*\bmy_ext\.policy_worker\.MyPolicyWorker\b"
_MEANT_VLLM = r"MyVllmGenerationWroker\b.*\bmy_ext\.generation_worker\.MyVllmGenerationWorker\b"

MISTAKEN: dict[tuple[str, str, str], Expect] = {
    # -- 2026-08: the policy worker (upstream's template's DTensorPolicyWorkerV2Impl)
    ("2026-08", "renamed", "audit"): Expect(
        1, r"error\[missing-method\]: Policy\.run_all_workers_single_data calls "
           r"'get_worker_rank' on my_ext\.policy_worker\.MyPolicyWorker, which has no such"),
    ("2026-08", "signature", "audit"): Expect(
        1, r"error\[override-unknown-keyword\]: Policy\.train sends check_dim_skip_keys= "
           r"to train, but the override my_ext\.policy_worker\.MyPolicyWorker\.train has no "
           r"parameter check_dim_skip_keys"),
    ("2026-08", "signature", "verify-static"): Expect(
        1, r"MyPolicyWorker does not implement .*train.*check_dim_skip_keys",
        every_verdict=r"\btrain\b"),
    ("2026-08", "no-ray-remote", "audit"): Expect(
        1, r"error\[extension-not-actor\]: my_ext\.policy_worker\.MyPolicyWorker is not an "
           r"actor class: .*; decorate it with @ray\.remote\(runtime_env=.*\), as "
           r"nemo_rl\.\S+\.DTensorPolicyWorkerV2 is"),
    ("2026-08", "unregistered", "audit"): Expect(
        1, r"error\[extension-unregistered\]: my_ext\.policy_worker\.MyPolicyWorker .*"
           r"ACTOR_ENVIRONMENT_REGISTRY\[\"my_ext\.policy_worker\.MyPolicyWorker\"\] = "
           r"PY_EXECUTABLES\.AUTOMODEL, the environment the tree registers for "
           r"\S+\.DTensorPolicyWorkerV2"),
    ("2026-08", "actor-subclass", "audit"): Expect(
        1, r"error\[extension-subclasses-actor\]: my_ext\.policy_worker\.MyPolicyWorker "
           r"subclasses \S+\.DTensorPolicyWorkerV2, which is decorated @ray\.remote.*; "
           r"subclass \S+\.DTensorPolicyWorkerV2Impl, the undecorated class it wraps"),
    ("2026-08", "misspelt-fqn", "audit"): Expect((1, 2), _MEANT_POLICY),
    ("2026-08", "misspelt-fqn", "verify-static"): Expect(2, _MEANT_POLICY),
    ("2026-08", "misspelt-fqn", "verify"): Expect(2, _MEANT_POLICY),
    ("2026-08", "missing-tree-name", "audit"): Expect(
        1, r"nemo_rl\.utils\.nsys.*nvtx_range|nvtx_range.*nemo_rl\.utils\.nsys"),
    ("2026-08", "missing-tree-name", "verify-static"): Expect(
        (1, 2), r"nemo_rl\.utils\.nsys.*nvtx_range|nvtx_range.*nemo_rl\.utils\.nsys"),
    ("2026-08", "missing-tree-name", "verify"): Expect(2, r"nvtx_range"),
    # -- 2025-09: the vLLM generation worker (on BaseVllmGenerationWorker)
    ("2025-09", "renamed", "audit"): Expect(
        1, r"error\[missing-method\]: VllmGeneration\.\w+ calls 'generate' on "
           r"my_ext\.generation_worker\.MyVllmGenerationWorker"),
    ("2025-09", "renamed", "verify-static"): Expect(
        1, r"MyVllmGenerationWorker does not implement \S*\.generate\b",
        every_verdict=r"\.generate\b"),
    ("2025-09", "signature", "audit"): Expect(
        1, r"error\[override-unknown-keyword\]: VllmGeneration\.generate sends greedy= to "
           r"generate, but the override my_ext\.generation_worker\.MyVllmGenerationWorker"
           r"\.generate has no parameter greedy"),
    ("2025-09", "signature", "verify-static"): Expect(
        1, r"MyVllmGenerationWorker does not implement \S*\.generate\b.*greedy",
        every_verdict=r"\.generate\b"),
    ("2025-09", "no-ray-remote", "audit"): Expect(
        1, r"error\[extension-not-actor\]: my_ext\.generation_worker\.MyVllmGenerationWorker "
           r"is not an actor class: .*; decorate it with @ray\.remote\(.*\), as "
           r"nemo_rl\.\S+\.VllmGenerationWorker is"),
    ("2025-09", "unregistered", "audit"): Expect(
        # The tree registers its vLLM workers as VLLM_EXECUTABLE (PY_EXECUTABLES.VLLM
        # unless its system-executable switch is set): the fix names it, importable.
        1, r"error\[extension-unregistered\]: my_ext\.generation_worker\."
           r"MyVllmGenerationWorker .*ACTOR_ENVIRONMENT_REGISTRY\[\"my_ext\.generation_worker"
           r"\.MyVllmGenerationWorker\"\] = VLLM_EXECUTABLE \(from \S+, where .*"
           r"PY_EXECUTABLES\.VLLM\), the environment the tree registers for "
           r"\S+\.VllmGenerationWorker"),
    ("2025-09", "actor-subclass", "audit"): Expect(
        1, r"error\[extension-subclasses-actor\]: my_ext\.generation_worker\."
           r"MyVllmGenerationWorker subclasses \S+\.VllmGenerationWorker, which is decorated "
           r"@ray\.remote.*; subclass \S+, the undecorated class"),
    ("2025-09", "misspelt-fqn", "audit"): Expect((1, 2), _MEANT_VLLM),
    ("2025-09", "misspelt-fqn", "verify-static"): Expect(2, _MEANT_VLLM),
    ("2025-09", "misspelt-fqn", "verify"): Expect(2, _MEANT_VLLM),
    ("2025-09", "missing-tree-name", "audit"): Expect(
        1, r"nemo_rl\.utils\.nsys.*nvtx_range|nvtx_range.*nemo_rl\.utils\.nsys"),
    ("2025-09", "missing-tree-name", "verify-static"): Expect(
        (1, 2), r"nemo_rl\.utils\.nsys.*nvtx_range|nvtx_range.*nemo_rl\.utils\.nsys"),
    ("2025-09", "missing-tree-name", "verify"): Expect(2, r"nvtx_range"),
}


def _cases() -> Iterator[object]:
    for tree in TREES:
        for command, expect in CORRECT.items():
            yield _param(tree, None, command, expect)
        for (case_tree, mistake, command), expect in MISTAKEN.items():
            if case_tree == tree:
                yield _param(tree, mistake, command, expect)


def _param(tree: str, mistake: str | None, command: str, expect: Expect) -> object:
    return pytest.param(tree, mistake, command, expect,
                        id=f"{tree}-{mistake or 'correct'}-{command}")


def test_every_mistake_is_a_case() -> None:
    """The table covers every mistake of every tree, and every mistake's edits apply."""
    for tree, mistakes in MISTAKES.items():
        assert {m for t, m, _ in MISTAKEN if t == tree} == set(mistakes), tree


# -- running the tool as the user does


def _tool() -> list[str]:
    """The installed entry point beside this interpreter, else `python -m`."""
    script = Path(sys.executable).parent / "nemo-rl-workers"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "nemo_rl_workers"]


def _env(package: Path, cache_dir: Path, *first: Path) -> dict[str, str]:
    """The user's environment: their package importable (as `pip install -e .` makes
    it), this checkout's tool, and a folder of this test's own for tree models."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEMO_RL_WORKERS")}
    path = [*map(str, first), str(package), str(REPO_ROOT)]
    if os.environ.get("PYTHONPATH"):
        path.append(os.environ["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(path)
    env["NEMO_RL_WORKERS_CACHE_DIR"] = str(cache_dir)
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # importing the tree writes nothing into the corpus
    return env


@dataclass(frozen=True)
class Run:
    exit: int
    output: str  # stdout then stderr, as the user's terminal shows them


def run_tool(package: Path, cache_dir: Path, command: str, *args: str) -> Run:
    """`nemo-rl-workers COMMAND ARGS` from the package's folder. Every cache is the
    test's own: tree models through the environment, audit and static verdicts through
    `--cache-dir` (by default they go to the working folder's `.nemo-rl-workers-cache`)."""
    done = subprocess.run([*_tool(), command, "--cache-dir", str(cache_dir), *args],
                          cwd=package, env=_env(package, cache_dir),
                          capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S)
    return Run(done.returncode, done.stdout + done.stderr)


@pytest.fixture(scope="module")
def baselines(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each tree's own findings, recorded as a maintainer adopts the audit
    (`audit --write-baseline`), so the audit of their package reports only its own."""
    out: dict[str, Path] = {}
    for tree, root in TREES.items():
        if not (root / "nemo_rl").is_dir():
            continue
        folder = tmp_path_factory.mktemp(f"baseline-{tree}")
        out[tree] = folder / "baseline.json"
        done = run_tool(folder, folder / "cache", "audit", "--nemo-rl", str(root),
                        "--write-baseline", str(out[tree]))
        assert done.exit == 0 and out[tree].is_file(), done.output
    return out


def _command(command: str, tree: str, package: Path, baseline: Path,
             sections: list[str]) -> list[list[str]]:
    """The command lines a user types for `command`, from the package's folder."""
    root = str(TREES[tree])
    if command == "check":
        return [["check", "--nemo-rl", root, CONFIG]]
    if command == "audit":
        return [["audit", "--nemo-rl", root, "--baseline", str(baseline), "--path", ".",
                 CONFIG]]
    classes = configured_classes(package)
    static = ["--static"] if command == "verify-static" else []
    return [["verify", *static, "--nemo-rl", root, "--protocol", PROTOCOL_OF_SECTION[s],
             classes[s]] for s in sections]


@cache
def _not_importable(tree: str, module: str) -> str | None:
    """Why the correct package's `module` does not import where the user's nemo_rl is
    this tree (a separate process; never this one), or None where it does."""
    with tempfile.TemporaryDirectory() as folder:
        package = write_package(tree, Path(folder) / "my_ext_project")
        done = subprocess.run(
            [sys.executable, "-c", f"import {module}"], cwd=package, capture_output=True,
            text=True, timeout=COMMAND_TIMEOUT_S,
            env=_env(package, Path(folder) / "cache", TREES[tree]))
    lines = done.stderr.strip().splitlines()
    return None if done.returncode == 0 else (lines[-1] if lines else f"exit {done.returncode}")


@pytest.mark.slow
@pytest.mark.parametrize(("tree", "mistake", "command", "expect"), list(_cases()))
def test_the_user_sees(tree: str, mistake: str | None, command: str, expect: Expect,
                       tmp_path: Path, baselines: dict[str, Path]) -> None:
    if tree not in baselines:
        pytest.skip(f"the {tree} corpus is absent ({TREES[tree]})")
    package = write_package(tree, tmp_path / "my_ext_project", mistake)
    sections = list(configured_classes(package)) if mistake is None else [SUBJECT[tree]]
    if command == "verify":
        for section in sections:
            module = configured_classes(write_package(
                tree, tmp_path / "unmistaken"))[section].rpartition(".")[0]
            why = _not_importable(tree, module)
            if why is not None:
                pytest.skip(f"verify imports the class: {module} does not import with "
                            f"the {tree} tree as nemo_rl here ({why})")
    runs = [run_tool(package, tmp_path / "cache", *args)
            for args in _command(command, tree, package, baselines[tree], sections)]
    codes = expect.exit if isinstance(expect.exit, tuple) else (expect.exit,)
    for run in runs:
        shown = f"exit {run.exit}:\n{run.output}"
        assert run.exit in codes, shown
        assert re.search(expect.pattern, run.output, re.MULTILINE), shown
        if expect.every_verdict is not None:
            verdicts = [line for line in run.output.splitlines() if line.startswith("my_ext.")]
            assert all(re.search(expect.every_verdict, v) for v in verdicts), shown


@pytest.mark.slow
@pytest.mark.parametrize("tree", list(TREES))
def test_an_edited_package_is_audited_again(tree: str, tmp_path: Path,
                                            baselines: dict[str, Path]) -> None:
    """The user audits, edits a worker (an override that drops a keyword the driver
    sends), audits again with the same cache folder: the second audit judges the edit."""
    if tree not in baselines:
        pytest.skip(f"the {tree} corpus is absent ({TREES[tree]})")
    package = write_package(tree, tmp_path / "my_ext_project")
    (args,) = _command("audit", tree, package, baselines[tree], [])
    first = run_tool(package, tmp_path / "cache", *args)
    assert first.exit == 0, first.output
    apply(package, MISTAKES[tree]["signature"])
    second = run_tool(package, tmp_path / "cache", *args)
    assert second.exit == 1 and "error[override-unknown-keyword]" in second.output, (
        second.output)
