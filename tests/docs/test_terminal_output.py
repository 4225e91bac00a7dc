"""What people read from `resolve` / `check`: aligned tables, colour only on a terminal.

The console script runs as users run it: under a pseudo-terminal, with NO_COLOR, and piped.
"""

from __future__ import annotations

import os
import pty
import re
import subprocess

from tests.docs.snippets import REPO, VENV_BIN

CLI = str(VENV_BIN / "nemo-rl-workers")
MISMATCHED = "examples/configs/mismatched_quant.yaml"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def env(**extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "RAY_ADDRESS")}
    return {**base, **extra}


def on_terminal(argv: list[str], **extra: str) -> tuple[int, str]:
    """Run with stdout and stderr on a pseudo-terminal; (exit code, what the terminal got)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(argv, cwd=REPO, env=env(**extra), stdin=subprocess.DEVNULL,
                            stdout=follower, stderr=follower)
    os.close(follower)
    chunks: list[bytes] = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    return proc.wait(timeout=120), b"".join(chunks).decode().replace("\r\n", "\n")


def piped(argv: list[str], **extra: str) -> tuple[int, str]:
    done = subprocess.run(argv, cwd=REPO, env=env(**extra), capture_output=True, text=True,
                          timeout=120, check=False)
    return done.returncode, done.stdout


def test_colour_on_a_terminal_only_and_never_with_no_color() -> None:
    argv = [CLI, "check", "--no-verify", MISMATCHED]
    code, tty_text = on_terminal(argv)
    assert code == 1
    assert "\x1b[1m" + MISMATCHED + "\x1b[0m" in tty_text  # the file name in bold
    problem = next(ln for ln in tty_text.splitlines() if "problem:" in ln)
    assert problem.lstrip().startswith("\x1b[31mproblem:") and problem.endswith("\x1b[0m")
    code, no_color = on_terminal(argv, NO_COLOR="1")
    assert code == 1 and not ANSI.search(no_color)
    code, plain = piped(argv)
    assert code == 1 and not ANSI.search(plain)
    # The same words either way: colour is the only difference.
    assert ANSI.sub("", tty_text).strip() == no_color.strip() == plain.strip()


def test_tables_are_aligned() -> None:
    code, text = piped([CLI, "resolve", "examples/configs/grpo_tiny_int8.yaml"])
    assert code == 0
    # The NeMo-RL judged, the file, then the table.
    header, *rows = [ln for ln in text.splitlines()[2:] if not ln.lstrip().startswith(
        ("warning:", "ok"))]
    starts = [m.start() for m in re.finditer(r"\S+", header)]
    assert header.split() == ["section", "backend", "quant", "rule", "source", "protocol",
                              "env", "worker"]
    assert len(rows) == 2
    for row in rows:
        assert [m.start() for m in re.finditer(r"\S+", row)] == starts, (header, row)


def test_a_problem_names_file_line_path_expected_and_given() -> None:
    code, text = piped([CLI, "check", "--no-verify", MISMATCHED])
    assert code == 1
    (problem,) = [ln.strip() for ln in text.splitlines() if "problem:" in ln]
    lines = (REPO / MISMATCHED).read_text().splitlines()
    key_line = next(i for i, ln in enumerate(lines, 1) if "worker_extension_cls_fqn:" in ln)
    expected = "nemo_rl.modelopt.models.policy.workers.automodel_quant_policy_worker." \
               "AutomodelQuantPolicyWorker"
    given = lines[key_line - 1].split(":", 1)[1].strip()
    # Upstream's sentence first (expected, given), then the path.
    assert problem.startswith(
        f"problem: {MISMATCHED}:{key_line}: quant_cfg requires worker_extension_cls_fqn="
        f"{expected}, got {given}. At policy.worker_extension_cls_fqn: "
    )
