"""What every benchmark shares: medians, fresh measured subprocesses, the machine, Ray.

Not a benchmark itself (it has no `main`). The machine is noisy and shared, so each
benchmark measures the things it compares side by side in one run and reports
medians and ratios rather than single timings.
"""

from __future__ import annotations

import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Generator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CONFIGS = REPO / "examples" / "configs"
CORPUS = REPO / ".." / "shared" / "corpus" / "nemo-rl" / "examples" / "configs"
VENV_BIN = Path(sys.executable).parent
# Versions printed with the figures: what the measured code and its baselines are.
PACKAGES = (
    "beartype", "typeguard", "omegaconf", "PyYAML", "ruamel.yaml", "ray", "torch",
    "transformers", "nvidia-modelopt", "mypy", "pyrefly", "hypothesis",
)


def median_s(run: Callable[[], object], runs: int) -> float:
    """Median wall time of `runs` calls, in seconds."""
    samples: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def ratio(part: float, whole: float) -> float:
    """part / whole, 0 when whole is 0."""
    return part / whole if whole > 0 else 0.0


@dataclass(frozen=True)
class ChildRun:
    """One finished subprocess: exit status, output, wall time and its own peak memory."""

    returncode: int
    stdout: str
    stderr: str
    wall_s: float
    max_rss_mb: float
    timed_out: bool
    cpu_s: float = 0.0
    """User plus system CPU seconds of the child (and its own children): steadier than wall
    time on a shared machine."""


# A minimal interpreter (-I -S) spawns the measured command and reports its wall time and
# peak RSS. Linux counts a child's peak RSS from the process that forked it, so a child
# forked straight from a big driver (a pytest with torch loaded) would show the driver's
# size; forked from this small launcher it shows its own.
_LAUNCHER = """
import os, sys, time
report, argv = sys.argv[1], sys.argv[2:]
start = time.perf_counter()
pid = os.posix_spawnp(argv[0], argv, os.environ)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - start
with open(report, "w") as f:
    f.write(f"{wall} {usage.ru_maxrss} {usage.ru_utime + usage.ru_stime}")
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
"""


def run_child(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    timeout_s: float = 300.0,
) -> ChildRun:
    """Run `argv` and measure it alone: its wall time and its own peak RSS (via a launcher).

    On timeout the whole process group is killed and `timed_out` is set.
    """
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report"
        proc = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _LAUNCHER, str(report), *argv],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
            env=dict(env) if env is not None else None, cwd=cwd, start_new_session=True,
        )
        try:
            out, err = proc.communicate(timeout=timeout_s)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            timed_out = True
        wall_s, max_rss_kib, cpu_s = 0.0, 0, 0.0
        if report.exists():
            wall_text, rss_text, cpu_text = report.read_text().split()
            wall_s, max_rss_kib, cpu_s = float(wall_text), int(rss_text), float(cpu_text)
        return ChildRun(
            returncode=proc.returncode,
            stdout=out.decode("utf-8", "replace"),
            stderr=err.decode("utf-8", "replace"),
            wall_s=wall_s,
            max_rss_mb=max_rss_kib / 1024,  # Linux reports KiB
            timed_out=timed_out,
            cpu_s=cpu_s,
        )


def child_env(**extra: str) -> dict[str, str]:
    """The current environment with the repository importable and `extra` set."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    env.update(extra)
    return env


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _memory_gib() -> float:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 1024 / 1024
    except OSError:
        pass
    return 0.0


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "absent"


def machine() -> dict[str, object]:
    """The machine and software the figures were measured on."""
    return {
        "cpu_model": _cpu_model(),
        "cores": os.cpu_count() or 0,
        "memory_gib": round(_memory_gib(), 1),
        "os": platform.platform(),
        "python": platform.python_version(),
        "packages": {name: _version(name) for name in PACKAGES},
    }


@contextmanager
def local_ray(num_cpus: int = 2) -> Generator[bool]:
    """A local Ray cluster for the benchmarks; yields whether this call started it.

    `python -m bench` starts it once for every benchmark that needs it; a benchmark run
    alone starts (and stops) its own. The repository root is on the actors' path, so
    they import test-only modules just as the driver does.
    """
    import ray

    started = False
    if not ray.is_initialized():
        ray.init(
            num_cpus=num_cpus,
            include_dashboard=False,
            log_to_driver=False,
            runtime_env={"env_vars": {"PYTHONPATH": str(REPO)}},
        )
        started = True
    try:
        yield started
    finally:
        if started:
            ray.shutdown()


def print_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """An aligned text table on stdout."""
    cells = [list(header)] + [[str(c) for c in row] for row in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(header))]
    for n, line in enumerate(cells):
        print("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))
