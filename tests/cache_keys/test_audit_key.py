"""Every input of a cached `audit` is in its key (issue 43): a change to any of them is
answered as `--no-cache` answers it, never from the entry of what was there before.

The inputs the old key already covered (the tree, the baseline, the stubs, the arguments,
the tool's code) are tested in tests/formats/test_audit_formats.py; these are the ones it
did not: the sources under `--path`, a config EXTENSION's `defaults:` parents and the
environment variables it interpolates, the tree's vLLM pin, vLLM's extension rule."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from nemo_rl_workers.checks.vllm import vllm_extension_rule
from nemo_rl_workers.commands import audit as audit_cli
from tests.cache_keys.tree import (
    BROKEN_GENERATE,
    EXT,
    EXTENSION,
    GOOD_GENERATE,
    MIXIN,
    TREE,
    edit,
    write,
)
from tests.cli_run import run_cli as run


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The working folder: the tree (`nemo`), the extension package (`ext`), the cache."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    write(tmp_path / "nemo", TREE)
    write(tmp_path / "ext", EXT)
    return tmp_path


@pytest.fixture
def audits(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per audit really run (the real run_audit, counted)."""
    real = audit_cli.run_audit
    counted: list[int] = []

    def counting(*args: Any) -> int:
        counted.append(1)
        return real(*args)

    monkeypatch.setattr(audit_cli, "run_audit", counting)
    return counted


def audit(*extensions: str, cache: bool = True) -> tuple[int, str, str]:
    where = ("--cache-dir", "cache") if cache else ("--no-cache",)
    return run("audit", "--nemo-rl", "nemo", "--path", "ext", *where, *extensions)


def test_issue_43_an_extension_broken_under_path_is_reported_from_the_cache(
        here: Path, audits: list[int]) -> None:
    """The issue's reproduction: a clean run, `generate` broken in EXT, the cached rerun
    reports it; mended, clean again (and that answer is the first run's entry)."""
    clean = audit(EXTENSION)
    assert clean[0] == 0 and clean[1].endswith("no findings\n"), clean
    edit(here / "ext" / "myext" / "gen.py", GOOD_GENERATE, BROKEN_GENERATE)
    broken = audit(EXTENSION)
    assert broken == audit(EXTENSION, cache=False)
    assert broken[0] == 1 and "error[override-unknown-keyword]" in broken[1], broken
    assert "myext.gen.MyGenerationWorker.generate has no parameter greedy" in broken[1]
    edit(here / "ext" / "myext" / "gen.py", BROKEN_GENERATE, GOOD_GENERATE)
    assert audit(EXTENSION) == clean
    assert len(audits) == 3  # clean, broken, --no-cache; the mended run was the first's entry


def test_a_module_the_extension_only_inherits_from_is_in_the_key(
        here: Path, audits: list[int]) -> None:
    """Every file under --path, not only the named class's module: here its mixin's."""
    cls = "myext.gen.MixedGenerationWorker"
    clean = audit(cls)
    assert clean[0] == 0, clean
    edit(here / "ext" / MIXIN, GOOD_GENERATE, BROKEN_GENERATE)
    broken = audit(cls)
    assert broken == audit(cls, cache=False) and broken[0] == 1, broken
    assert "myext.mixin.GenerateMixin.generate has no parameter greedy" in broken[1]


def test_a_module_added_under_path_is_in_the_key(here: Path) -> None:
    """A class named on the command line that was not there, then is."""
    cls = "myext.late.LateWorker"
    missing = audit(cls)
    write(here / "ext", {"myext/late.py": '''
        from myext.gen import OtherGenerationWorker


        class LateWorker(OtherGenerationWorker):
            pass
        '''})
    found = audit(cls)
    assert found == audit(cls, cache=False) and found != missing
    assert found[0] == 1 and "error[override-unknown-keyword]" in found[1], found


def test_a_config_s_defaults_parent_is_in_the_key(here: Path) -> None:
    """A config EXTENSION names its classes through its `defaults:` chain."""
    write(here, {
        "configs/base.yaml": f'''
            policy:
              generation:
                worker_extension_cls_fqn: {EXTENSION}
            ''',
        "configs/run.yaml": '''
            defaults: base.yaml
            policy:
              model_name: tiny
            ''',
    })
    clean = audit("configs/run.yaml")
    assert clean[0] == 0, clean
    edit(here / "configs" / "base.yaml", EXTENSION, "myext.gen.OtherGenerationWorker")
    broken = audit("configs/run.yaml")
    assert broken == audit("configs/run.yaml", cache=False) and broken[0] == 1, broken
    assert "OtherGenerationWorker.generate has no parameter greedy" in broken[1]


def test_an_environment_variable_a_config_interpolates_is_in_the_key(
        here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(here, {"configs/env.yaml": '''
        policy:
          generation:
            worker_extension_cls_fqn: ${oc.env:MY_GENERATION_WORKER}
        '''})
    monkeypatch.setenv("MY_GENERATION_WORKER", EXTENSION)
    clean = audit("configs/env.yaml")
    assert clean[0] == 0, clean
    monkeypatch.setenv("MY_GENERATION_WORKER", "myext.gen.OtherGenerationWorker")
    broken = audit("configs/env.yaml")
    assert broken == audit("configs/env.yaml", cache=False) and broken[0] == 1, broken


def test_the_tree_s_vllm_pin_is_in_the_key(here: Path) -> None:
    """Which vLLM's rule judges the tree, and the line saying so, follow its pin."""
    pinned = audit(EXTENSION)
    assert pinned[0] == 0 and pinned[2] == "", pinned
    edit(here / "nemo" / "pyproject.toml", "vllm==0.33.0", "vllm==0.1.0")
    repinned = audit(EXTENSION)
    assert repinned == audit(EXTENSION, cache=False)
    assert "the tree pins vLLM 0.1.0, for which no vllm-stubs is installed" in repinned[2]


def test_vllm_s_extension_rule_is_in_the_key(
        here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The installed vllm-stubs' manifest (where vLLM's worker attributes are recorded):
    a copy of it stands for the installed one, and then records one more attribute."""
    installed = vllm_extension_rule.installed_manifests()
    if not installed:
        pytest.skip("no vllm-stubs installed")
    version, real = sorted(installed.items())[-1]
    manifest = here / "vllm-stubs" / "manifest.json"
    manifest.parent.mkdir()
    shutil.copyfile(real, manifest)
    monkeypatch.setattr(vllm_extension_rule, "installed_manifests",
                        lambda: {version: manifest})
    edit(here / "nemo" / "pyproject.toml", "vllm==0.33.0", f"vllm=={version}")
    before = audit(EXTENSION)
    assert before[0] == 0, before
    data = json.loads(manifest.read_text(encoding="utf-8"))
    for worker in data["extension_rule"]["workers"].values():
        owner = worker["names"][0]["owner"]
        worker["names"].append({"kind": "method", "line": 1, "name": "update_weights_from_ipc",
                                "owner": owner})
    manifest.write_text(json.dumps(data), encoding="utf-8")
    after = audit(EXTENSION)
    assert after == audit(EXTENSION, cache=False) and after[0] == 1, after
    assert "vllm-extension-clash" in after[1]
