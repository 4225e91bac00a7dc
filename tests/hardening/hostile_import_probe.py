"""NEVER import this from a test: importing it appends to $NEMO_RL_HOSTILE_PROBE, on purpose.

Hostile configs of tests/hardening/test_hostile_suite.py name classes in this module, which
no registry lists; the suite checks afterwards that nothing imported it.
"""

from __future__ import annotations

import os
from pathlib import Path

_PROBE = os.environ.get("NEMO_RL_HOSTILE_PROBE")
if _PROBE:
    with Path(_PROBE).open("a") as probe:
        probe.write(f"imported by pid {os.getpid()}\n")


class ProbeWorker:
    """Would run as a policy worker, if anything ever imported it."""
