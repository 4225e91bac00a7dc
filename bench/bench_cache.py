"""The cache of static results: a second run on unchanged sources against the first.

Side by side, alternating, medians of a few rounds (goal: the second run <= 10% of the
first, issue 23):

- `judge` (what `check --static` / `verify --static` run) over every built-in worker
  class and the template's extension, each against its Protocol: the first run with an
  empty cache folder (the checker runs, entries are written), the second on the same
  folder (every entry validated against its manifest, no checker run);
- `audit` of the NeMo-RL corpus (when `../shared/corpus/nemo-rl` is there), in process:
  an empty cache folder, then the same one;
- for scale, the whole command in its own process (`check --static` over
  examples/configs), where interpreter start-up is a floor the cache cannot remove.

Run with `python -m bench.bench_cache`.
"""

from __future__ import annotations

import io
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.bench_support import REPO, VENV_BIN, child_env, print_table, ratio, run_child
from nemo_rl_workers.checks.static.static_check import Subject

ROUNDS = 3
GOAL = 0.10
CORPUS = REPO.parent / "shared" / "corpus" / "nemo-rl"
EXAMPLES = sorted(str(p.relative_to(REPO)) for p in (REPO / "examples" / "configs").glob("*.yaml"))
TEMPLATE = ("template_project.workers.TemplateAutomodelPolicyWorker", "PolicyWorker",
            "nemo_rl.models.policy.workers.automodel_policy_worker.AutomodelPolicyWorker")


def _subjects() -> list[Subject]:
    from nemo_rl_workers.model.registry import default_registry

    found: list[Subject] = []
    for row in default_registry().rows():
        found.append(Subject(row.default_fqn, row.protocol))
        if row.quantized_fqn and row.quant_protocol:
            found.append(Subject(row.quantized_fqn, row.quant_protocol, row.default_fqn))
    return [*dict.fromkeys(found), Subject(*TEMPLATE)]


def _pair(first: Callable[[Path], object], name: str) -> tuple[list[float], list[float], object]:
    """(first-run seconds, second-run seconds, last verdict) over ROUNDS fresh folders."""
    cold: list[float] = []
    warm: list[float] = []
    verdicts: list[object] = []
    for _ in range(ROUNDS):
        with tempfile.TemporaryDirectory(prefix=f"bench-cache-{name}-") as folder:
            cache = Path(folder) / "cache"
            for bucket in (cold, warm):
                start = time.perf_counter()
                verdicts.append(first(cache))
                bucket.append(time.perf_counter() - start)
    assert all(v == verdicts[0] for v in verdicts), f"{name}: verdicts differ between runs"
    return cold, warm, verdicts[0]


def _judge(cache_folder: Path) -> object:
    from nemo_rl_workers.cache.store import Store
    from nemo_rl_workers.checks.static.static_check import judge
    from nemo_rl_workers.checks.static.static_kept import KeptVerdicts

    reports = judge(_subjects(), cache=KeptVerdicts(Store.open(cache_folder)))
    return [(r.subject.fqn, r.ok, r.unusable) for r in reports]


def _audit(cache_folder: Path) -> object:
    from nemo_rl_workers.commands.cli import main

    out = io.StringIO()
    code = main(["audit", "--nemo-rl", str(CORPUS), "--json", "--cache-dir", str(cache_folder)],
                out, io.StringIO())
    return code, out.getvalue()


def _processes() -> tuple[list[float], list[float]]:
    env = child_env(NO_COLOR="1")
    cold: list[float] = []
    warm: list[float] = []
    for _ in range(ROUNDS):
        with tempfile.TemporaryDirectory(prefix="bench-cache-cli-") as folder:
            argv = [str(VENV_BIN / "nemo-rl-workers"), "check", "--static", "--cache-dir",
                    str(Path(folder) / "cache"), *EXAMPLES]
            for bucket in (cold, warm):
                done = run_child(argv, env=env, cwd=REPO, timeout_s=300)
                bucket.append(done.wall_s)
    return cold, warm


def main() -> dict[str, object]:
    rows = []
    figures: dict[str, object] = {"name": "cache"}
    measured: list[tuple[str, Callable[[Path], object], str]] = [
        ("judge: built-in workers + template extension", _judge, "judge")]
    if CORPUS.is_dir():
        measured.append(("audit: NeMo-RL corpus (in process)", _audit, "audit"))
    for label, run, key in measured:
        cold, warm, _ = _pair(run, key)
        share = ratio(statistics.median(warm), statistics.median(cold))
        figures[key] = {"first_s": statistics.median(cold), "second_s": statistics.median(warm),
                        "second_over_first": share}
        rows.append((label, f"{statistics.median(cold):.3f}", f"{statistics.median(warm):.3f}",
                     f"{share:.3f}", "yes" if share <= GOAL else "NO"))
    cold_p, warm_p = _processes()
    share_p = ratio(statistics.median(warm_p), statistics.median(cold_p))
    figures["processes"] = {"first_s": statistics.median(cold_p),
                            "second_s": statistics.median(warm_p), "second_over_first": share_p}
    rows.append((f"check --static {len(EXAMPLES)} configs (own process, for scale)",
                 f"{statistics.median(cold_p):.3f}", f"{statistics.median(warm_p):.3f}",
                 f"{share_p:.3f}", "(start-up floor)"))
    print(f"Second run on unchanged sources vs the first (median of {ROUNDS} rounds, "
          f"alternating; goal <= {GOAL:.2f})")
    print_table(("what", "first s", "second s", "second/first", "goal met"), rows)
    return figures


if __name__ == "__main__":
    main()
