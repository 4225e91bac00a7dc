"""A light install (core dependencies plus the `static` extra: no torch, Ray, ModelOpt
or vLLM) runs resolve, check --no-verify, check --static, verify --static and migrate.

The virtualenv is built from this checkout's wheel and vllm-stubs' wheel; the
dependencies come from pip's cache (`pip wheel`, then `--no-index`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "ray", "vllm", "modelopt", "transformers", "megatron")
EXAMPLES = sorted(str(p.relative_to(REPO)) for p in (REPO / "examples" / "configs").glob("*.yaml"))
AUTOMODEL = "nemo_rl.models.policy.workers.automodel_policy_worker.AutomodelPolicyWorker"
QUANT_VLLM = "nemo_rl.modelopt.models.generation.vllm_quant_worker.VllmQuantGenerationWorker"


def _pip(python: Path | str, *args: str, cwd: Path = REPO) -> None:
    # Without PYTHONPATH: a checkout on it (with an .egg-info) would count as installed,
    # and pip would install neither package into the light venv.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [str(python), "-m", "pip", "--disable-pip-version-check", "-q", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=900, check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture(scope="module")
def light(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv holding the project without any heavy dependency."""
    root = tmp_path_factory.mktemp("light")
    wheels = root / "wheels"
    # The copies keep the build's scratch folders out of this checkout.
    for name, source in (("project", REPO), ("stubs", REPO / "stubs")):
        copy = root / name
        shutil.copytree(source, copy, ignore=shutil.ignore_patterns(
            ".venv", ".venv313", ".venv-floor", ".git", "*_cache", "build", "*.egg-info",
            "tests", "bench", "docs"))
        _pip(sys.executable, "wheel", "-w", str(wheels), f"{copy}[static]", cwd=root)
    # The NeMo-RL whose classes the static path judges: the reference runtime's own wheel
    # (the tool's wheel has no `nemo_rl`), as source only, without its heavy dependencies.
    runtime = root / "runtime"
    shutil.copytree(REPO / "runtime", runtime, ignore=shutil.ignore_patterns(
        "*_cache", "build", "*.egg-info", "__pycache__"))
    _pip(sys.executable, "wheel", "--no-deps", "-w", str(wheels), str(runtime), cwd=root)
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    _pip(python, "install", "--no-index", "--find-links", str(wheels),
         "nemo-rl-worker-contracts[static]", "vllm-stubs", cwd=root)
    _pip(python, "install", "--no-index", "--no-deps", "--find-links", str(wheels),
         "nemo-rl-reference-runtime", cwd=root)
    return venv


def _run(venv: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`nemo-rl-workers ARGS` in the light venv; prints the heavy modules it imported."""
    code = (
        "import sys\n"
        "from nemo_rl_workers.commands.cli import main\n"
        f"code = main({list(args)!r})\n"
        f"heavy = sorted({{m.split('.')[0] for m in sys.modules}} & {set(HEAVY)!r})\n"
        "print('HEAVY=' + ','.join(heavy))\n"
        "raise SystemExit(code)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["NO_COLOR"] = "1"
    return subprocess.run([str(venv / "bin" / "python"), "-c", code], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def _heavy(done: subprocess.CompletedProcess[str]) -> str:
    return done.stdout.rsplit("HEAVY=", 1)[1].strip()


@pytest.mark.slow
def test_the_light_install_holds_nothing_heavy(light: Path) -> None:
    python = str(light / "bin" / "python")
    for name in HEAVY:
        done = subprocess.run([python, "-c", f"import {name}"], capture_output=True, timeout=60,
                              check=False)
        assert done.returncode != 0, f"{name} is importable in the light install"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (("resolve", "examples/configs/grpo_tiny_int8.yaml"), 0, "AutomodelQuantPolicyWorker"),
        (("check", "--no-verify", *EXAMPLES), 1, "quant_cfg requires worker_extension_cls_fqn="),
        (("check", "--static", *EXAMPLES), 1, "quant_cfg requires worker_extension_cls_fqn="),
        (("check", "--static", "--checker", "mypy", "examples/configs/grpo_tiny.yaml"), 0, "ok"),
        (("verify", AUTOMODEL, "--protocol", "PolicyWorker", "--static"), 0, "implements"),
        (("verify", QUANT_VLLM, "--protocol", "QuantGenerationWorker", "--static"), 0,
         "implements"),
        (("verify", AUTOMODEL, "--protocol", "QuantPolicyWorker", "--static"), 1,
         "QuantPolicyWorker.get_quantizer_stats"),
        (("migrate", "--check", "examples/configs"), 0, ""),
        (("check", "--static", "--output-format", "github", *EXAMPLES), 1,
         "::error file=examples/configs/mismatched_quant.yaml,line=6,title=R5::"),
        (("migrate", "--check", "--output-format", "github", "docs/examples"), 1,
         "::error file=docs/examples/outdated_grpo.yaml,line=5,title=migrate::"),
    ],
    ids=["resolve", "check-no-verify", "check-static", "check-static-mypy", "verify-static",
         "verify-static-quant", "verify-static-broken", "migrate-check", "check-static-github",
         "migrate-check-github"],
)
def test_each_light_command_runs_and_imports_nothing_heavy(
    light: Path, args: tuple[str, ...], code: int, says: str
) -> None:
    done = _run(light, *args)
    assert done.returncode == code, done.stdout + done.stderr
    assert says in done.stdout
    assert "Traceback" not in done.stderr
    assert _heavy(done) == ""


@pytest.mark.slow
def test_the_runtime_verifier_says_what_is_missing(light: Path) -> None:
    """Without --static, `verify` must import the class: one line, exit 2, no traceback."""
    done = _run(light, "verify", AUTOMODEL, "--protocol", "PolicyWorker")
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert "torch" in line


@pytest.mark.slow
@pytest.mark.parametrize(("fmt", "package"), [("sarif", "pydantic-sarif"),
                                               ("junit", "junitparser")])
def test_sarif_and_junit_need_the_ci_extra(light: Path, fmt: str, package: str) -> None:
    """The light install lacks the `ci` extra: one line naming it, exit 2, nothing run."""
    done = _run(light, "check", "--static", "--output-format", fmt, *EXAMPLES)
    assert done.returncode == 2
    assert done.stderr == (
        f"nemo-rl-workers: --output-format {fmt} needs the {package} package, which is not "
        "installed here (pip install 'nemo-rl-worker-contracts[ci]')\n")
    assert done.stdout.startswith("HEAVY=")
