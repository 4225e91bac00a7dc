"""A `--nemo-rl` path with a newline is one escaped line in every command, as `audit`
escapes it (issue 35: `check`, `resolve`, `list` and `migrate` printed two); and a module
with a valid coding cookie is read as the cookie says, not refused as "not UTF-8"."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from nemo_rl_workers.tree.source.reading import SourceProblem, read_source
from tests.audit.tree import write_tree
from tests.cli_run import Ran, run_cli
from tests.hardening.test_written_files import BODY, WORKERS

CONFIG = "policy:\n  automodel_cfg: {enabled: true}\n  megatron_cfg: {enabled: false}\n"
TREES = Path(__file__).resolve().parents[1] / "audit_ext" / "trees" / "mini"


def run(argv: list[str]) -> Ran:
    return run_cli(*argv)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """The mini tree in a folder whose name holds a newline."""
    root = tmp_path / "nl\ntree"
    for source in TREES.rglob("*.txt"):
        target = root / source.relative_to(TREES)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target.with_name(target.name.removesuffix(".txt")))
    return root


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "c.yaml"
    path.write_text(CONFIG, encoding="utf-8")
    return path


COMMANDS = {
    "check": ["check", "--no-verify"],
    "resolve": ["resolve"],
    "migrate": ["migrate"],
    "list": ["list"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_missing_tree_with_a_newline_is_one_escaped_line(
    command: str, tree: Path, config: Path
) -> None:
    missing = tree / "nope"
    args = [*COMMANDS[command], "--nemo-rl", str(missing)]
    code, out, err = run(args if command == "list" else [*args, str(config)])
    shown = str(missing).replace("\n", "\\n")
    prefix = "nemo-rl-workers migrate" if command == "migrate" else "nemo-rl-workers"
    assert (code, out, err) == (2, "", f"{prefix}: --nemo-rl {shown}: no such folder\n")


def test_verify_static_names_a_missing_tree_on_one_line(tree: Path) -> None:
    missing = tree / "nope"
    code, out, err = run(["verify", "collections.OrderedDict", "--protocol", "PolicyWorker",
                          "--static", "--nemo-rl", str(missing)])
    shown = str(missing).replace("\n", "\\n")
    assert (code, out, err) == (2, "", f"nemo-rl-workers: --nemo-rl {shown}: no such folder\n")


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_tree_with_a_newline_is_named_on_one_line(
    command: str, tree: Path, config: Path
) -> None:
    args = [*COMMANDS[command], "--nemo-rl", str(tree)]
    code, out, err = run(args if command == "list" else [*args, str(config)])
    label = str(tree).replace("\n", "\\n") + " (undecided schema; --nemo-rl)"
    if command == "migrate":  # the config is kept: the tree's schema is not the new one
        assert code == 0 and err.splitlines()[0].startswith(
            "nemo-rl-workers migrate: 1 file(s) left unchanged: they are on the schema of the "
            f"NeMo-RL they belong to, {label}; ")
        assert len(err.splitlines()) == 1
    else:
        assert out.splitlines()[0] == f"NeMo-RL: {label}"
    assert "nl\ntree" not in out + err


def test_a_module_with_a_latin_1_cookie_is_read_as_latin_1(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_bytes('# -*- coding: latin-1 -*-\nNAME = "caf\xe9"\n'.encode("latin-1"))
    assert read_source(module) == '# -*- coding: latin-1 -*-\nNAME = "café"\n'


@pytest.mark.parametrize(("data", "message"), [
    (b'NAME = "\xe9"\n', "is not UTF-8 text (byte 0xe9 at offset 8)"),
    (b'# coding: ascii\nNAME = "\xe9"\n', "is not ascii text (byte 0xe9 at offset 24)"),
    (b"# coding: no-such-codec\n", "has an unusable coding cookie (unknown encoding: "
     "no-such-codec)"),
    (b"\xef\xbb\xbf# coding: latin-1\n", "has an unusable coding cookie (encoding problem: "
     "utf-8)"),
])
def test_a_module_its_cookie_cannot_decode_is_one_problem(
    tmp_path: Path, data: bytes, message: str
) -> None:
    module = tmp_path / "m.py"
    module.write_bytes(data)
    assert read_source(module) == SourceProblem(str(module), message)


def test_an_audited_tree_with_a_latin_1_module_is_audited(tmp_path: Path) -> None:
    tree = write_tree(tmp_path / "checkout", driver_body=BODY, workers=WORKERS)
    (tree / "nemo_rl" / "legacy.py").write_bytes(
        '# -*- coding: latin-1 -*-\n"""Caf\xe9."""\n'.encode("latin-1"))
    code, out, err = run(["audit", "--nemo-rl", str(tree), "--no-cache"])
    assert (code, err) == (1, "")
    assert out.splitlines()[-1].startswith("audit: 1 drivers, 2 worker classes")
