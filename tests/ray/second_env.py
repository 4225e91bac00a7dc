"""A second Python environment, real but cheap: its own prefix and interpreter path.

`make_second_env(root)` lays out `root/bin/python` (the base interpreter this venv was
made from), `root/pyvenv.cfg`, and a `site-packages` that links to this venv's, so the
second environment has the same packages under another prefix. A process started with
it reports `sys.executable == root/bin/python` and `sys.prefix == root`: where a check ran
is visible in its report, unlike a wrapper that execs the driver's interpreter.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path


def make_second_env(root: Path) -> str:
    """Create the environment under `root` (once); return its interpreter's path."""
    python = root / "bin" / "python"
    if python.exists():
        return str(python)
    base = os.path.realpath(sys.executable)
    (root / "bin").mkdir(parents=True)
    python.symlink_to(base)
    (root / "pyvenv.cfg").write_text(
        f"home = {os.path.dirname(base)}\ninclude-system-site-packages = false\n"
        f"version = {sys.version_info.major}.{sys.version_info.minor}.{sys.version_info.micro}\n"
    )
    purelib = Path(sysconfig.get_paths()["purelib"])
    relative = purelib.relative_to(sys.prefix)
    (root / relative).parent.mkdir(parents=True)
    (root / relative).symlink_to(purelib, target_is_directory=True)
    return str(python)
