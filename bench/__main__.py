"""`make bench`: run every benchmark in one process and write bench/RESULTS.md.

Each benchmark prints its own table; the same text goes into RESULTS.md under the
machine description and the date. The benchmarks that need Ray run last, on one local
cluster (num_cpus=2) started once here and shut down at the end. A benchmark that
fails is reported as such and the others still run; the exit status is then 1.
"""

from __future__ import annotations

import datetime
import io
import sys
import time
import traceback
from collections.abc import Callable
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from bench import (
    bench_audit,
    bench_cache,
    bench_chain_reach,
    bench_cluster_fit,
    bench_corpus,
    bench_differential,
    bench_driver_weight,
    bench_faults,
    bench_guard,
    bench_interpret,
    bench_launches,
    bench_memory,
    bench_refusal,
    bench_startup,
    bench_static,
    bench_tree,
    bench_typed_calls,
    bench_verification_scaling,
    bench_verifier,
)
from bench.bench_support import local_ray, machine

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


@dataclass(frozen=True)
class Bench:
    title: str
    module: str
    main: Callable[[], dict[str, object]]
    needs_ray: bool = False


BENCHES = (
    Bench("6. Static checking", "bench_static", bench_static.main),
    Bench("3. Verifier cost per class", "bench_verifier", bench_verifier.main),
    Bench("3b. Verifier vs mypy and pyrefly (generated pairs)", "bench_differential",
          bench_differential.main),
    Bench("4. Driver weight", "bench_driver_weight", bench_driver_weight.main),
    Bench("5. Corpus throughput", "bench_corpus", bench_corpus.main),
    Bench("8. Audit of a NeMo-RL checkout vs pyrefly", "bench_audit", bench_audit.main),
    Bench("8b. Every nightly launch judged vs pyrefly", "bench_launches",
          bench_launches.main),
    Bench("2. Verification does not grow with workers", "bench_verification_scaling",
          bench_verification_scaling.main, needs_ray=True),
    Bench("1. Refusal vs allocation", "bench_refusal", bench_refusal.main, needs_ray=True),
    Bench("7. Typed worker calls vs the string path", "bench_typed_calls",
          bench_typed_calls.main, needs_ray=True),
    Bench("9. Cache of static results", "bench_cache", bench_cache.main),
    Bench("10. Faults during a call", "bench_faults", bench_faults.main, needs_ray=True),
    Bench("11. A cluster that cannot hold the workers, refused", "bench_cluster_fit",
          bench_cluster_fit.main, needs_ray=True),
    Bench("12. Start-up of the command", "bench_startup", bench_startup.main),
    Bench("13. The runtime guard on upstream's worker groups", "bench_guard",
          bench_guard.main),
    Bench("14. The tree model: cached, linear, bounded", "bench_tree", bench_tree.main),
    Bench("15. Reach along resolved calls", "bench_chain_reach", bench_chain_reach.main),
    Bench("16. Repository scale: check against pyrefly, cold, warm, one recipe twice",
          "bench_interpret", bench_interpret.main),
    Bench("17. Peak memory with an 8 MiB driver module", "bench_memory", bench_memory.main),
)


class _Tee(io.TextIOBase):
    """Writes to the terminal and keeps a copy for RESULTS.md."""

    def __init__(self, terminal: TextIO) -> None:
        self.terminal = terminal
        self.kept = io.StringIO()

    def write(self, text: str) -> int:
        self.terminal.write(text)
        self.terminal.flush()
        return self.kept.write(text)


def _run(bench: Bench) -> tuple[str, float, bool]:
    """Run one benchmark; (what it printed, seconds, succeeded)."""
    tee = _Tee(sys.stdout)
    start = time.perf_counter()
    ok = True
    with redirect_stdout(tee):
        print(f"\n=== {bench.title} (python -m bench.{bench.module})")
        try:
            bench.main()
        except Exception:
            ok = False
            print("FAILED:\n" + traceback.format_exc())
    return tee.kept.getvalue(), time.perf_counter() - start, ok


def _markdown(sections: list[tuple[Bench, str, float]], total_s: float, when: str) -> str:
    info = machine()
    packages = info["packages"]
    assert isinstance(packages, dict)
    lines = [
        "# Benchmark results",
        "",
        f"Written by `make bench` (`python -m bench`) on {when}, in {total_s:.0f} s.",
        "",
        f"- CPU: {info['cpu_model']}, {info['cores']} cores",
        f"- memory: {info['memory_gib']} GiB",
        f"- OS: {info['os']}",
        f"- Python: {info['python']}",
        "- packages: " + ", ".join(f"{k} {v}" for k, v in packages.items()),
        "",
        "The machine is shared and noisy: compare the figures measured side by side in one",
        "section (ratios), not single timings across runs.",
    ]
    for bench, text, seconds in sections:
        body = text.strip().split("\n", 1)[1] if "\n" in text.strip() else ""
        lines += ["", f"## {bench.title}", "",
                  f"`python -m bench.{bench.module}` ({seconds:.0f} s)", "", "```",
                  body.rstrip(), "```"]
    return "\n".join(lines) + "\n"


def main() -> int:
    started = time.perf_counter()
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    sections: list[tuple[Bench, str, float]] = []
    failed: list[str] = []
    plain = [b for b in BENCHES if not b.needs_ray]
    with_ray = [b for b in BENCHES if b.needs_ray]
    for bench in plain:
        text, seconds, ok = _run(bench)
        sections.append((bench, text, seconds))
        failed += [] if ok else [bench.module]
    with local_ray(num_cpus=2):
        for bench in with_ray:
            text, seconds, ok = _run(bench)
            sections.append((bench, text, seconds))
            failed += [] if ok else [bench.module]
    total = time.perf_counter() - started
    sections.sort(key=lambda s: s[0].title)  # issue order in the file
    RESULTS.write_text(_markdown(sections, total, when))
    print(f"\nall benchmarks: {total:.0f} s; wrote {RESULTS}")
    if failed:
        print(f"FAILED: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
