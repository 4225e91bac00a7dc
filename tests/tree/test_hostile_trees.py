"""Trees a careless or hostile commit could produce (issue 33): every command that reads a
tree answers in one line with a documented exit code, in bounded time and memory, and
never passes a verdict that depends on what it could not read.

Each case runs the real command line in its own process (`measured`), so a hang is a
timeout and the peak memory is that process's own.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from bench.bench_support import run_child
from nemo_rl_workers.tree.source.parse import MAX_SOURCE_TOKENS, count_tokens, parse_text
from nemo_rl_workers.tree.source.reading import MAX_SOURCE_BYTES
from tests.revision.trees import OLD_FILES, config, old_tree, write

POLICY_CONFIG = """\
policy:
  model_name: tiny
  dtensor_cfg: {enabled: true, _v2: false}
  megatron_cfg: {enabled: false}
  generation:
    backend: vllm
    vllm_cfg: {async_engine: false}
"""

@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str
    seconds: float
    peak_mib: float  # the command's own peak RSS (bench_support's launcher measures it)


def measured(cwd: Path, *argv: str, timeout: float = 60,
             env: dict[str, str] | None = None) -> Run:
    done = run_child([sys.executable, "-m", "nemo_rl_workers", *argv], cwd=cwd,
                     env={**os.environ, **(env or {})}, timeout_s=timeout)
    assert not done.timed_out, (argv, done.stdout, done.stderr)
    return Run(done.returncode, done.stdout, done.stderr, done.wall_s, done.max_rss_mb)


def _tree(tmp_path: Path, **files: str) -> Path:
    root = old_tree(tmp_path / "tree")
    write(root, files)
    config(root, "c.yaml", POLICY_CONFIG)
    return root


COMMANDS = {
    "list": ("list", "--no-cache", "--nemo-rl", "."),
    "check": ("check", "--no-cache", "--no-verify", "--nemo-rl", ".", "examples/configs/c.yaml"),
    "resolve": ("resolve", "--no-cache", "--nemo-rl", ".", "examples/configs/c.yaml"),
    "migrate": ("migrate", "--no-cache", "--check", "--nemo-rl", ".", "examples/configs/c.yaml"),
    "audit": ("audit", "--no-cache", "--nemo-rl", "."),
}


# -- the project file -------------------------------------------------------------------


def _fifo(path: Path) -> None:
    path.unlink(missing_ok=True)
    os.mkfifo(path)


def _zero(path: Path) -> None:
    path.unlink(missing_ok=True)
    path.symlink_to("/dev/zero")


@pytest.mark.parametrize(("name", "make", "reason"), [
    ("fifo", _fifo, "pyproject.toml is not a regular file; its vLLM pin is not read"),
    ("dev-zero", _zero, "pyproject.toml is a symlink out of the tree (/dev/zero); it is not "
                        "followed; its vLLM pin is not read"),
])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_project_file_that_is_no_file_is_one_line(
        tmp_path: Path, name: str, make: object, reason: str, command: str) -> None:
    """A FIFO hung every command forever; /dev/zero grew past 7 GB. Now the file is not
    opened for reading at all, and every verdict that does not need the pin stands."""
    root = _tree(tmp_path)
    assert callable(make)
    make(root / "pyproject.toml")
    run = measured(root, *COMMANDS[command], timeout=60)
    assert run.seconds < 30 and run.peak_mib < 400, (run.seconds, run.peak_mib)
    assert "Traceback" not in run.err
    if command == "list":
        assert (run.code, f"vLLM pinned: undecided ({reason})") == (0, run.out.splitlines()[-1])
    elif command == "audit":
        assert f"nemo-rl-workers: audit: {reason}\n" in run.err
        assert run.code in (0, 1)
    else:
        assert run.code in (0, 1), run.err  # the config's verdicts, not the pin's
        assert run.err.count("\n") <= 1


@pytest.mark.parametrize(("toml", "reason"), [
    ('[project]\ndependencies = 5\n',
     "project.dependencies is an integer, not a list of strings"),
    ('[project]\ndependencies = true\n',
     "project.dependencies is a boolean, not a list of strings"),
    ('[project]\ndependencies = 1.5\n', "project.dependencies is a float, not a list of strings"),
    ('[project]\ndependencies = [5]\n', "a requirement is an integer, not a string"),
    ('[project.optional-dependencies]\nvllm = "vllm==1"\n',
     "project.optional-dependencies.vllm is a string, not a list of strings"),
    ('project = 3\n', "project is an integer, not a table"),
])
def test_odd_toml_types_are_one_line(tmp_path: Path, toml: str, reason: str) -> None:
    root = _tree(tmp_path, **{"pyproject.toml": toml})
    run = measured(root, *COMMANDS["list"])
    assert run.code == 0, run.err
    assert run.out.splitlines()[-1] == (
        f"vLLM pinned: undecided (pyproject.toml: {reason}; its vLLM pin is not read)")


def test_twenty_thousand_nested_arrays_are_one_line(tmp_path: Path) -> None:
    """An internal error (exit 70) before: tomllib recursed past Python's limit."""
    root = _tree(tmp_path, **{
        "pyproject.toml": "[project]\ndependencies = " + "[" * 20_000 + "]" * 20_000 + "\n"})
    for command in ("list", "audit"):
        run = measured(root, *COMMANDS[command])
        assert run.code in (0, 1) and "internal error" not in run.err, run.err
        assert "pyproject.toml nests too deeply; its vLLM pin is not read" in run.out + run.err


