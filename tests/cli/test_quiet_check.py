"""`check`'s default text is quiet: one line per clean config, the problems and warnings
located, what was left undecided counted once per run, one summary line; `-v` gives each
config's table and notes, and `--json` carries everything whatever the text shows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nemo_rl_workers.findings.check_summary import SHOWN_SITES, note_site
from nemo_rl_workers.interpret.walk import TreeRule
from nemo_rl_workers.model.table import BUILTIN_ROWS
from tests.cli.test_cli import BASE_YAML as CLEAN
from tests.cli_run import run_cli as run
from tests.corpus import corpus_tree

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "configs"
MEGATRON, _, VLLM_SYNC, _ = BUILTIN_ROWS



def short(fqn: str) -> str:
    return fqn.rpartition(".")[2]


def test_a_clean_config_is_one_line_naming_its_classes_and_world_size(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(CLEAN)
    code, out, err = run("check", str(config), "--world-size", "2")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith("NeMo-RL: ")
    assert lines[1] == (f"{config}: ok (policy {short(MEGATRON.default_fqn)}, policy.generation "
                        f"{short(VLLM_SYNC.default_fqn)}, world size 2)")
    assert lines[-1] == ("1 config checked: 1 ok, 0 with problems, 0 with warnings, "
                         "0 sites undecided")
    assert "section" not in out and "skipped:" not in out


def test_verbose_gives_the_table_and_every_note_per_config(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(CLEAN)
    code, out, _ = run("check", str(config), "-v")
    assert code == 0
    assert out.splitlines()[2].split()[:2] == ["section", "backend"]
    assert any(line.startswith("  skipped: ") and "no world size" in line
               for line in out.splitlines())
    assert out.splitlines()[-1] == "  ok"  # today's text, as before the quiet default


def test_the_undecided_are_counted_once_per_run_not_once_per_config(tmp_path: Path) -> None:
    paths = []
    for name in ("a.yaml", "b.yaml", "c.yaml"):
        (tmp_path / name).write_text(CLEAN)
        paths.append(str(tmp_path / name))
    code, out, _ = run("check", *paths)  # no world size: the parallelism rules are skipped
    assert code == 0
    _, verbose, _ = run("check", *paths, "-v")
    notes = [line for line in verbose.splitlines() if line.startswith("  skipped: ")]
    assert len(notes) >= 3  # the same notes, once per config
    lines = out.splitlines()
    assert not any("skipped:" in line for line in lines)
    sites = {note_site(line.removeprefix("  skipped: ")) for line in notes}
    counted = [line for line in lines if line.startswith("  3 configs  ")]
    assert sorted(line.removeprefix("  3 configs  ") for line in counted) == \
        sorted(sites)[:SHOWN_SITES]
    assert "`check -v` lists them per config" in out
    assert lines[-1].endswith(f"{len(sites)} site{'s' if len(sites) > 1 else ''} undecided")
    # Everything is still data in JSON, per config.
    _, as_json, _ = run("check", *paths, "--json")
    assert all(report["skipped"] for report in json.loads(as_json)["configs"])


def test_a_config_with_a_problem_shows_the_problem_located() -> None:
    config = EXAMPLES / "mismatched_quant.yaml"
    code, out, _ = run("check", str(config), "--world-size", "2")
    assert code == 1
    lines = out.splitlines()
    assert lines[1].startswith(f"{config}: 1 problem (")
    assert lines[2].startswith(f"  problem: {config}:") and "quant_cfg requires" in lines[2]
    assert lines[-1].startswith("1 config checked: 0 ok, 1 with problems")


def test_a_note_is_counted_under_its_rule_site() -> None:
    rule = TreeRule(where="nemo_rl/models/policy/lm_policy.py:150", function="Policy.__init__",
                    condition="megatron_enable", message="", verdict="undecided",
                    reason="it reads the environment")
    assert note_site(rule.line()) == "nemo_rl/models/policy/lm_policy.py:150 (Policy.__init__)"
    audit = ("audit: policy: nemo_rl/models/policy/lm_policy.py:449: error[missing-method]: "
             "not known to be reached: no chain of calls")
    # Not an error of this config: the site names the rule, not a severity.
    assert note_site(audit) == ("nemo_rl/models/policy/lm_policy.py:449 (audit missing-method: "
                                "not known to be reached)")
    assert note_site("policy: a.B was not verified: importing a needs torch") == \
        "policy: a.B was not verified"


# The lines a run prints beyond its configs' own: a NeMo-RL line and its note, blank lines
# between the parts, the sites counted (a head, SHOWN_SITES, "and N more"), the summary.
OVERHEAD = 2 + 2 + (SHOWN_SITES + 2) + 1


@pytest.mark.slow
@pytest.mark.parametrize("tree", ["nemo-rl", "nemo-rl-2025-09"])
def test_the_corpus_prints_a_line_per_clean_config_and_its_problems(tree: str) -> None:
    configs = corpus_tree(tree) / "examples" / "configs"
    code, out, _ = run("check", "--no-verify", str(configs))
    _, as_json, _ = run("check", "--no-verify", "--json", str(configs))
    reports = json.loads(as_json)["configs"]
    assert code == (1 if any(r["problems"] for r in reports) else 0)
    said = sum(len(r["problems"]) + len(r["warnings"]) + (0 if r["judged"] else len(r["skipped"]))
               for r in reports)
    lines = out.splitlines()
    assert len(lines) <= len(reports) + said + OVERHEAD, len(lines)
    # A note is printed per config only where it is the verdict (a config not judged).
    assert sum(line.startswith("  skipped: ") for line in lines) == \
        sum(len(r["skipped"]) for r in reports if not r["judged"])
    assert lines[-1].startswith(f"{len(reports)} configs checked: ")
