"""`audit`: check a NeMo-RL checkout's string-named worker calls against its workers.

Reads the tree as source through `nemo_rl_workers.tree.source` (never importing it). The
NeMo-RL-specific knowledge is data in `nemo_rl_workers.tree.knowledge`; the tree stage's
`drivers` reads the driver side (worker classes each driver can start, every dispatch
call), `rules` judges each call against each class, `run.audit` ties them together; the
`extension*` modules hold user extensions to the same rules. The evaluator of upstream's
setup code on a config (`config_expressions`, `config_tests`, `inline`) lives here too
until it has a package of its own (issue 45, item 2).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nemo_rl_workers.lazy import lazy_api

# The package API: name -> its module. Loaded on first use, so that a module of this
# package (the knowledge tables, the conditions) can be imported without the whole audit.
_API = {
    "BaselineError": "nemo_rl_workers.checks.audit.baseline",
    "read_baseline": "nemo_rl_workers.checks.audit.baseline",
    "write_baseline": "nemo_rl_workers.checks.audit.baseline",
    "Finding": "nemo_rl_workers.checks.audit.rules",
    "Undecided": "nemo_rl_workers.checks.audit.rules",
    "AuditReport": "nemo_rl_workers.checks.audit.run",
    "UnusableTree": "nemo_rl_workers.checks.audit.run",
    "WorkerClass": "nemo_rl_workers.checks.audit.run",
    "audit": "nemo_rl_workers.checks.audit.run",
}

if TYPE_CHECKING:
    from nemo_rl_workers.checks.audit.baseline import (
        BaselineError,
        read_baseline,
        write_baseline,
    )
    from nemo_rl_workers.checks.audit.rules import Finding, Undecided
    from nemo_rl_workers.checks.audit.run import AuditReport, UnusableTree, WorkerClass, audit

__all__ = [
    "AuditReport",
    "BaselineError",
    "Finding",
    "Undecided",
    "UnusableTree",
    "WorkerClass",
    "audit",
    "read_baseline",
    "write_baseline",
]


__getattr__ = lazy_api(__name__, globals(), _API)
