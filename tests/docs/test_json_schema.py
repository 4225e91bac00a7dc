"""`check --json` / `resolve --json` output against docs/schemas/check.schema.json."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import jsonschema
import pytest

from tests.cli_run import run_cli
from tests.corpus import NEMO_RL
from tests.docs.snippets import REPO

SCHEMA_PATH = REPO / "docs" / "schemas" / "check.schema.json"
GUIDE = REPO / "docs" / "guides" / "worker-extensions.md"
EXAMPLES = "examples/configs"
TEMPLATE = "research/template_project/configs/single_update.yaml"


def schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return loaded


def validator() -> jsonschema.Draft202012Validator:
    jsonschema.Draft202012Validator.check_schema(schema())
    return jsonschema.Draft202012Validator(schema())


def cli_json(*argv: str) -> tuple[int, Any]:
    code, out, _ = run_cli(*argv, "--json")
    return code, json.loads(out)


CASES = {
    "resolve-warning": ("resolve", f"{EXAMPLES}/grpo_tiny_int8.yaml"),
    "check-ok": ("check", "--no-verify", "--world-size", "2", TEMPLATE),
    "check-problem": ("check", "--no-verify", f"{EXAMPLES}/mismatched_quant.yaml"),
    "check-several": ("check", "--no-verify", f"{EXAMPLES}/grpo_tiny.yaml", TEMPLATE,
                      f"{EXAMPLES}/mismatched_quant.yaml"),
    "check-unusable": ("check", "--no-verify", f"{EXAMPLES}/no_such.yaml"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_output_follows_the_schema(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    code, payload = cli_json(*CASES[name])
    validator().validate(payload)
    reports = payload["configs"] if "configs" in payload else [payload]
    assert code == {"check-ok": 0, "resolve-warning": 0, "check-unusable": 2}.get(name, 1)
    assert [r["config"] for r in reports] == [a for a in CASES[name][1:] if a.endswith(".yaml")]


def test_a_problem_carries_file_line_path_expected_and_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(REPO)
    _, payload = cli_json(*CASES["check-problem"])
    (problem,) = payload["problems"]
    lines = (REPO / EXAMPLES / "mismatched_quant.yaml").read_text().splitlines()
    key_line = next(i for i, ln in enumerate(lines, 1) if "worker_extension_cls_fqn" in ln)
    assert (problem["file"], problem["line"]) == (f"{EXAMPLES}/mismatched_quant.yaml", key_line)
    assert problem["path"] == "policy.worker_extension_cls_fqn"
    assert problem["expected"].endswith(".AutomodelQuantPolicyWorker")
    assert problem["given"].endswith(".MegatronQuantPolicyWorker")
    assert problem["rule"] == "R5"


def test_the_schema_rejects_what_the_cli_never_prints(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    _, good = cli_json(*CASES["check-problem"])
    broken: list[dict[str, Any]] = []
    mutations: list[Callable[[dict[str, Any]], object]] = [
        lambda p: p.pop("error"),
        lambda p: p["problems"][0].update(line="6"),
        lambda p: p["workers"][0].update(rule="R5"),
        lambda p: p["workers"][0].update(source="somewhere"),
        lambda p: p.update(extra=1),
        lambda p: p.update(error="unusable while problems are listed"),
    ]
    for mutate in mutations:
        payload = copy.deepcopy(good)
        mutate(payload)
        broken.append(payload)
    v = validator()
    assert [v.is_valid(p) for p in broken] == [False] * len(broken)


def _properties(node: dict[str, Any]) -> set[str]:
    return set(node["properties"])


def test_the_guide_documents_every_field() -> None:
    defs = schema()["$defs"]
    text = GUIDE.read_text(encoding="utf-8").split("### `check --json`", 1)[1].split("\n### ")[0]
    for name in _properties(defs["report"]) | _properties(defs["worker"]) | _properties(
        defs["problem"]
    ):
        assert f"`{name}" in text, f"the guide does not document {name!r}"



CORPUS = NEMO_RL


@pytest.mark.slow  # the corpus tree's model, built on first use: 11.8 s on 2 busy cores
@pytest.mark.parametrize("recipe", ["evals/eval.yaml",
                                    "recipes/llm/mopd-qwen3-1.7b-3n8g-megatron-pack.yaml"],
                         ids=["the evaluation's generation block", "on-policy distillation"])
def test_sections_a_tree_s_entry_builds_follow_the_schema(recipe: str) -> None:
    """The sections no model section covers: the evaluation's top-level `generation:`,
    and the teacher groups GRPO builds through `opd_module` ('policy (TeacherWorkerGroup)')."""
    if not (CORPUS / "nemo_rl").is_dir():
        pytest.skip(f"corpus absent: {CORPUS}")
    code, payload = cli_json("check", "--no-verify", "--nemo-rl", str(CORPUS),
                             str(CORPUS / "examples" / "configs" / recipe))
    validator().validate(payload)
    assert code == 0
    assert {"generation", "policy (TeacherWorkerGroup)"} & {
        w["section"] for w in payload["workers"]}
