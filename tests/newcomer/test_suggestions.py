"""'Did you mean ...?' for a misspelled worker FQN and a misspelled selection key."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nemo_rl_workers.model.keys import generation_key_problems, misspelled_key_problems
from tests.cli.test_cli import write
from tests.cli_run import run_cli as run

TEMPLATE_FQN = "template_project.workers.TemplateAutomodelPolicyWorker"

SECTION = """\
policy:
  {key}: {fqn}
  megatron_cfg:
    enabled: false
  automodel_cfg:
    enabled: true
"""


def _check(tmp_path: Path, key: str, fqn: str) -> tuple[int, dict[str, Any]]:
    path = write(tmp_path, "c.yaml", SECTION.format(key=key, fqn=fqn))
    code, out, _ = run("check", "--json", "--no-verify", path)
    return code, json.loads(out)


def test_a_near_miss_of_a_registered_class_names_it(tmp_path: Path) -> None:
    near_miss = TEMPLATE_FQN.replace("Policy", "Polcy")
    code, report = _check(tmp_path, "worker_extension_cls_fqn", near_miss)
    (problem,) = report["problems"]
    assert code == 1 and problem["rule"] == "R2" and problem["line"] == 2
    assert f"did you mean {TEMPLATE_FQN}? Otherwise register it" in problem["message"]
    # Nothing close: no guess, but where to look.
    _, report = _check(tmp_path, "worker_extension_cls_fqn", "elsewhere.Unrelated")
    (problem,) = report["problems"]
    assert "did you mean" not in problem["message"]
    assert problem["message"].endswith("(nemo-rl-workers list shows what is registered).")


def test_a_misspelled_selection_key_names_the_right_one(tmp_path: Path) -> None:
    code, report = _check(tmp_path, "worker_extention_cls_fqn", TEMPLATE_FQN)
    assert code == 1
    (problem,) = report["problems"]
    assert problem == {
        "path": "policy.worker_extention_cls_fqn",
        "expected": "policy.worker_extension_cls_fqn",
        "given": "policy.worker_extention_cls_fqn",
        "message": "policy.worker_extention_cls_fqn is not a key this section reads, so it "
        "would be silently ignored; did you mean policy.worker_extension_cls_fqn?",
        "rule": "key",
        "file": str(tmp_path / "c.yaml"),
        "line": 2,
        "inherited": False,
        "config_line": 2,
    }


def test_keys_below_the_section_and_in_generation() -> None:
    config = {"policy": {"automodel_cfg": {"enabled": True, "enabeld": True},
                         "generation": {"backend": "vllm", "vllm_cfg": {"async_engin": True},
                                        "worker_extension_cls_fq": "a.B"}}}
    assert sorted((p.path, p.expected) for p in misspelled_key_problems(config)) == [
        ("policy.automodel_cfg.enabeld", "policy.automodel_cfg.enabled"),
        ("policy.generation.vllm_cfg.async_engin", "policy.generation.vllm_cfg.async_engine"),
        ("policy.generation.worker_extension_cls_fq",
         "policy.generation.worker_extension_cls_fqn"),
    ]


@pytest.mark.parametrize(
    ("fqn", "suggested"),
    [
        (TEMPLATE_FQN + "s", TEMPLATE_FQN),  # the class
        ("template_project.worker.TemplateAutomodelPolicyWorker", TEMPLATE_FQN),  # a module
        ("templat_project.workers.TemplateAutomodelPolicyWorker", TEMPLATE_FQN),  # the package
    ],
)
def test_verify_suggests_importable_names(fqn: str, suggested: str) -> None:
    code, out, err = run("verify", fqn, "--protocol", "PolicyWorker")
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.rstrip().endswith(f"did you mean {suggested}?"), err


def test_a_generation_section_on_its_own() -> None:
    """What VllmGeneration checks when it is given only the generation section."""
    section = {"backend": "vllm", "vllm_cfg": {"async_engin": True}, "quant_cgf": "x"}
    assert sorted(p.path for p in generation_key_problems(section, "policy.generation")) == [
        "policy.generation.quant_cgf",
        "policy.generation.vllm_cfg.async_engin",
    ]


def test_a_sibling_module_is_suggested_only_where_it_defines_the_class(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A missing module's siblings are offered with the class name only if their source
    defines that class (read, never imported): a fork without the default worker's module
    was told 'did you mean ...my_worker.AutomodelPolicyWorker?', which does not exist."""
    import importlib

    from nemo_rl_workers.tree.class_names import importable_fqns

    package = tmp_path / "sugg_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "automodel_worker.py").write_text("raise RuntimeError('never imported')\n"
                                                 "class AutomodelPolicyWorker: ...\n")
    (package / "automodel_workers.py").write_text("class Other: ...\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("sugg_pkg")
    found = importable_fqns("sugg_pkg.automodel_workerz.AutomodelPolicyWorker",
                            "sugg_pkg.automodel_workerz")
    assert found == ["sugg_pkg.automodel_worker.AutomodelPolicyWorker"]
