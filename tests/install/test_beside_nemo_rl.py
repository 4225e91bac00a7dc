"""The tool installs beside another NeMo-RL and never shadows it.

A throwaway virtual environment holds a stand-in NeMo-RL (a small distribution
`fork-nemo-rl` written here, whose `nemo_rl` says `STANDIN = True`), installed editable or
as a plain `.pth` path entry, and this project's wheel, built from a copy of the
checkout, with and without extras. From the stand-in's root, from an unrelated folder
and from a script in the stand-in's `examples/` (as NeMo-RL users run their recipes):
`import nemo_rl` is the stand-in's, its own tests pass under `python -m pytest` and
`pytest`, the CLI's `--help`, `check`, `audit` and `verify --static` work, and so does
`pytest --nemo-rl-workers CONFIG`; `pip show -f` lists no `nemo_rl/` file of the tool.

Nothing is downloaded: the environment's third-party packages are the project venv's,
linked into one folder that a `.pth` line puts on the path: the closure of what the
wheel, its extras, pytest, pip and setuptools require (and vllm-stubs with `static`),
never the project venv's editable installs of this checkout. pip so resolves the
wheel's requirements offline (`--no-index`, without `--no-deps`), and `nemo_rl` cannot
come from the project venv's runtime (checked before anything is installed).
"""

from __future__ import annotations

import email
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.revision.trees import OLD_FILES

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
PROJECT = "nemo-rl-worker-contracts"
# Where the project venv keeps its third-party packages (this interpreter's).
SITE = Path(sysconfig.get_paths()["purelib"])
# What the throwaway environment needs besides the wheel's requirements: its own
# pytest (a NeMo-RL environment has one), pip to install, setuptools for the
# editable build of the stand-in (--no-build-isolation).
TOOLING = ("pytest", "pip", "setuptools")
FAILED = ("Traceback", "INTERNALERROR", "nemo-rl-workers: internal error")

GOOD = "nemo_rl.models.policy.workers.good_worker.GoodWorker"
PLAIN = "nemo_rl.models.policy.workers.my_worker.MyWorker"
CONFIG = "examples/configs/tiny.yaml"
POLICY_V2 = "nemo_rl.models.policy.workers.dtensor_v2.DTensorPolicyWorkerV2"

STANDIN: dict[str, str] = {
    "pyproject.toml": """\
        [build-system]
        requires = ["setuptools>=68"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "fork-nemo-rl"
        version = "0.0.1"
        requires-python = ">=3.11"

        [tool.setuptools.packages.find]
        include = ["nemo_rl*"]

        [tool.pytest.ini_options]
        testpaths = ["tests"]
        # The stand-in has none of the reference's default worker classes to import.
        nemo_rl_workers_check_args = ["--no-verify"]
        """,
    # A fork before the rename (tests/revision/trees.py): Policy and VllmGeneration pick
    # their workers by dtensor_cfg/_v2/megatron_cfg and async_engine, as upstream's did.
    **{name: text for name, text in OLD_FILES.items() if name != "pyproject.toml"},
    "nemo_rl/__init__.py": "STANDIN = True\n",
    "nemo_rl/algorithms/__init__.py": "",
    # A driver that starts its worker class by FQN and calls a method by name, as
    # upstream's do: what `audit` reads.
    "nemo_rl/algorithms/grpo.py": """\
        from nemo_rl.distributed.worker_groups import RayWorkerBuilder, RayWorkerGroup


        class Trainer:
            def __init__(self, cfg):
                worker_cls = "nemo_rl.models.policy.workers.my_worker.MyWorker"
                self.worker_group = RayWorkerGroup(RayWorkerBuilder(worker_cls, cfg))

            def wake(self):
                return self.worker_group.run_all_workers_single_data("wake_up")
        """,
    "nemo_rl/models/__init__.py": "",
    "nemo_rl/models/policy/__init__.py": "",
    "nemo_rl/models/policy/workers/__init__.py": "",
    "nemo_rl/models/policy/workers/my_worker.py": """\
        class MyWorker:
            def wake_up(self):
                return True
        """,
    "nemo_rl/models/policy/workers/good_worker.py": """\
        from __future__ import annotations

        from contracts import LogprobBatch, LogprobResult, TrainBatch, TrainResult


        class GoodWorker:
            def is_alive(self) -> bool:
                return True

            def get_logprobs(self, batch: LogprobBatch) -> LogprobResult:
                return {"logprobs": []}

            def load_checkpoint(self, path: str, weights: object | None = None) -> None:
                return None

            def train(self, batch: TrainBatch) -> TrainResult:
                return {"loss": 0.0, "grad_norm": 0.0, "num_tokens": 0, "step": 0}

            def save_checkpoint(self, path: str) -> None:
                return None

            def shutdown(self) -> bool:
                return True
        """,
    "tests/test_trivial.py": """\
        import nemo_rl


        def test_the_standin_is_imported():
            assert nemo_rl.STANDIN
        """,
    CONFIG: """\
        policy:
          model_name: tiny-llama-local
          train_micro_batch_size: 2
          logprob_batch_size: 2
          dtensor_cfg:
            enabled: true
            _v2: true
          megatron_cfg:
            enabled: false
          optimizer:
            lr: 0.001
          generation:
            backend: vllm
            model_name: tiny-llama-local
            max_new_tokens: 8
            vllm_cfg:
              async_engine: false
              tensor_parallel_size: 1
              gpu_memory_utilization: 0.5
              max_model_len: 64
        cluster:
          num_nodes: 1
          gpus_per_node: 2
        """,
    # A user's script in a subfolder: sys.path[0] is examples/, so `nemo_rl` comes from
    # the install; the tool and pytest then run in the process that imported it.
    "examples/run_tool.py": """\
        import json
        import sys

        import nemo_rl


        def main() -> int:
            what, args = sys.argv[1], sys.argv[2:]
            if what == "where":
                import nemo_rl_workers

                print(json.dumps({"nemo_rl": nemo_rl.__file__, "standin": nemo_rl.STANDIN,
                                  "tool": nemo_rl_workers.__file__}))
                return 0
            if what == "cli":
                from nemo_rl_workers.commands.cli import main as cli

                return cli(args)
            import pytest

            return int(pytest.main(args))


        if __name__ == "__main__":
            sys.exit(main())
        """,
}

