"""Ships the runtime guard's start-up line, `nemo_rl_workers_guard.pth`, into site-packages.

Everything else is in pyproject.toml. A wheel gets the file at its root (purelib) from
`build_py`; an editable install (`pip install -e . --config-settings editable_mode=compat`,
as `make setup` does, or the default mode) gets it in the editable wheel it builds. The line
imports nothing unless NEMO_RL_WORKERS_GUARD is set (tests/guard/test_startup_line.py).
"""

from __future__ import annotations

import os
import shutil
from typing import Any

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.editable_wheel import editable_wheel

PTH = "nemo_rl_workers_guard.pth"
HERE = os.path.dirname(os.path.abspath(__file__))


class BuildPyWithPth(build_py):
    def run(self) -> None:
        super().run()
        if not self.editable_mode:
            self.copy_file(os.path.join(HERE, PTH), os.path.join(self.build_lib, PTH))

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        outputs = list(super().get_outputs(include_bytecode))
        return outputs if self.editable_mode else [*outputs, os.path.join(self.build_lib, PTH)]


class EditableWheelWithPth(editable_wheel):
    # setuptools writes every file of the unpacked folder into the editable wheel.
    def _run_build_commands(self, dist_name: str, unpacked_wheel: str, build_lib: str,
                            tmp_dir: str) -> Any:
        found = super()._run_build_commands(dist_name, unpacked_wheel, build_lib, tmp_dir)
        shutil.copyfile(os.path.join(HERE, PTH), os.path.join(unpacked_wheel, PTH))
        return found


setup(cmdclass={"build_py": BuildPyWithPth, "editable_wheel": EditableWheelWithPth})
