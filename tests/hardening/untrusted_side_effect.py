"""NEVER import this from a test: importing it has a visible side effect, on purpose.

A config names `tests.hardening.untrusted_side_effect.SideEffectWorker`, an FQN no
registry lists. The project must refuse it without importing it, in the driver and in
any worker; importing this module writes MARKER, which the tests look for.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

# A fixed place, so Ray workers (which do not share the test's environment) would write
# to the same file the test checks.
MARKER = Path(tempfile.gettempdir()) / f"nemo_rl_untrusted_import_{os.getuid()}.marker"

MARKER.write_text(f"imported by pid {os.getpid()} ({sys.executable})\n")


class SideEffectWorker:
    """Would run as a policy worker, if anything ever imported it."""