WHERE = textwrap.dedent("""\
    import json, nemo_rl, nemo_rl_workers
    print(json.dumps({"nemo_rl": nemo_rl.__file__, "standin": nemo_rl.STANDIN,
                      "tool": nemo_rl_workers.__file__}))
    """)

# A console script as pip writes it.
CONSOLE_SCRIPT = """\
#!{python}
import sys
from {module} import {name}
if __name__ == '__main__':
    sys.argv[0] = sys.argv[0].removesuffix('.exe')
    sys.exit({call}())
"""

PLACES = ("root", "elsewhere", "script")


# ------------------------------------------------------------------ building


def _clean_env(root: Path, bin_dir: Path | None = None) -> dict[str, str]:
    """No PYTHONPATH, no VIRTUAL_ENV, no pytest or CI variables; a HOME and TMPDIR of
    its own; no bytecode written into the project venv's packages."""
    home, tmp = root / "home", root / "tmp"
    home.mkdir(exist_ok=True)
    tmp.mkdir(exist_ok=True)
    path = "/usr/bin:/bin" if bin_dir is None else f"{bin_dir}:/usr/bin:/bin"
    return {
        "PATH": path, "HOME": str(home), "TMPDIR": str(tmp), "LANG": "C.UTF-8",
        "NO_COLOR": "1", "PYTHONDONTWRITEBYTECODE": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PIP_NO_INPUT": "1", "PIP_NO_CACHE_DIR": "1",
    }


def _run(argv: Sequence[str | Path], cwd: Path, env: dict[str, str],
         timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)


def _ok(done: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert done.returncode == 0, f"{done.args}\n{done.stdout}\n{done.stderr}"
    return done


def _installed() -> dict[str, importlib.metadata.Distribution]:
    """The project venv's distributions, by normalized name (only its site-packages)."""
    return {canonicalize_name(d.metadata["Name"]): d
            for d in importlib.metadata.distributions(path=[str(SITE)])}


def _wheel_requirements(wheel: Path, extras: Sequence[str]) -> list[Requirement]:
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = email.message_from_bytes(archive.read(name))
    wanted = ["", *extras]
    return [req for req in map(Requirement, metadata.get_all("Requires-Dist") or [])
            if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in wanted)]


