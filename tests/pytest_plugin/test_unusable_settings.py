"""`pytest --nemo-rl-workers` with a setting it cannot use (issue 35): one `UsageError` line
naming the ini key, pytest's usage exit (4); never an INTERNALERROR (exit 3), nor an item
failing on a traceback."""

from __future__ import annotations

import textwrap

import pytest

pytest_plugins = ("pytester",)

KEY_LINES = [
    ('nemo_rl_workers_trees = "t --baseline',
     "ini setting nemo_rl_workers_trees line '\"t --baseline': No closing quotation (quote "
     "values as a shell does)"),
    ("nemo_rl_workers_trees = t --help",
     "ini setting nemo_rl_workers_trees line 't --help': --help is not an option here (each "
     "item runs `audit ... --json` itself)"),
    ("nemo_rl_workers_trees = t -h",
     "ini setting nemo_rl_workers_trees line 't -h': -h is not an option here (each item "
     "runs `audit ... --json` itself)"),
    ("nemo_rl_workers_trees = t --output-format=sarif",
     "ini setting nemo_rl_workers_trees line 't --output-format=sarif': --output-format is "
     "not an option here (each item runs `audit ... --json` itself)"),
    ("nemo_rl_workers_trees = t --baseline",
     "ini setting nemo_rl_workers_trees line 't --baseline': nemo-rl-workers audit: error: "
     "argument --baseline: expected one argument"),
    ("nemo_rl_workers_trees = t --no-such-option",
     "ini setting nemo_rl_workers_trees line 't --no-such-option': nemo-rl-workers: error: "
     "unrecognized arguments: --no-such-option"),
    ("nemo_rl_workers_trees = --baseline b.json",
     "ini setting nemo_rl_workers_trees line '--baseline b.json': a line is PATH "
     "[--baseline FILE]: the checkout's path first, not --baseline"),
    ("nemo_rl_workers_extensions = a.B --protocol 'P",
     "ini setting nemo_rl_workers_extensions line \"a.B --protocol 'P\": No closing "
     "quotation (quote values as a shell does)"),
    ("nemo_rl_workers_extensions = a.B --protocol P --version",
     "ini setting nemo_rl_workers_extensions line 'a.B --protocol P --version': --version is "
     "not an option here (each item runs `verify ... --json` itself)"),
    ('nemo_rl_workers_check_args = --no-verify "--world-size',
     "ini setting nemo_rl_workers_check_args: No closing quotation"),
    ("nemo_rl_workers_check_args = --json",
     "ini setting nemo_rl_workers_check_args: --json is not an option here (each item runs "
     "`check ... --json` itself)"),
    ("nemo_rl_workers_static = perhaps",
     "ini setting nemo_rl_workers_static: invalid truth value 'perhaps'"),
]


@pytest.mark.parametrize(("setting", "line"), KEY_LINES, ids=[k for k, _ in KEY_LINES])
def test_an_unusable_setting_is_one_usage_error_line(
    pytester: pytest.Pytester, setting: str, line: str
) -> None:
    pytester.makefile(".ini", pytest=textwrap.dedent(f"""\
        [pytest]
        nemo_rl_workers_registered = false
        {setting}
        """))
    pytester.mkdir("t")
    result = pytester.runpytest_subprocess("--nemo-rl-workers", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.errlines == [f"ERROR: --nemo-rl-workers: {line}", ""]
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
