"""`check` given launches that are not usable (issue 44): a suite script or campaign list
that is a FIFO, a folder, huge, a loop of `source`, a list naming a script that is not
there. One line on stderr each, exit 2 (unusable input), never a traceback; what can be
judged still is."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.cli_run import run_cli as run


def _suites(tmp_path: Path) -> Path:
    folder = tmp_path / "tests" / "test_suites" / "llm"
    folder.mkdir(parents=True)
    return folder


@pytest.mark.parametrize(("make", "said"), [
    (lambda p: os.mkfifo(p), "not a regular file"),
    (lambda p: p.mkdir(), "no config files"),  # a folder: its configs, and it has none
    (lambda p: p.write_bytes(b"#!/bin/bash\n" + b"# x\n" * 400_000), "byte limit"),
    (lambda p: p.write_text('source "$(dirname "$0")/x.sh"\n'), "x.sh"),
    (lambda p: p.write_bytes(b"\xff\xfe\x00 not text"), "x.sh"),
])
def test_an_unusable_suite_script_is_one_line_and_exit_2(
        tmp_path: Path, make: object, said: str) -> None:
    script = _suites(tmp_path) / "x.sh"
    assert callable(make)
    make(script)
    code, out, err = run("check", "--no-verify", "--no-cache", str(script))
    assert code == 2 and out == "" and len(err.splitlines()) == 1, err
    assert said in err and "Traceback" not in err


def test_a_campaign_list_naming_a_missing_script_says_its_line(tmp_path: Path) -> None:
    listing = tmp_path / "tests" / "test_suites" / "nightly.txt"
    _suites(tmp_path)
    listing.write_text("# GRPO\n\ntests/test_suites/llm/gone.sh\n")
    code, _, err = run("check", "--no-verify", "--no-cache", str(listing))
    assert code == 2 and len(err.splitlines()) == 1
    assert f"{listing}:3: tests/test_suites/llm/gone.sh: no such file" in err


def test_a_campaign_list_that_is_a_fifo_is_one_line(tmp_path: Path) -> None:
    listing = tmp_path / "nightly.txt"
    os.mkfifo(listing)
    code, _, err = run("check", "--no-verify", "--no-cache", str(listing))
    assert code == 2 and len(err.splitlines()) == 1 and str(listing) in err


def test_a_script_outside_the_convention_is_undecided_naming_the_line(tmp_path: Path) -> None:
    script = _suites(tmp_path) / "odd.sh"
    script.write_text("#!/bin/bash\ncd /\nCONFIG_PATH=$(python pick.py)\n"
                      "uv run examples/run_grpo.py --config $CONFIG_PATH\n")
    code, out, err = run("check", "--no-verify", "--no-cache", str(script))
    assert (code, err) == (0, "")
    assert "launch: undecided: " in out and "odd.sh:3" in out
    # Nothing judged: no NeMo-RL named, not "ok".
    lines = out.splitlines()
    assert "NeMo-RL:" not in out and lines[0].endswith(": undecided")
    assert "1 undecided" in lines[-1]
