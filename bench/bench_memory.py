"""Peak memory of `check --no-verify` with an 8 MiB driver module (issue 45, item 1).

A copy of the corpus tree (its `nemo_rl` package, `pyproject.toml` and one recipe) whose
policy driver (`nemo_rl/models/policy/lm_policy.py`) is padded with plain assignments to
8 MiB, checked in a subprocess (no cache) whose peak resident memory is read from
`getrusage(RUSAGE_CHILDREN)`; the same for the unpadded copy beside it. Goal: at most
1 GB. Run with `python -m bench.bench_memory`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.bench_support import REPO, print_table

TREE = REPO / ".." / "shared" / "corpus" / "nemo-rl"
RECIPE = Path("examples") / "configs" / "grpo_math_1B.yaml"
DRIVER = Path("nemo_rl") / "models" / "policy" / "lm_policy.py"
PADDED_BYTES = 8 * 1024 * 1024
GOAL_BYTES = 1024 ** 3


def _copy(into: Path) -> Path:
    root = into / "nemo-rl"
    shutil.copytree(TREE / "nemo_rl", root / "nemo_rl")
    shutil.copytree(TREE / "examples" / "configs", root / "examples" / "configs")
    shutil.copy(TREE / "pyproject.toml", root / "pyproject.toml")
    return root


def _pad(module: Path) -> None:
    text = module.read_text(encoding="utf-8")
    lines = [text]
    size = len(text.encode())
    index = 0
    while True:  # up to, not over, the reader's 8 MiB cap
        line = f"_PAD_{index} = [{index}, {index} + 1, ('pad', {index})]\n"
        if size + len(line) > PADDED_BYTES:
            break
        lines.append(line)
        size += len(line)
        index += 1
    module.write_text("".join(lines), encoding="utf-8")


def _peak_rss(root: Path) -> tuple[int, int]:
    """(peak resident bytes of one `check --no-verify --no-cache`, its exit code), in a
    fresh process: getrusage of children is the largest child so far, so each run is
    measured from a process of its own."""
    probe = (
        "import resource, subprocess, sys\n"
        "code = subprocess.run(sys.argv[1:], capture_output=True).returncode\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, code)\n")
    done = subprocess.run(
        [sys.executable, "-c", probe, sys.executable, "-m", "nemo_rl_workers", "check",
         "--no-verify", "--no-cache", "--nemo-rl", str(root), str(root / RECIPE)],
        capture_output=True, text=True, check=True, cwd=root,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    kib, code = done.stdout.split()
    return int(kib) * 1024, int(code)


def main() -> dict[str, object]:
    if not (TREE / DRIVER).is_file():
        print(f"skipped: the corpus tree is absent ({TREE})")
        return {}
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as folder:
        root = _copy(Path(folder))
        plain, plain_code = _peak_rss(root)
        _pad(root / DRIVER)
        padded, padded_code = _peak_rss(root)
    mib = 1024 * 1024
    print_table(["driver module", "peak RSS (MiB)", "exit", "ratio to the 1 GB goal"], [
        ["as upstream", f"{plain / mib:.0f}", plain_code, f"{plain / GOAL_BYTES:.2f}"],
        ["padded to 8 MiB", f"{padded / mib:.0f}", padded_code, f"{padded / GOAL_BYTES:.2f}"],
    ])
    return {"peak_plain_bytes": plain, "peak_padded_bytes": padded,
            "ratio_padded_to_goal": padded / GOAL_BYTES}


if __name__ == "__main__":
    main()