# -- the package ------------------------------------------------------------------------


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_package_linked_to_the_root_folder_is_refused(tmp_path: Path, command: str) -> None:
    """`nemo_rl -> /` walked the whole machine for 20-50 s and then said "ok"."""
    root = tmp_path / "tree"
    root.mkdir()
    (root / "nemo_rl").symlink_to("/")
    config(root, "c.yaml", POLICY_CONFIG)
    run = measured(root, *COMMANDS[command])
    assert run.seconds < 20, run.seconds
    assert run.code == 2, (run.out, run.err)
    prefix = {"audit": "nemo-rl-workers: audit: ", "migrate": "nemo-rl-workers migrate: "}.get(
        command, "nemo-rl-workers: ")
    where = "." if command == "audit" else "--nemo-rl ."
    assert run.err == (f"{prefix}{where}: its nemo_rl is a symlink out of the tree (/); it is "
                       "not followed; give the folder that holds the nemo_rl package itself\n")


def test_a_module_linked_out_of_the_tree_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text("class Secret: ...\n")
    root = _tree(tmp_path)
    (root / "nemo_rl" / "linked.py").symlink_to(outside)
    run = measured(root, *COMMANDS["audit"])
    assert run.code == 2
    assert (f"nemo-rl-workers: audit: nemo_rl/linked.py: is a symlink out of the tree "
            f"({outside}); it is not followed\n") in run.err


@pytest.mark.parametrize("command", ["list", "check", "audit"])
def test_a_tree_with_no_driver_is_not_a_nemo_rl_tree(tmp_path: Path, command: str) -> None:
    """A clean pass before."""
    root = write(tmp_path / "tree", {"nemo_rl/__init__.py": "", "nemo_rl/util.py": "X = 1\n"})
    config(root, "c.yaml", POLICY_CONFIG)
    run = measured(root, *COMMANDS[command])
    assert (run.code, run.out) == (2, "")
    assert "is not a NeMo-RL tree the tool can judge: no module of its nemo_rl package starts " \
           "workers" in run.err
    assert run.err.count("\n") == 1


# -- modules that cannot be read --------------------------------------------------------

_DRIVER = OLD_FILES["nemo_rl/models/policy/lm_policy.py"].encode()
_LINES = _DRIVER.count(b"\n")
# The real driver, damaged: each is a file the driver reader would have to model.
UNREADABLE = {
    "does not parse": (_DRIVER + b"def (:\n", f"nemo_rl/models/policy/lm_policy.py:{_LINES + 1}: "
                                             "is not valid Python: invalid syntax"),
    "not UTF-8": (b"# \xff\xfe\n" + _DRIVER,
                  "nemo_rl/models/policy/lm_policy.py: is not UTF-8 text (byte 0xff at offset 2)"),
    "NUL bytes": (_DRIVER + b"\x00\n", "nemo_rl/models/policy/lm_policy.py: is not valid "),
    "deeply nested": (_DRIVER + b"x = " + b"(" * 5000 + b"1" + b")" * 5000 + b"\n",
                      "nemo_rl/models/policy/lm_policy.py"),
}


