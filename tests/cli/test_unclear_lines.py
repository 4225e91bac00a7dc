"""Each line names its real cause (issue 29), as a user meets it: the command run from a
fresh working folder, on files written there. Found by an outside probe of the installed
command: a big file is no alias bomb, a loop is no missing file, a bomb of plain references
says it would expand, an integer key is named as the key (not "must be a mapping" of a
mapping), a device is not a regular file, and a name holding a newline is shown escaped."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GOOD = (REPO / "examples" / "configs" / "grpo_tiny.yaml").read_text(encoding="utf-8")


def check(folder: Path, *argv: str) -> tuple[int, str, str]:
    """`nemo-rl-workers check` as the installed command runs it, from `folder`."""
    done = subprocess.run(
        [sys.executable, "-m", "nemo_rl_workers", "check", *argv],
        capture_output=True, text=True, cwd=folder, timeout=300, check=False,
        env={**os.environ, "NO_COLOR": "1"},
    )
    return done.returncode, done.stdout, done.stderr


def with_policy_line(line: str) -> str:
    """The good config with `line` first in its policy section."""
    return GOOD.replace("policy:\n", f"policy:\n  {line}\n", 1)


def test_sixty_thousand_plain_keys_are_no_alias_bomb(tmp_path: Path) -> None:
    (tmp_path / "wide.yaml").write_text(
        GOOD + "".join(f"k{i}: {i}\n" for i in range(60_000)), encoding="utf-8")
    code, out, err = check(tmp_path, "--no-verify", "wide.yaml")
    assert (code, err) == (0, ""), err
    assert out.splitlines()[1].startswith("wide.yaml: ok (")


def test_a_config_that_is_a_symlink_loop_says_so(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").symlink_to("b.yaml")
    (tmp_path / "b.yaml").symlink_to("a.yaml")
    code, out, err = check(tmp_path, "a.yaml")
    assert (code, out) == (2, "")
    assert err == "nemo-rl-workers: a.yaml: cannot be read: its path is a symlink loop\n"


def test_a_bomb_of_plain_references_says_it_would_expand(tmp_path: Path) -> None:
    # 10,000 plain references to a 10,000-character string: 10^8 characters once resolved.
    (tmp_path / "refs.yaml").write_text(
        GOOD + "big: " + "x" * 10_000 + "\ncopies:\n"
        + "".join(f"  c{i}: ${{big}}\n" for i in range(10_000)), encoding="utf-8")
    code, out, err = check(tmp_path, "--no-verify", "refs.yaml")
    assert (code, out) == (2, "")
    assert err == ("nemo-rl-workers: refs.yaml: interpolations in copies would expand to over "
                   "8388608 characters\n")


def test_an_integer_key_of_the_policy_section_is_named_as_the_key(tmp_path: Path) -> None:
    (tmp_path / "intkey.yaml").write_text(with_policy_line("1: x"), encoding="utf-8")
    code, out, err = check(tmp_path, "-v", "--no-verify", "intkey.yaml")
    assert (code, err) == (1, "")
    assert "must be a mapping" not in out and "is not a mapping" not in out
    assert ("  problem: intkey.yaml:3: policy has the key 1, which is an int, not a string; "
            "quote it ('1': ...) or rename it.") in out.splitlines()
    assert ("  skipped: policy: every rule (the section has a key that is not a string)"
            in out.splitlines())


@pytest.mark.parametrize("field", ["sequence_packing", "dynamic_batching"])
def test_an_integer_key_below_the_policy_section_is_named_as_the_key(
    tmp_path: Path, field: str
) -> None:
    (tmp_path / "nested.yaml").write_text(with_policy_line(f"{field}: {{1: x}}"),
                                           encoding="utf-8")
    code, out, err = check(tmp_path, "--no-verify", "nested.yaml")
    assert (code, err) == (1, "")
    assert "must be a mapping" not in out
    assert (f"  problem: nested.yaml:3: policy.{field} has the key 1, which is an int, not a "
            "string; quote it ('1': ...) or rename it.") in out.splitlines()


@pytest.mark.slow
def test_quant_cfg_naming_a_device_is_not_a_regular_file_with_verification(
    tmp_path: Path,
) -> None:
    (tmp_path / "zero.yaml").write_text(with_policy_line("quant_cfg: /dev/zero"),
                                         encoding="utf-8")
    code, out, err = check(tmp_path, "zero.yaml")  # verification on: the worker's own check
    assert (code, err) == (1, "")
    problems = [line for line in out.splitlines() if line.startswith("  problem:")]
    assert problems == [
        "  problem: zero.yaml:3: policy.quant_cfg: the quantization recipe /dev/zero cannot be "
        "used (is not a regular file: a device, a pipe or a folder); set policy.quant_cfg to a "
        "ModelOpt config name (e.g. INT8_DEFAULT_CFG, FP8_DEFAULT_CFG, INT4_AWQ_CFG, "
        "NVFP4_DEFAULT_CFG) or a path to a YAML quantization recipe."
    ]


def test_a_file_name_with_a_newline_is_named_escaped_on_stderr(tmp_path: Path) -> None:
    (tmp_path / "bad\nname.yaml").write_text("policy: [\n", encoding="utf-8")
    code, out, err = check(tmp_path, "bad\nname.yaml")
    assert (code, out) == (2, "")
    assert err.count("\n") == 1
    assert err.startswith("nemo-rl-workers: bad\\nname.yaml: invalid YAML at line 2")
