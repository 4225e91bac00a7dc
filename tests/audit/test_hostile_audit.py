"""Hostile trees through the real `nemo-rl-workers audit` entry point, in one batch.

Each case runs in one child process through `nemo_rl_workers.commands.cli.main`
(tests/hardening/cli_batch.py): a documented exit code, at most one line on stderr,
never a traceback, in bounded time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.audit.tree import write_tree

REPO = Path(__file__).resolve().parents[2]
TIMEOUT_S = 240.0
WORKERS = "class SyncWorker:\n    def wake_up(self):\n        return True\n\n" \
    "class AsyncWorker(SyncWorker):\n    pass\n"
BODY = '''
def go(self):
    return self.worker_group.run_all_workers_single_data("wake_up")
'''


def base(root: Path) -> Path:
    return write_tree(root, driver_body=BODY, workers=WORKERS)


def syntax_error(root: Path) -> Path:
    # A driver-side module (it names a worker group), so the audit needs it parsed.
    (base(root) / "nemo_rl" / "broken.py").write_text("def (:\n    self.worker_group\n",
                                                      encoding="utf-8")
    return root


def not_utf8(root: Path) -> Path:
    (base(root) / "nemo_rl" / "latin1.py").write_bytes(b"# caf\xe9\n")
    return root


def symlink_loops(root: Path) -> Path:
    package = base(root) / "nemo_rl"
    (package / "again").symlink_to(package)  # a folder loop: not followed
    (package / "a.py").symlink_to(package / "b.py")
    (package / "b.py").symlink_to(package / "a.py")  # a file loop
    return root


def fifty_megabytes(root: Path) -> Path:
    with open(base(root) / "nemo_rl" / "huge.py", "w", encoding="utf-8") as f:
        line = "x = 1  # " + "y" * 90 + "\n"
        for _ in range(50 * 1024 * 1024 // len(line) + 1):
            f.write(line)
    return root


def ten_thousand_classes(root: Path) -> Path:
    classes = "".join(f"class C{i}(C{i - 1}):\n    pass\n" if i else "class C0:\n    pass\n"
                      for i in range(10_000))
    (base(root) / "nemo_rl" / "many.py").write_text(classes, encoding="utf-8")
    return root


def ten_thousand_ancestors(root: Path) -> Path:
    ten_thousand_classes(root)
    workers = root / "nemo_rl" / "workers.py"
    workers.write_text("from nemo_rl.many import C9999\n\nclass SyncWorker(C9999):\n    pass\n"
                       "\nclass AsyncWorker(SyncWorker):\n    pass\n", encoding="utf-8")
    return root


def own_base(root: Path) -> Path:
    write_tree(root, driver_body=BODY,
               workers="class SyncWorker(SyncWorker):\n    pass\n\nclass AsyncWorker:\n"
                       "    def wake_up(self):\n        return 1\n")
    return root


def a_fifo(root: Path) -> Path:
    os.mkfifo(base(root) / "nemo_rl" / "pipe.py")
    return root


def not_nemo_rl(root: Path) -> Path:
    (root / "project").mkdir()
    (root / "project" / "x.py").write_text("x = 1\n", encoding="utf-8")
    return root


def missing(root: Path) -> Path:
    return root / "nowhere"


# case -> (how to write it, exit code, what stdout+stderr must say). Each file that
# cannot be read is one line on stderr (the loop case has two such files).
CASES: dict[str, tuple[Callable[[Path], Path], int, str]] = {
    "syntax error": (syntax_error, 2, "broken.py:1: is not valid Python: invalid syntax"),
    "not UTF-8": (not_utf8, 2, "latin1.py: is not UTF-8 text (byte 0xe9 at offset 5)"),
    "symlink loops": (symlink_loops, 2, "a.py: cannot be read: its path is a symlink loop"),
    "50 MB module": (fifty_megabytes, 2, "-byte limit for a module"),
    "10,000 classes": (ten_thousand_classes, 0, "no findings"),
    "a worker with 10,000 ancestors": (ten_thousand_ancestors, 1, "more than 200 classes"),
    "class naming itself as its base": (own_base, 1, "is its own base"),
    "a FIFO named like a module": (a_fifo, 2, "pipe.py: is not a regular file"),
    "a folder that is not NeMo-RL": (not_nemo_rl, 2, "is not a NeMo-RL checkout"),
    "no such folder": (missing, 2, "nowhere: no such folder"),
}


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, object]]:
    jobs = []
    for index, (write, _, _) in enumerate(CASES.values()):
        root = tmp_path_factory.mktemp(f"hostile{index}")
        jobs.append([str(root), ["audit", "--nemo-rl", str(write(root))]])
    out = tmp_path_factory.mktemp("rows") / "rows.jsonl"
    subprocess.run(
        [sys.executable, "-m", "tests.hardening.cli_batch", str(out)],
        input=json.dumps(jobs), text=True, cwd=REPO, timeout=TIMEOUT_S, check=False,
        capture_output=True,
    )
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    return dict(zip(CASES, rows, strict=False))


@pytest.mark.parametrize("case", list(CASES))
def test_hostile_tree_is_one_line_and_a_documented_exit_code(
    case: str, results: dict[str, dict[str, object]]
) -> None:
    assert case in results, "the batch stopped before this case (a hang or a crash)"
    row = results[case]
    _, code, says = CASES[case]
    out, err = str(row["out"]), str(row["err"])
    assert row["code"] == code, (out, err)
    lines = err.splitlines()
    assert len(lines) == (2 if case == "symlink loops" else 1 if code == 2 else 0), err
    assert all(line.startswith("nemo-rl-workers: audit: ") for line in lines)
    assert says in out + err
    assert "Traceback" not in out + err
    assert float(str(row["seconds"])) < 60
