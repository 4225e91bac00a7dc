"""`audit`: check a NeMo-RL checkout's string-named worker calls against its workers.

Reads the tree as source through `nemo_rl_workers.reading.source` (never importing it). The
NeMo-RL-specific knowledge is data in `nemo_rl_workers.checks.audit.knowledge`; `drivers` reads the
driver side (worker classes each driver can start, every dispatch call), `rules`
judges each call against each class, `run.audit` ties them together.
"""

from nemo_rl_workers.checks.audit.baseline import BaselineError, read_baseline, write_baseline
from nemo_rl_workers.checks.audit.rules import RULES, Finding, Undecided
from nemo_rl_workers.checks.audit.run import AuditReport, UnusableTree, WorkerClass, audit

__all__ = [
    "RULES",
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
