"""Every command and snippet of README.md, the guide and the template's README runs here.

See `snippets.py` for the conventions. The README's first block (`make run`, `make test`)
is the project's own entry point: CI runs it (`.ci/run`), and running `make test` from
inside the test suite would recurse, so it is only checked to be exactly those two commands.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.corpus import NEMO_RL
from tests.docs.snippets import (
    REPO,
    TIMEOUT_S,
    Block,
    commands,
    read_blocks,
    run_hook,
    shell_env,
)

GUIDE = REPO / "docs" / "guides" / "worker-extensions.md"
README = REPO / "README.md"
TEMPLATE_README = REPO / "research" / "template_project" / "README.md"
DOCS = (README, GUIDE, TEMPLATE_README)
HOOKS = REPO / ".pre-commit-hooks.yaml"
# Blocks marked `<!-- test: corpus -->` run on upstream's tree beside the repository.
CORPUS = NEMO_RL.resolve()
CHECKED_LANGS = {"sh", "python", "yaml", "toml", "ini"}  # ini: test_ci_section.py
YAML_KINDS = ("config", "pre-commit-config", "github-workflow",  # each has a test below
              "github-annotations", "gitlab-ci",  # these two in test_ci_section.py
              "nemo-rl-workflow")  # test_ci_templates.py
# Commands for another folder than this checkout: run there by test_ci_templates.py.
ELSEWHERE = ("nemo-rl-checkout", "tool-release")


def _all_blocks() -> list[Block]:
    found: list[Block] = []
    for doc in DOCS:
        blocks = read_blocks(doc)
        found.extend(blocks[1:] if doc == README else blocks)
    return found


BLOCKS = _all_blocks()


def _of(lang: str, directive: str | None = None) -> list[Any]:
    chosen = [b for b in BLOCKS if b.lang == lang
              and (directive is None or b.directive(directive) is not None)
              and not any(b.directive(d) is not None for d in ELSEWHERE)]
    return [pytest.param(b, id=b.name, marks=[pytest.mark.slow] if _slow(b, lang) else [])
            for b in chosen]


def _slow(block: Any, lang: str) -> bool:
    """Commands import torch or start workers: several seconds each on this machine; so
    does a block run on the Ray cluster (worker-extensions.md's template: 81 s, busy cores)."""
    return lang in ("sh", "yaml") or block.directive("ray") is not None


def test_readme_starts_with_the_two_make_commands() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    first = read_blocks(README)[0]
    assert lines[0] == "# nemo-rl worker contracts"
    assert first.lang == "sh"
    assert [c.text.split("#")[0].strip() for c in commands(first)] == ["make run", "make test"]


def test_every_block_is_one_the_tests_run() -> None:
    """A new snippet in an unknown language (or a bare YAML one) would go unchecked."""
    unchecked = [b.name for b in BLOCKS if b.lang not in CHECKED_LANGS]
    bare_yaml = [b.name for b in BLOCKS if b.lang == "yaml"
                 and not any(b.directive(d) is not None for d in YAML_KINDS)]
    assert (unchecked, bare_yaml) == ([], [])
    # Each document has commands, and the guide shows real output next to them.
    assert all(any(b.doc == doc and b.lang == "sh" for b in BLOCKS) for doc in DOCS)
    assert sum(1 for b in BLOCKS if b.doc == GUIDE and b.output is not None) >= 8


def session_ray_address(request: pytest.FixtureRequest) -> str:
    request.getfixturevalue("ray_cluster")
    import ray

    address: str = ray.get_runtime_context().gcs_address
    return address


def assert_output(block: Block, actual: str) -> None:
    shown = block.output
    assert shown is not None
    if shown.lang == "json":
        assert json.loads(actual) == json.loads(shown.text), block.name
    else:
        assert actual.rstrip("\n") == shown.text.rstrip("\n"), block.name


@pytest.mark.parametrize("block", _of("sh"))
def test_shell_block(block: Block, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    if block.directive("corpus") is not None and not (CORPUS / "nemo_rl").is_dir():
        pytest.skip(f"corpus absent: {CORPUS}")
    address = session_ray_address(request) if block.directive("ray") is not None else None
    env = shell_env(tmp_path, address)
    found = commands(block)
    assert found, f"{block.name}: no command"
    stdout = ""
    for command in found:
        done = subprocess.run(["bash", "-c", command.text], cwd=REPO, env=env, text=True,
                              capture_output=True, timeout=TIMEOUT_S, check=False)
        assert done.returncode == command.exit_code, (
            f"{block.name}: `{command.text}` exited {done.returncode}, the document says "
            f"{command.exit_code}\n{done.stdout}\n{done.stderr}"
        )
        if command.exit_code == 2:  # unusable input: one line on stderr, no traceback
            assert len(done.stderr.strip().splitlines()) == 1, done.stderr
        stdout = done.stdout
    if block.output is not None:
        assert_output(block, stdout)


@pytest.mark.parametrize("block", _of("python"))
def test_python_block(block: Block, request: pytest.FixtureRequest) -> None:
    if block.directive("ray") is not None:
        request.getfixturevalue("ray_cluster")
    namespace: dict[str, object] = {"__name__": "__doc_snippet__"}
    captured = io.StringIO()
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        with contextlib.redirect_stdout(captured):
            # Running the snippet is the test.
            exec(compile(block.text, block.name, "exec"), namespace)
    finally:
        os.chdir(cwd)
    if block.output is not None:
        assert_output(block, captured.getvalue())


@pytest.mark.parametrize("block", _of("yaml", "config"))
def test_yaml_config_block(block: Block, tmp_path: Path) -> None:
    """A config snippet is a whole config; it passes the driver-side rules (or fails as said)."""
    from nemo_rl_workers.commands.cli import main

    rest = block.directive("config") or ""
    match = re.fullmatch(r"(?:exits (\d+))?", rest)
    assert match is not None, f"{block.name}: unknown directive {rest!r}"
    path = tmp_path / "snippet.yaml"
    path.write_text(block.text, encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    code = main(["check", "--no-verify", str(path)], out, err)
    assert code == int(match[1] or 0), f"{block.name}\n{out.getvalue()}{err.getvalue()}"


def hook_ids() -> set[str]:
    hooks: list[dict[str, Any]] = yaml.safe_load(HOOKS.read_text(encoding="utf-8"))
    return {h["id"] for h in hooks}


@pytest.mark.parametrize("block", _of("yaml", "pre-commit-config"))
def test_pre_commit_config_block(block: Block, tmp_path: Path) -> None:
    """Published hooks exist; a local hook runs as pre-commit would run it."""
    config: dict[str, Any] = yaml.safe_load(block.text)
    for repo in config["repos"]:
        if repo["repo"] != "local":
            assert {h["id"] for h in repo["hooks"]} <= hook_ids()
            for hook in repo["hooks"]:
                if "files" in hook:
                    re.compile(hook["files"])
            continue
        for hook in repo["hooks"]:
            assert hook["language"] == "system"
            run_hook(hook, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("block", _of("yaml", "github-workflow"))
def test_github_workflow_block(block: Block, tmp_path: Path) -> None:
    """Every `run:` step but Install runs here; Install names real extras and pins."""
    workflow: dict[Any, Any] = yaml.safe_load(block.text)
    # YAML 1.1 reads the key `on` as the boolean true.
    assert workflow.get("on", workflow.get(True)) == ["push", "pull_request"]
    (job,) = workflow["jobs"].values()
    steps: list[dict[str, Any]] = job["steps"]
    assert steps[0]["uses"].startswith("actions/checkout@")
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    extras: dict[str, list[str]] = pyproject["project"]["optional-dependencies"]
    env = shell_env(tmp_path)
    ran = 0
    for step in steps:
        if "run" not in step:
            continue
        lines = [ln for ln in step["run"].splitlines() if ln.strip()]
        if step.get("name") == "Install":
            text = step["run"]
            named = re.search(r"-e '\.\[([\w,]+)\]'", text)
            assert named is not None and set(named[1].split(",")) <= set(extras)
            if block.directive("github-workflow") == "light":
                # No heavy extra, no torch; the vLLM stubs come from this checkout.
                assert not {"runtime", "vllm"} & set(named[1].split(","))
                assert "torch" not in text and "./stubs" in text
            else:
                # The extra is a range (what NeMo-RL locks must fit); the CPU build this
                # machine's CI installs is pinned in the constraints file, as in the step.
                pins = (REPO / "constraints" / "ci.txt").read_text(encoding="utf-8")
                assert any(r.startswith("torch") for r in extras["runtime"])
                assert "torch==2.13.0" in pins.splitlines() and "torch==2.13.0" in text
            assert "research/template_project" in text
            continue
        for line in lines:
            done = subprocess.run(["bash", "-c", line], cwd=REPO, env=env, text=True,
                                  capture_output=True, timeout=TIMEOUT_S, check=False)
            assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
            ran += 1
    assert ran >= 5


@pytest.mark.parametrize("block", _of("toml"))
def test_toml_block_is_what_the_template_ships(block: Block) -> None:
    snippet = tomllib.loads(block.text)
    shipped = tomllib.loads(
        (REPO / "research" / "template_project" / "pyproject.toml").read_text(encoding="utf-8")
    )
    assert _contains(shipped, snippet), block.name


def _contains(big: object, small: object) -> bool:
    if isinstance(small, dict):
        return isinstance(big, dict) and all(
            k in big and _contains(big[k], v) for k, v in small.items()
        )
    return big == small
