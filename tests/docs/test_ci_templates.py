"""The guide's CI templates for a NeMo-RL checkout, read from the guide and run on a copy of
each corpus tree made a git repository: the maintainers' release tag (`tool-release`), the
adoption commands (`nemo-rl-checkout`), the pre-commit config (`pre-commit-config
nemo-rl`) and the GitHub Actions job (`nemo-rl-workflow`).

- The tool comes from a copy of this checkout made a git repository with a bare `origin`
  and tagged by the guide's own release commands. The templates' GitHub URL is replaced by
  that remote, and nothing else: the network here reaches only package registries.
- pre-commit comes from PyPI into a throwaway venv, on this machine's Python. 3.13 adds
  nothing there: the hooks read the tree as source, the tool supports Python >= 3.11, and
  pre-commit builds the hooks' environments with the Python it runs on.
- The Actions job runs under Python 3.13 (`shared/tools/py313`, a Debian 13 root), as its
  `python-version` says; a venv stands in for actions/setup-python. Its Install step (the
  tool alone, from the git URL), the adoption commands and every other `run:` step run
  there, each with `bash -e` as Actions runs it, stdout and stderr in one stream as its log.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

import nemo_rl_workers
from tests.corpus import NEMO_RL, NEMO_RL_2025_09
from tests.docs.snippets import REPO, TIMEOUT_S, Block, commands, read_blocks, shell_env

GUIDE = REPO / "docs" / "guides" / "worker-extensions.md"
SHARED = REPO.parent / "shared"
CORPORA = {"nemo-rl": NEMO_RL, "nemo-rl-2025-09": NEMO_RL_2025_09}
# The tree the guide's pasted output comes from.
SHOWN = "nemo-rl"
PY313 = SHARED / "tools" / "py313"
PUBLISHED = "https://github.com/YOUR-ORG/nemo-rl-worker-contracts"
HOOK_IDS = {"nemo-rl-check-config", "nemo-rl-migrate-check", "nemo-rl-audit"}
TAG = f"v{nemo_rl_workers.__version__}"
# What a clone of this repository does not hold: build outputs, caches, environments.
NOT_SOURCE = shutil.ignore_patterns(
    ".git", ".venv", ".venv313", ".venv-floor", "__pycache__", "*.egg-info", ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache", ".nemo-rl-workers-cache", "build", "results")
# Fixed, so that a tree's commit (which the commands name) is the same in every run.
IDENTITY = {"GIT_AUTHOR_NAME": "ci", "GIT_AUTHOR_EMAIL": "ci@example.com",
            "GIT_COMMITTER_NAME": "ci", "GIT_COMMITTER_EMAIL": "ci@example.com",
            "GIT_AUTHOR_DATE": "2026-08-22T00:00:00Z", "GIT_COMMITTER_DATE": "2026-08-22T00:00:00Z"}


def _block(marked: str) -> Block:
    """The one block of the guide marked `<!-- test: MARKED -->`."""
    head, _, rest = marked.partition(" ")
    found = [b for b in read_blocks(GUIDE) if b.directive(head) == rest]
    assert len(found) == 1, f"the guide needs one block marked `<!-- test: {marked} -->`"
    return found[0]


def _workflow() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    workflow: dict[str, Any] = yaml.safe_load(_block("nemo-rl-workflow").text)
    (job,) = workflow["jobs"].values()
    return job, list(job["steps"])


def _install(steps: list[dict[str, Any]]) -> str:
    (step,) = [s for s in steps if s.get("name") == "Install"]
    text: str = step["run"]
    return text


def _published(text: str, remote: Path) -> str:
    """The template with this repository fetched from `remote` instead of GitHub."""
    assert PUBLISHED in text
    return text.replace(f"git+{PUBLISHED}@", f"git+file://{remote}@").replace(
        PUBLISHED, str(remote))


def test_the_templates_pin_the_release_tag_and_install_only_the_tool() -> None:
    """What works in a NeMo-RL checkout: a tag the release commands create, Python 3.13,
    the tool from this repository's git URL (no torch, no extra beyond `static`), and the
    checkout's own configs and audit, against the baselines the adoption writes."""
    release = [c.text for c in commands(_block("tool-release"))]
    assert release == [f'git tag -a {TAG} -m "nemo-rl-worker-contracts {TAG[1:]}"',
                       f"git push origin {TAG}"]
    (repo,) = yaml.safe_load(_block("pre-commit-config nemo-rl").text)["repos"]
    assert (repo["repo"], repo["rev"]) == (PUBLISHED, TAG)
    hooks = {h["id"]: h for h in repo["hooks"]}
    shipped = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert set(hooks) == HOOK_IDS == {h["id"] for h in shipped}
    job, steps = _workflow()
    (python,) = [s["with"]["python-version"] for s in steps
                 if s.get("uses", "").startswith("actions/setup-python@")]
    assert python == "3.13"
    install = _install(steps)
    wanted = re.findall(r'^python -m pip install "([^"]+)"$', install, re.M)
    assert len(wanted) == len(install.strip().splitlines()), install
    for requirement in wanted:
        name, _, url = requirement.partition(" @ ")
        assert name in ("nemo-rl-worker-contracts", "nemo-rl-worker-contracts[static]",
                        "vllm-stubs"), requirement
        subdirectory = "#subdirectory=stubs" if name == "vllm-stubs" else ""
        assert url == f"git+{PUBLISHED}@{TAG}{subdirectory}"
    assert 'name = "vllm-stubs"' in (REPO / "stubs" / "pyproject.toml").read_text(
        encoding="utf-8")
    for foreign in ("torch", " -e ", "runtime", "research/template_project", "./stubs"):
        assert foreign not in install
    adoption = " ".join(c.text for c in commands(_block("nemo-rl-checkout")))
    run = [s["run"] for s in steps if "run" in s and s.get("name") != "Install"]
    assert any(r.startswith("nemo-rl-workers migrate --check examples/configs") for r in run)
    baselines = {}
    for command, file in (("check", "check-baseline.json"), ("audit", "audit-baseline.json")):
        (step,) = [r for r in run if r.startswith(f"nemo-rl-workers {command} ")]
        assert f"--baseline {file}" in step and "--nemo-rl ." in step
        assert f"nemo-rl-workers {command} " in adoption and f"--write-baseline {file}" in adoption
        baselines[command] = file
    assert "examples/configs" in [r for r in run if " check " in r][0]
    assert hooks["nemo-rl-check-config"]["args"] == ["--baseline", baselines["check"]]
    assert hooks["nemo-rl-audit"]["args"] == ["--baseline", baselines["audit"]]
    for hook in ("nemo-rl-check-config", "nemo-rl-migrate-check"):
        assert re.search(hooks[hook]["files"], "examples/configs/recipes/llm/a.yaml")
    assert job["runs-on"] == "ubuntu-latest"


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, env={**shell_env(cwd), **IDENTITY}, check=True,
                   capture_output=True, timeout=TIMEOUT_S)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder for everything a test runs on: the 3.13 root sees only the parent of
    the folder it runs in (the NeMo-RL copy), so the tool's remote lives beside it."""
    return tmp_path_factory.mktemp("ci-templates")