@pytest.mark.parametrize("case", sorted(UNREADABLE))
def test_a_driver_that_cannot_be_read_leaves_every_section_undecided(
        tmp_path: Path, case: str) -> None:
    """`list` exited 0 with no policy rows, `check` said undecided without naming the
    file (or "ok"), `audit` counted one driver fewer with no line."""
    text, named = UNREADABLE[case]
    root = _tree(tmp_path)
    (root / "nemo_rl/models/policy/lm_policy.py").write_bytes(text)
    check = measured(root, *COMMANDS["check"])
    assert check.code == 1, check.out + check.err
    problems = [line for line in check.out.splitlines() if "problem:" in line]
    assert len(problems) == 2  # policy and policy.generation: both depend on the drivers
    for line in problems:
        assert ": undecided: the tree could not be read whole (" in line
        assert named in line
        assert "may hold the driver that decides this section's worker class" in line
    # Nor does it state a world size or pass the rules the module may hold.
    report = json.loads(measured(root, *COMMANDS["check"], "--json").out)
    assert report["world_size"] is None and named in report["world_size_from"]
    assert any(note.startswith("the tree rules of the modules the tree could not read (")
               and named in note and note.endswith("): not checked")
               for note in report["skipped"]), report["skipped"]
    listing = measured(root, *COMMANDS["list"])
    assert listing.code == 1
    assert any(line.startswith("undecided: this table may lack rows: ") and named in line
               for line in listing.out.splitlines()), listing.out
    audit = measured(root, *COMMANDS["audit"])
    assert audit.code == 2
    assert f"nemo-rl-workers: audit: {named}" in audit.err


