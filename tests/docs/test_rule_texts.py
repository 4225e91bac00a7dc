"""The guide's selection and config-rule tables quote the code's texts exactly.

Each rule's row lists its warning and error texts, with `<...>` for values from the config.
Here every rule is triggered for real, and each text it produces must match one template of
its row, while each template must be matched by something the code produces (no stale text).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Any

import pytest
from nemo_rl.models.policy.lm_policy import R0_DEPRECATION, Policy
from nemo_rl.pipeline import WorkerPlan

from contracts.init_call import POLICY_INIT
from nemo_rl_workers.checks.contract.contract_check import WorkerCheck, check_worker_class
from nemo_rl_workers.errors import WorkerConfigError
from nemo_rl_workers.model.outdated import outdated_config_problems
from nemo_rl_workers.model.registry import WorkerRegistry, WorkerRow
from nemo_rl_workers.model.resolver import (
    FIELD,
    quant_auto_warning,
    resolve_generation,
    resolve_policy,
)
from nemo_rl_workers.model.table import BUILTIN_ROWS
from nemo_rl_workers.model.teacher import derive_teacher_config
from tests.docs.snippets import REPO

GUIDE = REPO / "docs" / "guides" / "worker-extensions.md"
MEGATRON, AUTOMODEL, _, _ = BUILTIN_ROWS


def quantized(row: WorkerRow) -> str:
    assert row.quantized_fqn is not None
    return row.quantized_fqn


AUTOMODEL_Q, MEGATRON_Q = quantized(AUTOMODEL), quantized(MEGATRON)
TEMPLATE_FQN = "template_project.workers.TemplateAutomodelPolicyWorker"
BROKEN_FQN = "broken_extension.BrokenPolicyWorker"


def automodel(**extra: Any) -> dict[str, Any]:
    return {"megatron_cfg": {"enabled": False}, "automodel_cfg": {"enabled": True}, **extra}


def rule_table() -> dict[str, list[str]]:
    """Rule -> its text templates, from the tables of 'How the class is selected'."""
    text = GUIDE.read_text(encoding="utf-8")
    section = text.split("## How the class is selected", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, list[str]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        rule = cells[0].strip("`")
        if len(cells) >= 3 and re.fullmatch(r"R\d|outdated\.\w+|backend", rule):
            rows[rule] = re.findall(r"`([^`]*)`", cells[-1].replace("<br>", " "))
    return rows


def as_regex(template: str) -> re.Pattern[str]:
    parts = re.split(r"<[^<>]+>", template)
    return re.compile(".+?".join(re.escape(p) for p in parts))


def messages(fn: Callable[[], object]) -> list[str]:
    """The problem messages of the WorkerConfigError `fn` raises."""
    with pytest.raises(WorkerConfigError) as caught:
        fn()
    return [p.message for p in caught.value.problems]


def contract_messages(fqn: str, protocol: str, base: str | None) -> list[str]:
    check = WorkerCheck(fqn, protocol, base, POLICY_INIT, "policy", automodel())
    found = check_worker_class(check)
    assert found and {f[4] for f in found} == {"contract"}, found
    return [f[3] for f in found]


def r6_policy_stats() -> list[str]:
    # Only the plan is read before the rejection; no worker group is needed to get there.
    policy = Policy.__new__(Policy)
    policy.plan = WorkerPlan(resolve_policy(automodel()), automodel())
    return messages(policy.get_quantizer_stats)


def r8_warnings() -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        derive_teacher_config(
            automodel(quant_cfg="FP8_DEFAULT_CFG", pretrained_checkpoint="/ckpt/student"),
            teacher_index=0,
        )
    return [str(w.message) for w in caught if w.category is UserWarning]


def produced(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    monkeypatch.syspath_prepend(str(REPO / "docs" / "examples"))
    no_quant_row = WorkerRow("policy", "automodel", None, AUTOMODEL.default_fqn, None,
                             "PolicyWorker", None)
    quant = "INT8_DEFAULT_CFG"
    return {
        "R0": [R0_DEPRECATION, *messages(lambda: resolve_policy(
            automodel(**{FIELD: TEMPLATE_FQN}), constructor_fqn="my_project.workers.Old"))],
        "R1": [],
        "R2": [
            *messages(lambda: resolve_policy(automodel(**{FIELD: "my_project.workers.W"}))),
            *messages(lambda: resolve_policy(automodel(**{FIELD: TEMPLATE_FQN + "s"}))),
            *messages(lambda: resolve_policy(automodel(**{FIELD: MEGATRON.default_fqn}))),
            *messages(lambda: resolve_policy(automodel(**{FIELD: "my project.W"}))),
            *contract_messages(BROKEN_FQN, "PolicyWorker", AUTOMODEL.default_fqn),
        ],
        "R3": [quant_auto_warning(AUTOMODEL_Q),
               *resolve_policy(automodel(quant_cfg=quant)).warnings],
        "R4": list(resolve_policy(
            automodel(quant_cfg=quant, **{FIELD: AUTOMODEL_Q})).warnings),
        "R5": [
            *messages(lambda: resolve_policy(
                automodel(quant_cfg=quant, **{FIELD: MEGATRON_Q}))),
            *messages(lambda: resolve_policy(
                automodel(quant_cfg=quant, **{FIELD: "my_project.workers.W"}))),
        ],
        "R6": [
            *messages(lambda: resolve_policy(automodel(quant_cfg=quant),
                                             registry=WorkerRegistry([no_quant_row]))),
            *contract_messages(AUTOMODEL.default_fqn, "QuantPolicyWorker", None),
            *r6_policy_stats(),
        ],
        "R7": messages(lambda: resolve_generation({"backend": "sglang", FIELD: TEMPLATE_FQN})),
        "R8": r8_warnings(),
        "outdated.rename": [
            p.message
            for section in ({"dtensor_cfg": {"enabled": True}}, {"dtensor_cfg": {}, **automodel()})
            for p in outdated_config_problems({"policy": section})
            if p.rule == "outdated.rename"
        ],
        "outdated.v2": [
            p.message
            for p in outdated_config_problems({"policy": automodel(automodel_cfg={
                "enabled": True, "_v2": False})})
        ],
        "backend": [
            p.message
            for section in ({"megatron_cfg": {"enabled": True}, "automodel_cfg": {"enabled": True}},
                            {})
            for p in outdated_config_problems({"policy": section})
        ],
    }


def test_every_rule_has_a_row() -> None:
    assert sorted(rule_table()) == sorted(
        [f"R{i}" for i in range(9)] + ["outdated.rename", "outdated.v2", "backend"]
    )


def test_the_guide_quotes_every_text_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    table = rule_table()
    for rule, texts in produced(monkeypatch).items():
        templates = table[rule]
        patterns = [as_regex(t) for t in templates]
        unmatched = [t for t in texts if not any(p.fullmatch(t) for p in patterns)]
        assert unmatched == [], f"{rule}: the guide does not quote {unmatched}"
        unused = [t for t, p in zip(templates, patterns, strict=True)
                  if not any(p.fullmatch(t) for t in texts)]
        assert unused == [], f"{rule}: the code never says {unused}"


def test_a_changed_text_is_caught() -> None:
    """The matcher is not vacuous: a reworded message no longer fits its template."""
    (template,) = [t for t in rule_table()["R3"]]
    fqn = AUTOMODEL_Q
    assert as_regex(template).fullmatch(quant_auto_warning(fqn))
    assert not as_regex(template).fullmatch(quant_auto_warning(fqn).replace("silence", "mute"))

