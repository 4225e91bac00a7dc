"""`nemo-rl-workers resolve CONFIG [KEY=VALUE...]`: which worker class runs each section of
one config, against the NeMo-RL it belongs to, nothing imported or verified.

Exit codes: 0 every section resolves, 1 problems found, 2 unusable input (the config, the
tree).
"""

from __future__ import annotations

import argparse
from typing import TextIO

from nemo_rl_workers.findings.check_output import config_revisions, emit_reports
from nemo_rl_workers.findings.exit_codes import EXIT_UNUSABLE


def run_resolve(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from nemo_rl_workers.checks.config.config_check import analyze_file

    revisions = config_revisions(args, [args.config], err)
    if revisions is None:
        return EXIT_UNUSABLE
    report = analyze_file(
        args.config, args.overrides, world_size=None, verify=False, preflight=False,
        revision=revisions[args.config],
    )
    return emit_reports([report], args.json, out, err)
