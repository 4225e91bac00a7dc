"""`verify` without --role/--base checks what the builder will require, or says what it did not."""

from __future__ import annotations

import json

from nemo_rl_workers.checks.contract.builder_defaults import builder_defaults
from nemo_rl_workers.model.registry import WorkerRegistry
from nemo_rl_workers.model.table import BUILTIN_ROWS
from tests.cli_run import run_cli as run
from tests.ray.fault_workers import BadInitWorker, NotASubclassWorker

AUTOMODEL = BUILTIN_ROWS[1].default_fqn
BAD_INIT = "tests.ray.fault_workers.BadInitWorker"
NOT_A_SUBCLASS = "tests.ray.fault_workers.NotASubclassWorker"
TEMPLATE = "template_project.workers.TemplateAutomodelPolicyWorker"


def test_the_role_is_inferred_so_a_constructor_that_cannot_bind_is_refused() -> None:
    code, out, _ = run("verify", BAD_INIT, "--protocol", "PolicyWorker", "--json")
    report = json.loads(out)
    assert code == 1 and report["ok"] is False
    assert [v["rule"] for v in report["violations"]] == ["init"]
    assert (report["role"], report["base"], report["not_checked"]) == ("policy", AUTOMODEL, [])
    assert report["inferred"] == [
        "role policy (from PolicyWorker)",
        f"base {AUTOMODEL} (the default worker of its row)",
    ]


def test_a_class_outside_every_row_fails_the_base_check() -> None:
    code, out, _ = run("verify", NOT_A_SUBCLASS, "--protocol", "PolicyWorker")
    assert code == 1
    (line, checked) = out.splitlines()
    assert line.startswith(f"{NOT_A_SUBCLASS} does not implement PolicyWorker: not a subclass of ")
    assert line.endswith("a custom worker must subclass its row's default worker (R2)")
    assert checked.startswith("checked as the builder will run it: role policy")


def test_a_good_extension_passes_and_says_what_was_checked() -> None:
    code, out, _ = run("verify", TEMPLATE, "--protocol", "PolicyWorker")
    assert code == 0
    assert out.splitlines() == [
        f"{TEMPLATE} implements PolicyWorker",
        "checked as the builder will run it: role policy (from PolicyWorker); "
        f"base {AUTOMODEL} (the default worker of its row)",
    ]


def test_explicit_flags_are_used_as_given() -> None:
    code, out, _ = run("verify", TEMPLATE, "--protocol", "PolicyWorker", "--role", "policy",
                       "--base", AUTOMODEL)
    assert (code, out) == (0, f"{TEMPLATE} implements PolicyWorker\n")


def test_what_cannot_be_inferred_is_said_not_passed() -> None:
    policy_rows_only = WorkerRegistry(BUILTIN_ROWS[:2])
    found = builder_defaults(NotASubclassWorker, NOT_A_SUBCLASS, "GenerationWorker", role=None,
                             base=None, base_fqn=None, registry=policy_rows_only)
    assert (found.role, found.init_call, found.base, found.violations) == (None, None, None, ())
    assert found.not_checked == (
        "constructor binding: no role can be inferred from GenerationWorker (no registered row "
        "uses it); pass --role policy or --role generation",
        "required base class: no role, so no row's worker; pass --base",
    )
    with_role = builder_defaults(BadInitWorker, BAD_INIT, "GenerationWorker",
                                 role="generation", base=None, base_fqn=None,
                                 registry=policy_rows_only)
    assert with_role.init_call is not None and with_role.not_checked == (
        "required base class: no registered row uses GenerationWorker; pass --base",)