@pytest.fixture(scope="module")
def remote(base: Path) -> Path:
    """A bare `origin` holding this checkout (its working tree, as a commit) and the tag
    the guide's release commands create in a clone of it."""
    clone, origin = base / "nemo-rl-worker-contracts", base / "nemo-rl-worker-contracts.git"
    shutil.copytree(REPO, clone, ignore=NOT_SOURCE, symlinks=True)
    _git("init", "-q", "--initial-branch=main", "--bare", str(origin), cwd=base)
    _git("init", "-q", "--initial-branch=main", cwd=clone)
    _git("add", "-A", cwd=clone)
    _git("commit", "-q", "-m", "this checkout", cwd=clone)
    _git("remote", "add", "origin", str(origin), cwd=clone)
    _git("push", "-q", "origin", "HEAD:refs/heads/main", cwd=clone)
    for command in commands(_block("tool-release")):
        words = shlex.split(command.text)
        assert words[0] == "git", command.text
        _git(*words[1:], cwd=clone)
    return origin


def _checkout(corpus: str, dest: Path) -> Path:
    if not (CORPORA[corpus] / "nemo_rl").is_dir():
        pytest.skip(f"corpus absent: {CORPORA[corpus]}")
    shutil.copytree(CORPORA[corpus], dest, ignore=shutil.ignore_patterns("__pycache__"))
    _git("init", "-q", cwd=dest)
    _git("add", "-A", cwd=dest)
    _git("commit", "-q", "-m", f"{corpus}, as the corpus holds it", cwd=dest)
    return dest


def _a_new_refused_recipe(tree: Path) -> str | None:
    """A copy, beside it, of a recipe the baseline records (its `defaults:` still resolve):
    a problem the baseline does not hold. None when the tree has no such recipe."""
    entries = json.loads((tree / "check-baseline.json").read_text(encoding="utf-8"))
    if not entries["findings"]:
        return None
    recipe = Path(entries["findings"][0]["recipe"])
    copy = recipe.with_name(f"copy_of_{recipe.name}")
    shutil.copyfile(tree / recipe, tree / copy)
    return copy.as_posix()


def _py313(tree: Path, script: str) -> subprocess.CompletedProcess[str]:
    """`script` with `bash -e` in the 3.13 root, in `tree`; stdout and stderr in one
    stream, in the order they were written (as a job's log has them)."""
    return subprocess.run([str(PY313), "run", "bash", "-e", "-c", script], cwd=tree,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=TIMEOUT_S, check=False)