def test_a_module_over_the_cap_is_refused_naming_the_cap_and_the_setting(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    driver = root / "nemo_rl/models/policy/lm_policy.py"
    driver.write_text(OLD_FILES["nemo_rl/models/policy/lm_policy.py"] + "#" * (2 << 20))
    size = driver.stat().st_size
    run = measured(root, *COMMANDS["check"], env={"NEMO_RL_WORKERS_MAX_MODULE_MIB": "1"})
    assert run.code == 1
    assert (f"nemo_rl/models/policy/lm_policy.py: is {size} bytes, over the 1048576-byte "
            "limit for a module (NEMO_RL_WORKERS_MAX_MODULE_MIB=<MiB> raises it)") in run.out
    raised = measured(root, *COMMANDS["check"], env={"NEMO_RL_WORKERS_MAX_MODULE_MIB": "4"})
    assert raised.code == 0, raised.out


def test_a_module_dense_enough_to_cost_a_gib_is_refused_naming_the_budget(
        tmp_path: Path) -> None:
    """Memory follows the syntax tree, not the bytes: 8 MiB of `x = [1, 2]` under the size
    cap peaked at 1.6 GB. A module over the token budget is not parsed, and every verdict
    it leaves undecided names it; raising the size setting raises the budget with it."""
    root = _tree(tmp_path)
    driver = root / "nemo_rl/models/policy/lm_policy.py"
    line = "_pad = [0, 1, ('pad', 2)]\n"
    padding = line * (MAX_SOURCE_TOKENS // count_tokens(line) + 1)
    driver.write_text(OLD_FILES["nemo_rl/models/policy/lm_policy.py"] + padding)
    assert driver.stat().st_size < MAX_SOURCE_BYTES  # under the size cap
    run = measured(root, *COMMANDS["check"])
    assert run.code == 1, run.out + run.err
    problems = [line for line in run.out.splitlines() if "problem:" in line]
    assert len(problems) == 2 and all(
        f"(nemo_rl/models/policy/lm_policy.py: holds over {MAX_SOURCE_TOKENS:,} tokens, the "
        "limit for a module's syntax tree (NEMO_RL_WORKERS_MAX_MODULE_MIB=<MiB> raises it))"
        in line for line in problems), run.out
    assert run.peak_mib < 512, run.peak_mib  # refused before any of it is parsed
    mib = str(2 * MAX_SOURCE_BYTES // 2**20)
    raised = measured(root, *COMMANDS["check"], env={"NEMO_RL_WORKERS_MAX_MODULE_MIB": mib},
                      timeout=300)
    assert raised.code == 0, raised.out


def test_the_token_count_is_what_the_budget_reads() -> None:
    assert count_tokens("") == 0
    assert count_tokens("self.worker_group.run(x, 'a b')") == 10  # a string is one
    assert count_tokens('x = 1  # a comment is one too\n"""a\ndocstring"""\n') == 5
    assert count_tokens("#" * 100_000) == 1  # the size cap bounds what the parser skips
    assert count_tokens("é = 1") == 3  # a letter outside ASCII counts, at worst, alone
    assert count_tokens("x " * 10, stop=3) == 4  # counting ends past `stop`
    assert isinstance(parse_text("x = 1\n", "m.py"), ast.Module)


def test_a_cyclic_mro_in_the_default_worker_is_undecided(tmp_path: Path) -> None:
    """`check` printed "ok" while the audit's findings on that class vanished."""
    root = _tree(tmp_path, **{
        "nemo_rl/models/policy/workers/dtensor.py": textwrap.dedent("""\
            class Base(DTensorPolicyWorker):
                def train(self, data): ...

            class DTensorPolicyWorker(Base): ...
            """)})
    run = measured(root, *COMMANDS["check"])
    assert run.code == 1, run.out
    fqn = "nemo_rl.models.policy.workers.dtensor.DTensorPolicyWorker"
    assert (f"policy: undecided: {fqn} cannot be modelled: "
            "nemo_rl/models/policy/workers/dtensor.py:4: ") in run.out
    assert "is its own base" in run.out
    listing = measured(root, *COMMANDS["list"])
    assert listing.code == 1 and f"undecided: {fqn} cannot be modelled: " in listing.out


# -- size -------------------------------------------------------------------------------

@pytest.mark.slow
def test_an_eight_mib_driver_module_stays_under_one_gib(
        tmp_path: Path, corpus: Callable[..., Path]) -> None:
    """0.6 GB of RSS per MB of source before (an 8 MiB lm_policy.py: 2.7 GB); and audit
    time grew as the square of a function's dispatch sites."""
    upstream = corpus()
    root = tmp_path / "tree"
    (root / "examples" / "configs").mkdir(parents=True)
    subprocess.run(["cp", "-r", str(upstream / "nemo_rl"), str(root)], check=True)
    subprocess.run(["chmod", "-R", "u+w", str(root)], check=True)
    (root / "examples/configs/grpo_math_1B.yaml").write_bytes(
        (upstream / "examples/configs/grpo_math_1B.yaml").read_bytes())
    driver = root / "nemo_rl/models/policy/lm_policy.py"
    real = driver.read_text()
    calls = "\n".join('        self.worker_group.run_all_workers_single_data("get_gpu_info")'
                      for _ in range(60_000))
    copies = "\n".join(f"class _Copy{i}:\n" + textwrap.indent(real, "    ") for i in range(66))
    driver.write_text(f"{real}\n\nclass _Padded(Policy):\n    def padded(self):\n{calls}\n"
                      f"{copies}\n")
    assert 7.5 * 2**20 < driver.stat().st_size < 8 * 2**20
    # `check` reads the tree with the model and driver reader the audit uses (bench 13
    # measures the audit too, which takes minutes here).
    run = measured(root, "check", "--no-cache", "--no-verify", "--nemo-rl", ".", "--json",
                   "examples/configs/grpo_math_1B.yaml", timeout=600)
    assert run.code in (0, 1), run.err
    assert run.peak_mib <= 1024, run.peak_mib
    report = json.loads(run.out)
    assert [w["fqn"].rsplit(".", 1)[-1] for w in report["workers"]] == [
        "DTensorPolicyWorkerV2", "VllmGenerationWorker"]


def test_a_registry_the_source_does_not_show_leaves_registration_undecided(
        tmp_path: Path) -> None:
    """An extension missing from a registry built by a call is not "unregistered" (R2):
    the tree may register it there."""
    from tests.revision.trees import new_tree

    root = new_tree(tmp_path / "tree")
    registry = root / "nemo_rl/distributed/ray_actor_environment_registry.py"
    registry.write_text("ACTOR_ENVIRONMENT_REGISTRY = dict(load_registry())\n")
    config(root, "c.yaml", """\
        policy:
          model_name: tiny
          worker_extension_cls_fqn: research.ext.Mine
          automodel_cfg: {enabled: true}
          megatron_cfg: {enabled: false}
        """)
    run = measured(root, *COMMANDS["check"])
    assert run.code == 1
    assert ("policy.worker_extension_cls_fqn: undecided: whether research.ext.Mine is "
            "registered with an actor environment: nemo_rl/distributed/"
            "ray_actor_environment_registry.py:1: ACTOR_ENVIRONMENT_REGISTRY is "
            "'dict(load_registry())', not a dict the source shows.") in run.out
    assert "R2" not in run.out and "is not registered" not in run.out
    listing = measured(root, *COMMANDS["list"])
    assert listing.code == 1
    assert "undecided: the registry may lack classes: nemo_rl/distributed/" in listing.out
