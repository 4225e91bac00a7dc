"""`nemo-rl-workers explain RULE` (issue 29): every rule the tool can report has its guide
entry on the command line, read from the catalogue's rows; an unknown name is one line and
exit 2, naming the nearest names."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from typing import get_args

import pytest

from nemo_rl_workers.findings.catalogue import TABLES
from nemo_rl_workers.findings.catalogue_tables import AUDIT
from nemo_rl_workers.findings.registry import RULES
from nemo_rl_workers.reading.safe_read import LoadErrorKind
from tests.cli.rule_names import collect, emitted_rules, sources
from tests.cli_run import Ran, run_cli


def explain(*argv: str) -> Ran:
    return run_cli("explain", *argv)


AUDIT_RULES = {rule.id: rule.severity for rule in RULES}
EMITTED = emitted_rules()
# Every name a command can print (collected from the code), and the config load errors'
# kinds, which the catalogue explains beside them.
REPORTED = sorted(set(EMITTED) | set(get_args(LoadErrorKind)))


def test_the_rules_every_command_prints_are_collected() -> None:
    """The collection finds each family's names (guard, audit, check, verify, static,
    formats), so that an empty or partial scan cannot pass the test below."""
    for name in ("actor-environment", "actor-class", "actor-subclass", "defined",
                 "driver-calls", "worker-interpreter", "worker-protocol",
                 "overrides-fit-bases", "fqn",  # guard
                 "missing-method", "base-call-too-many-positional",  # audit
                 "R2", "R5", "outdated.rename", "preflight.fp32_lm_head.type",  # check
                 "isolation", "missing", "undecidable", "vllm-extension-clash",  # verify
                 "static", "source",  # static
                 "migrate", "unusable", "warning", "unresolved", "problem"):  # formats
        assert name in EMITTED, name
    assert set(AUDIT_RULES) <= set(EMITTED)


def test_a_rule_added_anywhere_is_collected() -> None:
    """What a contributor adds is found by the same scan (a guard verdict, a finding's
    fallback, a constant, a Literal a finding's rule field is typed with)."""
    new = ast.parse(
        "NEW_RULE = 'quota.constant'\n"
        "Kinds = Literal['quota.kind', 'quota.other']\n"
        "class QuotaFinding:\n    rule: Kinds\n"
        "def f(x):\n"
        "    Verdict('quota.verdict', 'what', 'fix')\n"
        "    Finding(x.rule or 'quota.fallback', 'error', 'm')\n"
        "    return {'rule': 'quota.payload'}\n")
    found, dynamic = collect([("new.py", new)])
    assert sorted(found) == ["quota.constant", "quota.fallback", "quota.kind", "quota.other",
                             "quota.payload", "quota.verdict"]
    assert dynamic == []
    found, dynamic = collect([("new.py", ast.parse("Verdict(f'quota.{x}', 'w', 'f')\n"))])
    assert (found, len(dynamic)) == ({}, 1)
    assert len(list(sources())) > 100


def test_audit_severities_are_the_catalogues() -> None:
    """The guide's rows are the registry's; the row of each says its severity first."""
    assert sorted(row[0] for row in AUDIT) == sorted(AUDIT_RULES)
    assert {row[0]: row[1].split(":", 1)[0] for row in AUDIT} == AUDIT_RULES


@pytest.mark.parametrize("rule", REPORTED)
def test_every_rule_the_tool_reports_is_explained(rule: str) -> None:
    code, out, err = explain(rule)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == rule
    assert any(line.startswith("  ") and "(guide: " in line for line in lines[1:])


def test_a_selection_rule_shows_its_exact_texts_and_its_problem_rule() -> None:
    code, out, _ = explain("R5")
    assert code == 0
    assert out.splitlines()[:4] == [
        "R5",
        "  selection rule (guide: How the class is selected)",
        "    when: quant_cfg set, X != Q",
        "    outcome: WorkerConfigError; the config is left unchanged. The text begins with "
        "upstream NeMo-RL's sentence, then names the path, the backend or mode, whose worker X "
        "is, and the fix. A custom extension cannot run quantized (quantized workers are the "
        "built-in ones, and a plugin cannot replace them): the text says so.",
    ]
    assert "    exact warning or error text:" in out.splitlines()
    assert out.count("\n      quant_cfg requires worker_extension_cls_fqn=<Q>, got <X>.") == 2
    assert out.splitlines()[-3:] == [
        "  problem rule (guide: Problem rules)",
        "    raised when: quant_cfg is set and the configured class is not the section's "
        "quantized worker",
        "    fix: set it to Q or remove it; to keep an extension, remove quant_cfg",
    ]


def test_a_name_in_two_tables_gets_both_entries() -> None:
    _, out, _ = explain("base")
    assert [line for line in out.splitlines() if "(guide: " in line] == [
        "  contract violation (guide: Contract violations)",
        "  static finding (guide: Static findings)",
    ]


@pytest.mark.parametrize(("given", "nearest"), [
    ("R9", "did you mean R8, R7 or R6?"),
    ("r5", "did you mean R5, "),
    ("missing-methd", "did you mean missing-method, "),
    ("quant-cfg", "did you mean quant_cfg, "),
    ("zzzz", "did you mean "),
])
def test_an_unknown_rule_is_one_line_naming_the_nearest(given: str, nearest: str) -> None:
    code, out, err = explain(given)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1
    assert err.startswith(f"nemo-rl-workers: explain: no rule is named {given!r}; {nearest}")
    assert err.endswith(" (nemo-rl-workers explain lists every rule)\n")


def test_an_unknown_rule_with_control_characters_stays_one_line() -> None:
    code, _, err = explain("R\n\x1b[2J9")
    assert code == 2 and err.count("\n") == 1 and "\x1b" not in err


def test_without_a_rule_every_name_is_listed_under_its_table() -> None:
    code, out, err = explain()
    assert (code, err) == (0, "")
    listed = [line.split(":", 1)[0].strip() for line in out.splitlines()
              if line.startswith("  ")]
    assert listed == [row[0] for table in TABLES for row in table.rows]
    assert "  R7: a non-vLLM generation backend has worker_extension_cls_fqn set" in out


def test_json_has_every_entry_and_its_fields() -> None:
    code, out, _ = explain("outdated.rename", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["rule"] == "outdated.rename"
    assert [(e["table"], e["anchor"]) for e in data["entries"]] == [
        ("outdated-config rule", "how-the-class-is-selected"),
        ("problem rule", "problem-rules"),
    ]
    assert data["entries"][1]["fields"] == {
        "raised when": "a dtensor_cfg block",
        "fix": "rename it to automodel_cfg (nemo-rl-workers migrate)",
    }


def test_the_installed_command_explains_and_its_help_names_explain() -> None:
    done = subprocess.run([sys.executable, "-m", "nemo_rl_workers", "explain", "gate"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == (
        "gate\n  contract violation (guide: Contract violations)\n    meaning: stricter: "
        "beartype's structural check of the class against a runtime-checkable Protocol failed\n")
    helped = subprocess.run([sys.executable, "-m", "nemo_rl_workers", "--help"],
                            capture_output=True, text=True, timeout=60, check=False)
    assert "explain" in helped.stdout