@pytest.mark.slow
@pytest.mark.parametrize("corpus", CORPORA)
def test_the_actions_job_passes_on_a_nemo_rl_checkout_and_fails_a_new_problem(
    corpus: str, base: Path, remote: Path
) -> None:
    if not PY313.is_file():
        pytest.skip(f"no Python 3.13 here: {PY313}")
    tree = _checkout(corpus, base / f"{corpus}-actions")
    _, steps = _workflow()
    venv = base / f"py313-{corpus}"
    path = f"export PATH={venv}/bin:$PATH\n"  # actions/setup-python's Python first
    done = _py313(tree, f"python3.13 -m venv {venv}\n{path}" + _published(_install(steps),
                                                                           remote))
    assert done.returncode == 0, done.stdout
    check = _py313(tree, path + "python -c 'import torch'")
    assert check.returncode == 1 and "No module named 'torch'" in check.stdout
    adopt = _block("nemo-rl-checkout")
    done = _py313(tree, path + "\n".join(c.text for c in commands(adopt)))
    assert done.returncode == 0, done.stdout
    if corpus == SHOWN:
        assert adopt.output is not None
        assert done.stdout == adopt.output.text, done.stdout
    printed = ""
    for step in steps:
        if "run" not in step or step.get("name") == "Install":
            continue
        done = _py313(tree, path + step["run"])
        assert done.returncode == 0, f"{step['name']}\n{done.stdout}"
        printed += done.stdout
    if corpus == SHOWN:
        shown = _block("nemo-rl-workflow").output
        assert shown is not None
        assert printed == shown.text, printed
    # The gate holds: a recipe NeMo-RL refuses, new, fails the step with one annotation
    # (at the file whose value it refuses: a recipe's `defaults:` parent, here).
    if _a_new_refused_recipe(tree) is None:
        return
    (step,) = [s for s in steps if s.get("run", "").startswith("nemo-rl-workers check ")]
    done = _py313(tree, path + step["run"])
    assert done.returncode == 1, done.stdout
    errors = [line for line in done.stdout.splitlines() if line.startswith("::error ")]
    assert len(errors) == 1 and "this NeMo-RL refuses the config" in errors[0], done.stdout


@pytest.fixture(scope="module")
def pre_commit(base: Path) -> Path:
    """pre-commit from PyPI, in a venv of its own."""
    venv = base / "pre-commit-venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=TIMEOUT_S)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "pre-commit"],
                   check=True, timeout=TIMEOUT_S, capture_output=True)
    return venv / "bin" / "pre-commit"


@pytest.mark.slow
@pytest.mark.parametrize("corpus", CORPORA)
def test_pre_commit_passes_on_a_nemo_rl_checkout_and_fails_a_new_problem(
    corpus: str, base: Path, remote: Path, pre_commit: Path
) -> None:
    tree = _checkout(corpus, base / f"{corpus}-pre-commit")
    env = shell_env(tree)
    for command in commands(_block("nemo-rl-checkout")):  # this checkout's tool
        done = subprocess.run(["bash", "-c", command.text], cwd=tree, env=env, text=True,
                              capture_output=True, timeout=TIMEOUT_S, check=False)
        assert done.returncode == 0, f"{command.text}\n{done.stdout}{done.stderr}"
    config = _published(_block("pre-commit-config nemo-rl").text, remote)
    (tree / ".pre-commit-config.yaml").write_text(config, encoding="utf-8")
    _git("add", ".pre-commit-config.yaml", cwd=tree)
    # The hooks' environments hold only what pre-commit installs there.
    hook_env = {k: v for k, v in env.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    hook_env["PRE_COMMIT_HOME"] = str(base / "pre-commit-home")

    def pre_commit_run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(pre_commit), "run", *args], cwd=tree, env=hook_env,
                              text=True, capture_output=True, timeout=2 * TIMEOUT_S,
                              check=False)

    done = pre_commit_run("--all-files")
    assert done.returncode == 0, done.stdout + done.stderr
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    for hook in hooks:
        assert re.search(rf"^{re.escape(hook['name'])}\.+Passed$", done.stdout, re.M), (
            done.stdout)
    new = _a_new_refused_recipe(tree)
    if new is None:
        return
    _git("add", new, cwd=tree)
    done = pre_commit_run("--files", new)
    assert done.returncode == 1, done.stdout + done.stderr
    check = next(h["name"] for h in hooks if h["id"] == "nemo-rl-check-config")
    assert re.search(rf"^{re.escape(check)}\.+Failed$", done.stdout, re.M), done.stdout
    # The recipe's one line, then its problem.
    assert re.search(rf"^{re.escape(new)}: \d+ problems?", done.stdout, re.M), done.stdout
    assert "this NeMo-RL refuses the config" in done.stdout