def _closure(roots: Sequence[Requirement]) -> list[importlib.metadata.Distribution]:
    """Every installed distribution the requirements pull in (with their extras); a
    requirement the project venv cannot satisfy fails here, loudly."""
    installed = _installed()
    done: dict[str, set[str]] = {}
    todo = list(roots)
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        dist = installed.get(name)
        assert dist is not None, f"{req} is not installed in {SITE}: run `make setup`"
        assert req.specifier.contains(dist.version, prereleases=True), (
            f"{req} is not met in {SITE}: {dist.version} is installed; run `make setup`")
        extras = set(req.extras)
        if name in done and extras <= done[name]:
            continue
        done[name] = done.get(name, set()) | extras
        for line in dist.requires or []:
            sub = Requirement(line)
            if sub.marker is None or any(sub.marker.evaluate({"extra": e})
                                         for e in ["", *sorted(extras)]):
                todo.append(sub)
    return [installed[name] for name in sorted(done)]


def _link_dependencies(dists: Sequence[importlib.metadata.Distribution], deps: Path,
                       bin_dir: Path, python: Path) -> None:
    """Link each distribution's top-level files into `deps`; write its console scripts
    into `bin_dir` as pip would, and link its other scripts (pyrefly's binary)."""
    deps.mkdir()
    for dist in dists:
        scripts = {ep.name: ep for ep in dist.entry_points if ep.group == "console_scripts"}
        files = dist.files
        assert files is not None, f"{dist.metadata['Name']} has no RECORD in {SITE}"
        for file in files:
            parts = file.parts
            if parts[0] == "..":
                source = Path(os.path.normpath(SITE / file))
                target = bin_dir / parts[-1]
                if (parts[-1] not in scripts and source.parent.name == "bin"
                        and not target.exists()):
                    target.symlink_to(source)
                continue
            top = parts[0]
            if top == "__pycache__" or top.endswith(".pth") or (deps / top).exists():
                continue
            (deps / top).symlink_to(SITE / top)
        for name, ep in scripts.items():
            module, _, attr = ep.value.partition(":")
            attr = attr.split("[")[0].strip()
            script = bin_dir / name
            script.write_text(CONSOLE_SCRIPT.format(
                python=python, module=module.strip(), name=attr.split(".")[0], call=attr))
            script.chmod(0o755)


@dataclass(frozen=True)
class Venv:
    root: Path
    bin: Path
    python: Path
    site: Path
    env: dict[str, str]


def _make_venv(root: Path, roots: Sequence[Requirement]) -> Venv:
    """A fresh venv on the base interpreter whose only third-party packages are the
    closure of `roots`, linked from the project venv."""
    root.mkdir(parents=True)
    base = getattr(sys, "_base_executable", None)
    if not isinstance(base, str) or not os.path.isfile(base):
        base = sys.executable
    venv_dir = root / "venv"
    made = _run([base, "-m", "venv", "--without-pip", venv_dir], root, _clean_env(root))
    if made.returncode != 0:
        pytest.skip(f"cannot create a virtual environment here: {made.stderr.strip()}")
    bin_dir = venv_dir / "bin"
    python = bin_dir / "python"
    site = Path(_ok(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()"
                          "['purelib'])"], root, _clean_env(root))).stdout.strip())
    deps = root / "deps"
    _link_dependencies(_closure(roots), deps, bin_dir, python)
    # A plain path line: the folder joins sys.path, its own .pth files are not run.
    (site / "project-venv-deps.pth").write_text(f"{deps}\n", encoding="utf-8")
    return Venv(root, bin_dir, python, site, _clean_env(root, bin_dir))


def _pip(venv: Venv, *args: str) -> subprocess.CompletedProcess[str]:
    return _ok(_run([venv.python, "-m", "pip", *args], venv.root, venv.env, timeout=300))


def _install_tool(venv: Venv, wheel: Path, extras: str) -> None:
    spec = f"{wheel}[{extras}]" if extras else str(wheel)
    _pip(venv, "install", "--no-index", "--no-build-isolation", "--no-compile", spec)


def _files_shown(venv: Venv) -> list[str]:
    """`pip show -f nemo-rl-worker-contracts`: its Location and Files."""
    shown = _pip(venv, "show", "-f", PROJECT).stdout.splitlines()
    location = [line.split(":", 1)[1].strip() for line in shown if line.startswith("Location:")]
    assert location == [str(venv.site)], shown
    start = shown.index("Files:")
    files = [line.strip() for line in shown[start + 1:] if line.startswith(" ")]
    assert "nemo_rl_workers/__init__.py" in files and "contracts/__init__.py" in files, shown
    return files


