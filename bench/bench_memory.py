"""Peak memory of `check --no-verify` with an 8 MiB driver module (issue 45, item 1).

A copy of the corpus tree (its `nemo_rl` package, `pyproject.toml` and one recipe) whose
policy driver (`nemo_rl/models/policy/lm_policy.py`) is padded with short assignments (the
densest syntax tree per byte): to 8 MiB (the size cap; over the token budget, so refused and
named), and to the most tokens the budget admits (parsed: the worst a module under the caps
costs). Each is checked in a subprocess (no cache) whose peak resident memory is read from
`getrusage(RUSAGE_CHILDREN)`; the unpadded copy beside them. Goal: at most 1 GB in every
row. Run with `python -m bench.bench_memory`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.bench_support import REPO, print_table
from nemo_rl_workers.tree.source.parse import MAX_SOURCE_TOKENS, count_tokens

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


def _pad(module: Path, tokens: int | None = None) -> None:
    """Short assignments after the module's own text: up to PADDED_BYTES, or up to
    `tokens` tokens (the reader's own count)."""
    text = module.read_text(encoding="utf-8")
    lines = [text]
    size, count = len(text.encode()), count_tokens(text)
    index = 0
    while True:
        line = f"_PAD_{index} = [{index}, {index} + 1, ('pad', {index})]\n"
        if size + len(line) > PADDED_BYTES or (
                tokens is not None and count + count_tokens(line) > tokens):
            break
        lines.append(line)
        size += len(line)
        count += count_tokens(line)
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
    rows: list[tuple[str, int, int]] = []
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as folder:
        root = _copy(Path(folder))
        original = (root / DRIVER).read_text(encoding="utf-8")
        rows.append(("as upstream", *_peak_rss(root)))
        _pad(root / DRIVER)
        rows.append(("padded to 8 MiB (over the token budget: refused, named)",
                     *_peak_rss(root)))
        (root / DRIVER).write_text(original, encoding="utf-8")
        _pad(root / DRIVER, tokens=MAX_SOURCE_TOKENS)
        size = (root / DRIVER).stat().st_size
        rows.append((f"padded to the token budget ({size / 2**20:.1f} MiB, parsed)",
                     *_peak_rss(root)))
    mib = 1024 * 1024
    print_table(["driver module", "peak RSS (MiB)", "exit", "ratio to the 1 GB goal"],
                [[name, f"{peak / mib:.0f}", code, f"{peak / GOAL_BYTES:.2f}"]
                 for name, peak, code in rows])
    worst = max(peak for _, peak, _ in rows)
    return {"peak_plain_bytes": rows[0][1], "peak_padded_bytes": rows[1][1],
            "peak_at_budget_bytes": rows[2][1], "ratio_worst_to_goal": worst / GOAL_BYTES}


if __name__ == "__main__":
    main()
