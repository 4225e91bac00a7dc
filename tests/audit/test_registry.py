"""The audit's one rule registry (`findings.registry`): every rule a finding can carry is
registered, produced and documented; findings are data (a sentence and its arguments, a
condition as switch sets) rendered only when shown, and changed with `replace`."""

from __future__ import annotations

import ast
import string
from dataclasses import fields

from nemo_rl_workers.checks.audit.call_chain import Chain
from nemo_rl_workers.checks.audit.extension_rules import DriverCall
from nemo_rl_workers.checks.audit.extensions import conditioned
from nemo_rl_workers.checks.audit.rules import Finding, group_causes, message_for
from nemo_rl_workers.findings import registry
from nemo_rl_workers.findings.catalogue import entries
from nemo_rl_workers.findings.catalogue_tables import AUDIT
from nemo_rl_workers.findings.registry import RULES, Message, Rule
from nemo_rl_workers.interpret.conditions import Origin
from tests.cli.rule_names import sources

REGISTRY_MODULE = "nemo_rl_workers/findings/registry.py"
MESSAGES = {name: value for name, value in vars(registry).items()
            if isinstance(value, Message)}


def _used_names() -> set[str]:
    """Every name the package reads outside the registry (`said.X`, `X`)."""
    used: set[str] = set()
    for path, module in sources(("nemo_rl_workers",)):
        if path == REGISTRY_MODULE:
            continue
        for node in ast.walk(module):
            if isinstance(node, ast.Attribute):
                used.add(node.attr)
            elif isinstance(node, ast.Name):
                used.add(node.id)
            elif isinstance(node, ast.alias):
                used.add(node.asname or node.name)
    return used


def test_every_rule_is_registered_once_and_has_a_sentence() -> None:
    defined = [v for v in vars(registry).values() if isinstance(v, Rule)]
    assert sorted(r.id for r in defined) == sorted(r.id for r in RULES)
    assert len({r.id for r in RULES}) == len(RULES)
    assert all(m.rule in RULES for m in MESSAGES.values())
    assert {m.rule for m in MESSAGES.values()} == set(RULES)


def test_no_rule_is_made_outside_the_registry() -> None:
    """A rule used but not registered cannot exist: a finding holds a registry sentence,
    and only the registry makes rules."""
    made = [f"{path}:{node.lineno}" for path, module in sources(("nemo_rl_workers",))
            if path != REGISTRY_MODULE for node in ast.walk(module)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in ("Rule", "Message")]
    assert made == []
    assert [f.name for f in fields(Finding)][0] == "said"


def test_every_sentence_is_produced_somewhere() -> None:
    """A sentence registered but never written is a rule nobody can see."""
    used = _used_names()
    assert sorted(name for name in MESSAGES if name not in used) == []


def test_every_rule_is_the_guide_s_row() -> None:
    assert AUDIT == tuple(rule.row for rule in RULES)
    for rule in RULES:
        (entry,) = [e for e in entries(rule.id) if e.table.what == "audit finding"]
        assert entry.cells[0].startswith(f"{rule.severity}: ")


def test_templates_name_only_what_a_finding_holds() -> None:
    for name, message in MESSAGES.items():
        named = {f for _, f, _, _ in string.Formatter().parse(message.template) if f}
        assert all(f.isidentifier() for f in named), name  # no indexing, no attributes
        assert message.merges_conditions <= message.names_condition


W1, W2 = "pkg.workers.Worker", "pkg.workers.WorkerQuant"  # one name a prefix of the other
ASYNC = frozenset({("async_engine", True)})
SYNC = frozenset({("async_engine", False)})


def _missing(worker: str, condition: frozenset[tuple[str, bool]]) -> Finding:
    return Finding(registry.NO_SUCH_METHOD, "Gen.go", "nope", worker, "d.py:3", "w.py:1",
                   (("end", "Base"),), (condition,))


def test_causes_group_on_data_and_render_once() -> None:
    """Two classes at one call are one cause; `async_engine` true or false is always, so
    the sentence names no condition; a config's own class is named alone."""
    (cause,) = group_causes([_missing(W1, ASYNC), _missing(W2, SYNC)])
    assert cause.workers == (W1, W2) and cause.condition == ()
    assert cause.message == (f"Gen.go calls 'nope' on {W1} and {W2}, which has no such "
                             "method (its MRO ends at Base)")
    assert message_for(cause, W2) == (f"Gen.go calls 'nope' on {W2}, which has no such method "
                                      "(its MRO ends at Base)")
    (one,) = group_causes([_missing(W1, ASYNC), _missing(W2, ASYNC)])
    assert one.message.endswith(" when async_engine=true") and one.condition == (ASYNC,)


def test_a_sentence_about_the_class_s_own_attribute_is_never_grouped() -> None:
    def base_call(worker: str) -> Finding:
        return Finding(registry.BASE_CALL_WITHOUT, "Base.run", "step", worker, "b.py:9",
                       "b.py:2", (("name", "x"),))

    grouped = group_causes([base_call(W1), base_call(W2)])
    assert [f.workers for f in grouped] == [(W1,), (W2,)]
    assert grouped[1].message.endswith(f"which the override {W2}.step requires")


def test_the_extension_audit_s_findings_keep_reach_guard_callers_and_chains() -> None:
    """Conditioning the extension audit's findings on the driver's calls changes their
    condition only (it used to rebuild them from nine of their fields)."""
    found = Finding(registry.OVERRIDE_WITHOUT, "Policy.train", "train", "ext.Ext", "d.py:7",
                    "ext.py:3", (("name", "x"), ("what", "override"), ("owner", "ext.Ext"),
                                 ("target", "train")),
                    workers=("ext.Ext",), reach="guarded", guard="d.py:5",
                    callers=(Origin("algo.py:40"),), chains=(Chain(()),), chain_gap="gap")
    call = DriverCall("Policy.train", "Policy", "train", frozenset(), False, 0, "d.py:7", ASYNC)
    (kept,) = conditioned([found], [call])
    assert (kept.reach, kept.guard, kept.callers, kept.chains, kept.chain_gap, kept.workers) \
        == ("guarded", "d.py:5", (Origin("algo.py:40"),), (Chain(()),), "gap", ("ext.Ext",))
    assert kept.condition == (ASYNC,)
    assert kept.severity == "note"  # guarded: what reach decides to report of an error
    assert "calls train (when async_engine=true) without x" in kept.message