def _nemo_rl_importable(venv: Venv) -> bool:
    code = "import importlib.util, sys; sys.exit(importlib.util.find_spec('nemo_rl') is None)"
    return _run([venv.python, "-c", code], venv.root, venv.env).returncode == 0


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout's wheel, built once from a copy (the build's scratch folders stay
    out of the checkout, and no stale build/ of it ends up in the wheel)."""
    root = tmp_path_factory.mktemp("wheel")
    copy = root / "checkout"
    shutil.copytree(REPO, copy, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", ".venv", ".venv313", ".venv-floor", "build", "dist", "*.egg-info", "__pycache__",
        "*_cache",
        ".hypothesis", ".nemo-rl-workers-cache", "results"))
    out = root / "dist"
    _ok(_run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
              "--no-index", "-q", "-w", out, copy], root, _clean_env(root), timeout=300))
    (built,) = out.glob("nemo_rl_worker_contracts-*.whl")
    return built


@dataclass(frozen=True)
class World:
    """A venv with the tool and the stand-in, and the folders the commands run from."""

    venv: Venv
    standin: Path
    elsewhere: Path
    mode: str
    extras: str

    @property
    def static(self) -> bool:
        return "static" in self.extras.split(",")

    @property
    def ci(self) -> bool:
        return "ci" in self.extras.split(",")

    def cwd(self, place: str) -> Path:
        return self.elsewhere if place == "elsewhere" else self.standin

    def path(self, place: str, relative: str) -> str:
        """A path argument: relative at the stand-in's root, absolute elsewhere."""
        return str(self.standin / relative) if place == "elsewhere" else relative

    def run(self, argv: Sequence[str | Path], place: str) -> subprocess.CompletedProcess[str]:
        done = _run(argv, self.cwd(place), self.venv.env)
        text = done.stdout + done.stderr
        assert not any(word in text for word in FAILED), f"{done.args}\n{text}"
        return done

    def cli(self, place: str, *args: str) -> subprocess.CompletedProcess[str]:
        if place == "script":
            return self.run([self.venv.python, "examples/run_tool.py", "cli", *args], place)
        return self.run([self.venv.bin / "nemo-rl-workers", *args], place)

    def pytest(self, place: str, runner: str, *args: str) -> subprocess.CompletedProcess[str]:
        if place == "script":
            return self.run([self.venv.python, "examples/run_tool.py", "pytest", *args], place)
        if runner == "python -m pytest":
            return self.run([self.venv.python, "-m", "pytest", *args], place)
        return self.run([self.venv.bin / "pytest", *args], place)


def _write_standin(root: Path) -> Path:
    for name, text in STANDIN.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


@pytest.fixture(scope="module", params=[
    ("editable", ""), ("pth", ""), ("editable", "static,ci"), ("pth", "static,ci")],
    ids=lambda p: f"{p[0]}-{p[1].replace(',', '+') or 'no-extra'}")
