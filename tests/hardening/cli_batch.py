"""Run many `nemo-rl-workers` invocations in one process (python -m tests.hardening.cli_batch).

The hostile-input suite has hundreds of inputs; a fresh interpreter for each would take
minutes on two busy cores. Each invocation goes through the CLI's real entry point,
`nemo_rl_workers.commands.cli.main`, with its own output buffers. Reads a JSON list of
[cwd, argv] from stdin; checks the configs named after argv[1] first, to warm up; appends
one JSON line per invocation to the file named by argv[1] as soon as it is done (so a
hang names its input): exit code, stdout, stderr, seconds, and the probe modules imported.
"""

from __future__ import annotations

import io
import json
import os
import sys
import time


def main() -> int:
    from nemo_rl_workers.commands.cli import main as cli

    jobs = json.loads(sys.stdin.read())
    # Warm up: the first `check` imports the worker classes (torch) and ModelOpt; that is not
    # an input's cost.
    for config in sys.argv[2:]:
        cli(["check", "--world-size", "2", config], io.StringIO(), io.StringIO())
    with open(sys.argv[1], "a", encoding="utf-8") as results:
        for cwd, argv in jobs:
            os.chdir(cwd)
            out, err = io.StringIO(), io.StringIO()
            start = time.perf_counter()
            code = cli(argv, out, err)
            seconds = time.perf_counter() - start
            probes = [m for m in sys.modules if "hostile_import_probe" in m]
            row = {"code": code, "out": out.getvalue(), "err": err.getvalue(),
                   "seconds": seconds, "probes": probes}
            results.write(json.dumps(row) + "\n")
            results.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
