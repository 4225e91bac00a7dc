"""`verify --protocol` takes a built-in contract's name or any Protocol's FQN."""

from __future__ import annotations

import pytest

from tests.cli_run import run_cli as run

TEMPLATE = "template_project.workers.TemplateAutomodelPolicyWorker"
DEFAULT = "nemo_rl.models.policy.workers.automodel_policy_worker.AutomodelPolicyWorker"
WEIGHT_NORM = "template_project.protocols.WeightNormWorker"
# The role and base come from the row whose Protocol the extension Protocol extends.
INFERRED = (
    f"checked as the builder will run it: role policy (from {WEIGHT_NORM}); base {DEFAULT} "
    "(the default worker of its row)"
)



def test_an_extension_protocol_fqn_is_verified() -> None:
    assert run("verify", TEMPLATE, "--protocol", WEIGHT_NORM) == (
        0, f"{TEMPLATE} implements {WEIGHT_NORM}\n{INFERRED}\n", "")


def test_a_class_missing_the_extension_method_fails() -> None:
    assert run("verify", DEFAULT, "--protocol", WEIGHT_NORM) == (
        1, f"{DEFAULT} does not implement WeightNormWorker.get_weight_norm: missing\n{INFERRED}\n",
        "")


@pytest.mark.parametrize(
    ("protocol", "why"),
    [
        ("no_such_module.Proto", "no_such_module.Proto cannot be imported: importing "
         "no_such_module raised ModuleNotFoundError: No module named 'no_such_module'"),
        ("contracts.types.TrainBatch", "contracts.types.TrainBatch is not a typing.Protocol "
         "class (module contracts.types has _TypedDictMeta there)"),
        ("os.nothing_here", "os.nothing_here is not a typing.Protocol class (module os has "
         "nothing there)"),
        ("Nope", "'Nope' is neither a built-in contract (PolicyWorker, QuantPolicyWorker, "
         "GenerationWorker, AsyncGenerationWorker, QuantGenerationWorker, "
         "QuantAsyncGenerationWorker) nor the FQN of a Protocol"),
    ],
)
def test_an_unusable_protocol_is_one_line_and_exit_2(protocol: str, why: str) -> None:
    code, out, err = run("verify", TEMPLATE, "--protocol", protocol)
    assert (code, out) == (2, "")
    assert err == f"nemo-rl-workers: unknown protocol {protocol!r}: {why}\n"