def world(request: pytest.FixtureRequest, wheel: Path,
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    mode, extras = request.param
    root = tmp_path_factory.mktemp(f"world-{mode}-{extras.replace(',', '-') or 'none'}")
    extra_list = [e for e in extras.split(",") if e]
    # With `static`, vllm-stubs too, as the light install does (`pip install '.[static]'
    # ./stubs`); it is its own distribution (stubs/), linked from the project venv.
    stubs = [Requirement("vllm-stubs")] if "static" in extra_list else []
    venv = _make_venv(root / "env", [*_wheel_requirements(wheel, extra_list),
                                     *map(Requirement, TOOLING), *stubs])
    assert not _nemo_rl_importable(venv), (
        "nemo_rl is importable in the throwaway venv before anything is installed: the "
        "project venv's runtime leaks in, the test would prove nothing")
    _install_tool(venv, wheel, extras)
    assert not _nemo_rl_importable(venv), "installing the tool made `nemo_rl` importable"
    standin = _write_standin(root / "fork")
    if mode == "editable":
        _pip(venv, "install", "--no-index", "--no-build-isolation", "--no-deps", "--no-compile",
             "-e", str(standin))
    else:
        (venv.site / "fork_nemo_rl.pth").write_text(f"{standin}\n", encoding="utf-8")
    elsewhere = root / "elsewhere"
    elsewhere.mkdir()
    yield World(venv, standin, elsewhere, mode, extras)


# ------------------------------------------------------------------ the tests


def test_the_wheel_ships_no_nemo_rl(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        tops = {name.split("/", 1)[0] for name in archive.namelist()}
    # Besides the two packages, the runtime guard's start-up line (it imports nothing
    # unless NEMO_RL_WORKERS_GUARD is set; test_the_guard_line_works_from_the_wheel).
    assert {t for t in tops if not t.endswith(".dist-info")} == {
        "contracts", "nemo_rl_workers", "nemo_rl_workers_guard.pth"}


ARMED = ("import sys; print(sorted(m for m in sys.modules if m.split('.')[0] in "
         "('nemo_rl_workers', 'nemo_rl', 'wrapt') and m.count('.') < 3))")
# Importing the stand-in's worker groups (what upstream's drivers do) runs the hooks.
HOOKED = ("import nemo_rl.distributed.worker_groups, sys; "
          "print('nemo_rl_workers.guard.hooks' in sys.modules, 'wrapt' in sys.modules)")


def test_the_guard_line_works_from_the_wheel(world: World) -> None:
    """Installed from the wheel, the `.pth` line imports nothing unarmed; armed, nothing
    but its start-up module until the program imports upstream's worker groups."""
    unarmed = _ok(world.run([world.venv.python, "-c", ARMED], "elsewhere"))
    assert unarmed.stdout.strip() == "[]"
    env = {**world.venv.env, "NEMO_RL_WORKERS_GUARD": "1"}
    armed = _ok(_run([world.venv.python, "-c", ARMED], world.standin, env))
    assert "'nemo_rl_workers.guard.startup'" in armed.stdout
    assert "'nemo_rl'" not in armed.stdout and "'wrapt'" not in armed.stdout
    package = world.standin / "nemo_rl" / "distributed"
    if (package / "worker_groups.py").is_file():
        hooked = _ok(_run([world.venv.python, "-c", HOOKED], world.standin, env))
        assert hooked.stdout.split() == ["True", "True"]


def test_pip_show_lists_no_nemo_rl_file(world: World) -> None:
    files = _files_shown(world.venv)
    assert not [f for f in files if f.startswith("nemo_rl/")]


@pytest.mark.parametrize("extras", ["static", "ci"])
def test_each_extra_alone_installs_without_nemo_rl(wheel: Path, extras: str,
                                                   tmp_path: Path) -> None:
    """The two extras alone (the world fixture covers none and both)."""
    venv = _make_venv(tmp_path / "env", [*_wheel_requirements(wheel, [extras]),
                                         *map(Requirement, TOOLING)])
    _install_tool(venv, wheel, extras)
    assert not [f for f in _files_shown(venv) if f.startswith("nemo_rl/")]
    assert not _nemo_rl_importable(venv)
    help_ = _ok(_run([venv.bin / "nemo-rl-workers", "--help"], tmp_path, venv.env))
    assert help_.stdout.startswith("usage: nemo-rl-workers")


@pytest.mark.parametrize("place", PLACES)
def test_import_nemo_rl_is_the_standins(world: World, place: str) -> None:
    if place == "script":
        done = world.run([world.venv.python, "examples/run_tool.py", "where"], place)
    else:
        done = world.run([world.venv.python, "-c", WHERE], place)
    where = json.loads(_ok(done).stdout)
    assert os.path.realpath(where["nemo_rl"]) == os.path.realpath(
        world.standin / "nemo_rl" / "__init__.py")
    assert where["standin"] is True
    # The tool is the installed wheel, never this checkout.
    assert os.path.realpath(where["tool"]) == os.path.realpath(
        world.venv.site / "nemo_rl_workers" / "__init__.py")


# A script runs pytest in its own process (pytest.main).
@pytest.mark.parametrize(("place", "runner"), [
    ("root", "python -m pytest"), ("root", "pytest"), ("elsewhere", "python -m pytest"),
    ("elsewhere", "pytest"), ("script", "pytest.main")])
def test_the_standins_own_tests_pass(world: World, place: str, runner: str) -> None:
    done = _ok(world.pytest(place, runner, world.path(place, "tests"), "-q",
                            "-p", "no:cacheprovider"))
    assert "1 passed" in done.stdout


@pytest.mark.parametrize("place", PLACES)
def test_cli_help(world: World, place: str) -> None:
    done = _ok(world.cli(place, "--help"))
    assert done.stdout.startswith("usage: nemo-rl-workers")
    assert "audit" in done.stdout


def test_python_dash_m_help(world: World) -> None:
    done = _ok(world.run([world.venv.python, "-m", "nemo_rl_workers", "--help"], "elsewhere"))
    assert done.stdout.startswith("usage: nemo-rl-workers")


@pytest.mark.parametrize("place", PLACES)
def test_check_a_good_config(world: World, place: str) -> None:
    config = world.path(place, CONFIG)
    done = _ok(world.cli(place, "check", "-v", "--no-verify", config))
    lines = done.stdout.splitlines()
    # Judged against the stand-in, the NeMo-RL of this environment and of the config.
    assert lines[0].startswith("NeMo-RL: ") and "(dtensor_cfg schema with _v2; " in lines[0]
    # The tree's own schema is current: said once, under the header.
    assert lines[1].startswith("skipped: outdated-key rules: this NeMo-RL reads dtensor_cfg")
    assert lines[2] == config and lines[-1].strip() == "ok", done.stdout
    assert POLICY_V2 in done.stdout, done.stdout
    assert done.stderr == ""


@pytest.mark.parametrize("place", PLACES)
def test_check_verifies_against_the_standin(world: World, place: str) -> None:
    """With verification, the classes the stand-in starts are judged against what its own
    drivers call on them (read from source): its Policy calls `train`, which they have.
    The tool ships no `nemo_rl` to fall back on."""
    done = world.cli(place, "check", "-v", world.path(place, CONFIG))  # -v: the table
    assert (done.returncode, done.stderr) == (0, ""), done.stdout + done.stderr
    assert POLICY_V2 in done.stdout and "audit:" not in done.stdout, done.stdout


def test_check_sarif_needs_the_ci_extra(world: World) -> None:
    done = world.cli("root", "check", "--no-verify", "--output-format", "sarif", CONFIG)
    if world.ci:
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["version"] == "2.1.0"
    else:
        # Without the `ci` extra the format is unusable input: one line, exit 2.
        assert (done.returncode, done.stdout) == (2, ""), done.stdout + done.stderr
        (line,) = done.stderr.splitlines()
        assert line.startswith("nemo-rl-workers: ")


@pytest.mark.parametrize("place", PLACES)
def test_audit_the_standin(world: World, place: str) -> None:
    tree = str(world.standin) if place == "elsewhere" else "."
    done = world.cli(place, "audit", "--nemo-rl", tree, "--no-cache")
    # The stand-in's drivers call wake_up, train and generate, which its workers have.
    assert done.returncode == 0, done.stdout + done.stderr
    if world.static:
        assert done.stderr == ""
    else:
        # No vllm-stubs installed: a one-line note, not a failure.
        (note,) = done.stderr.splitlines()
        assert note.startswith("nemo-rl-workers: audit: vLLM's extension rule not applied: "
                               "no vllm-stubs"), note
    assert done.stdout.splitlines()[-1] == (
        "audit: 3 drivers, 8 worker classes, 3 dispatch call sites (3 resolved): no findings")


@pytest.mark.parametrize("place", PLACES)
def test_verify_static_a_standin_class(world: World, place: str) -> None:
    # The classes are written to the reference's contract, not to the stand-in's (whose
    # own Protocols `verify` judges by default, issue 43): --reference asks for it.
    good = world.cli(place, "verify", GOOD, "--protocol", "PolicyWorker", "--static",
                     "--no-cache", "--reference")
    plain = world.cli(place, "verify", PLAIN, "--protocol", "PolicyWorker", "--static",
                      "--no-cache", "--reference")
    if not world.static:
        # No `static` extra: no pyrefly, and the command says so (exit 2, one line).
        missing = ("nemo-rl-workers: pyrefly is not installed in this environment "
                   "(pip install pyrefly); --checker chooses another\n")
        for done in (good, plain):
            assert (done.returncode, done.stdout, done.stderr) == (2, "", missing)
        return
    assert (good.returncode, good.stderr) == (0, ""), good.stdout + good.stderr
    assert good.stdout.splitlines()[0] == f"{GOOD} implements PolicyWorker"
    assert (plain.returncode, plain.stderr) == (1, ""), plain.stdout + plain.stderr
    members = {line.split(f"{PLAIN} does not implement PolicyWorker.", 1)[1].split(":")[0]
               for line in plain.stdout.splitlines() if not line.startswith("skipped: ")}
    assert members == {"get_logprobs", "is_alive", "load_checkpoint", "save_checkpoint",
                       "shutdown", "train"}


@pytest.mark.parametrize("place", PLACES)
def test_pytest_plugin_checks_the_config(world: World, place: str) -> None:
    done = _ok(world.pytest(place, "pytest", "--nemo-rl-workers", world.path(place, CONFIG),
                            "-p", "no:cacheprovider"))
    assert "1 passed" in done.stdout, done.stdout
