"""`audit --emit-protocols` writes code only from names that are Python identifiers (issue
35): a hostile tree's method names, annotations and folder name end up escaped in comments
and docstrings or left out with a line, never as statements; importing the emitted file
runs nothing."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nemo_rl_workers.checks.audit.protocols_shape import EmitError, check_emitted
from tests.cli_run import Ran, run_cli

INJECTED = "x\\nimport os; os.system('touch pwned')\\nclass _Z:\\n    pass\\n    #"
"""As written inside the tree's string literal: the method name holds newlines."""
HOSTILE_CALLS = f'''
    def hostile(self) -> Any:
        return self.worker_group.run_all_workers_single_data("{INJECTED}")

    def refit_hostile(self) -> Any:
        return self.worker_group.run_all_workers_single_data("refit_hostile")
'''
HOSTILE_ANNOTATION = '''
    def refit_hostile(self) -> "x\\nimport os; os.system('touch pwned')":
        return None
'''
# Refused as a folder name would be '/', so the command touches a file in the working folder.
HOSTILE_FOLDER = 'fork"""\nimport os; os.system("touch pwned")\n#'

# A fake for the tree's own modules, injected on purpose: importing the emitted file must not
# need NeMo-RL's heavy dependencies, only names to import.
IMPORT_FAKE = '''
import importlib.abc, importlib.machinery, sys, types

class _FakeTree(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name == "nemo_rl" or name.startswith("nemo_rl."):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        module = types.ModuleType(spec.name)
        module.__path__ = []
        module.__getattr__ = lambda attr: type(attr, (), {})
        return module

    def exec_module(self, module):
        pass

sys.meta_path.insert(0, _FakeTree())
import emitted
print(sorted(n for n in vars(emitted) if n.endswith("WorkerProtocol")))
'''


def run(args: list[str]) -> Ran:
    return run_cli(*args)


@pytest.fixture
def hostile_tree(trees: Path, tmp_path: Path) -> Path:
    tree = tmp_path / HOSTILE_FOLDER
    shutil.copytree(trees / "mini", tree)
    policy = tree / "nemo_rl" / "models" / "policy" / "lm_policy.py"
    policy.write_text(policy.read_text(encoding="utf-8") + HOSTILE_CALLS, encoding="utf-8")
    worker = tree / "nemo_rl" / "models" / "policy" / "workers" / "automodel_policy_worker.py"
    text = worker.read_text(encoding="utf-8")
    worker.write_text(text.replace("\n\n@ray.remote", HOSTILE_ANNOTATION + "\n\n@ray.remote"),
                      encoding="utf-8")
    return tree


def test_a_hostile_tree_emits_a_module_that_runs_nothing(
    hostile_tree: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run" / "emitted.py"
    out.parent.mkdir()
    code, _, err = run(["audit", "--nemo-rl", str(hostile_tree), "--emit-protocols", str(out)])
    assert code == 1  # the audit's own findings (the hostile name is a missing method)
    assert ("nemo-rl-workers: audit: --emit-protocols: left out \"x\\nimport os; "
            "os.system('touch pwned')\\nclass _Z:\\n    pass\\n    #\", which Policy calls "
            "by name: not a Python identifier") in err.splitlines()
    assert err.splitlines()[-1] == "nemo-rl-workers: audit: wrote 2 Protocols to " + str(out)
    text = out.read_text(encoding="utf-8")
    check_emitted(text)  # docstring, imports, classes of `...` methods: nothing else
    statements = [type(node).__name__ for node in ast.parse(text).body]
    assert statements == ["Expr", *["ImportFrom"] * 3, "ClassDef", "ClassDef"]
    # The annotation and the folder name are there, escaped, in a comment and a docstring.
    assert ("    # refit_hostile: Any stands for x\\nimport os; os.system('touch pwned') "
            "(not in the tree)") in text.splitlines()
    assert text.splitlines()[0] == ('"""Typed Protocols for the worker calls of the NeMo-RL '
                                    'tree fork\\"\\"\\"\\nimport os; os.system(\\"touch '
                                    'pwned\\")\\n#.')
    done = subprocess.run([sys.executable, "-c", IMPORT_FAKE], cwd=out.parent,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ("['AutomodelPolicyWorkerProtocol', "
                           "'VllmGenerationWorkerProtocol']\n")
    assert sorted(p.name for p in out.parent.iterdir() if p.name != "__pycache__") == [
        "emitted.py"]  # no `pwned`: nothing ran


@pytest.mark.parametrize(("source", "holds"), [
    ('"""d"""\nimport os\n', "Import at line 2"),
    ('class P(Protocol):\n    def m(self) -> None:\n        run()\n', "Expr at line 3"),
    ('class P(Protocol):\n    x = 1\n', "Assign at line 2"),
    ('class P(Protocol):\n    def m(self, a: int = print()) -> None: ...\n', "Call at line 2"),
    ('class P(Protocol):\n    @run\n    def m(self) -> None: ...\n', "Name at line 2"),
    ('class P(Protocol):\n    def m(self) -> f(): ...\n', "Call at line 2"),
    ('class P(Base):\n    pass\n', "ClassDef at line 1"),
])
def test_the_parse_back_refuses_anything_but_protocols(source: str, holds: str) -> None:
    with pytest.raises(EmitError) as refused:
        check_emitted(source)
    assert str(refused.value) == (
        f"--emit-protocols: the generated module holds a {holds}; not written")
