"""pytest helper: assert that a class implements a worker Protocol."""

from __future__ import annotations

from contracts.init_call import InitCall
from contracts.verify import check


def assert_implements(
    cls: type,
    protocol: type,
    *,
    base: type | None = None,
    init_call: InitCall | None = None,
) -> None:
    """Raise `AssertionError` with the full report (every violation, then skipped notes)."""
    report = check(cls, protocol, base=base, init_call=init_call)
    if not report.ok:
        raise AssertionError(str(report))
