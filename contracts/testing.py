"""Testing helpers: assert that a class implements (or fails) a worker Protocol.

`assert_implements` raises `ContractAssertionError` (an `AssertionError`, so any test
runner reports it as a failure) whose message is the verifier's whole report: every
violation on its own line, then the undecidable and skipped notes. Under pytest, the
`worker_contract` fixture of the `nemo_rl.workers` plugin wraps it and fails the test
with the report alone, no traceback into the verifier. Standard library only here:
`contracts` stays import-light.
"""

from __future__ import annotations

from collections.abc import Collection

from contracts.init_call import InitCall
from contracts.report import VerifyReport
from contracts.verify import check


class ContractAssertionError(AssertionError):
    """A class is not what the test expects; `report` is the verifier's full report."""

    def __init__(self, message: str, report: VerifyReport) -> None:
        super().__init__(message)
        self.report = report


def assert_implements(
    cls: type,
    protocol: type,
    *,
    base: type | None = None,
    init_call: InitCall | None = None,
    allow_undecidable: bool = True,
) -> VerifyReport:
    """The report, when `cls` implements `protocol`; else `ContractAssertionError` with
    every violation, then skipped notes. With `allow_undecidable=False`, a member the
    class alone cannot settle fails too."""
    __tracebackhide__ = True  # pytest shows the caller's line, not this helper's
    report = check(cls, protocol, base=base, init_call=init_call)
    if not report.ok or (report.undecidable and not allow_undecidable):
        raise ContractAssertionError(str(report), report)
    return report


def assert_violates(
    cls: type,
    protocol: type,
    rules: Collection[str],
    *,
    base: type | None = None,
    init_call: InitCall | None = None,
) -> VerifyReport:
    """The report, when `cls` fails `protocol` with exactly the violation kinds `rules`
    (e.g. `{"missing", "shape"}`); else `ContractAssertionError` naming the difference."""
    __tracebackhide__ = True
    report = check(cls, protocol, base=base, init_call=init_call)
    found = {str(v.rule) for v in report.violations}
    if found != set(rules):
        expected = ", ".join(sorted(rules)) or "none"
        raise ContractAssertionError(
            f"expected violations of kinds {expected}, got {', '.join(sorted(found)) or 'none'}:"
            f"\n{report}",
            report,
        )
    return report
