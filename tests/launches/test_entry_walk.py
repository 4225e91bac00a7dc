"""The entry is part of the verdict (issue 44, item 1): a config is judged as the entry
script that runs it hands it to its algorithm's `setup`, the entry's own edits and the tree
helpers it runs followed, read from source and never imported. Trees written here; the
corpus's NeMo-Gym distillation recipe in test_corpus_launches."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli_run import run_cli as run
from tests.revision.test_tree_rules import RULES_CONFIG, _tree
from tests.revision.trees import config, write

# The tree's helper an entry hands the whole config to, which edits it in place (as
# upstream's `setup_nemo_gym_config` sets `vllm_cfg.async_engine`).
HELPERS = '''
def enable_escape(config, tokenizer):
    loss = config["loss_fn"]
    loss["escape_shards"] = True
'''

# An entry shaped as upstream's: parse the command line, load, convert, edit, `setup`.
ENTRY = '''
import argparse
from omegaconf import OmegaConf
from nemo_rl.algorithms.fork import setup
from nemo_rl.algorithms.fork_helpers import enable_escape
from nemo_rl.utils.config import load_config, parse_hydra_overrides


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", type=str, default=None)
    return parser.parse_known_args()


def main():
    args, overrides = parse_args()
    config = load_config(args.config)
    if overrides:
        config = parse_hydra_overrides(config, overrides)
    config = OmegaConf.to_container(config, resolve=True)
    tokenizer = object()
{edit}
    setup(config, tokenizer)


if __name__ == "__main__":
    main()
'''

# The Policy's shard assertion (tensor_parallel_size 4: 8 shards; train_micro_batch_size 6)
# refuses RULES_CONFIG unless the setup, under loss_fn.escape_shards, sets the escape.
REFUSED = "assert config['train_micro_batch_size'] % shards == 0 fails"


def _tree_with_entry(tmp_path: Path, edit: str) -> tuple[Path, str, str]:
    root = _tree(tmp_path, algorithm=True)
    write(root, {"nemo_rl/algorithms/fork_helpers.py": HELPERS,
                 "examples/run_fork.py": ENTRY.replace("{edit}", edit)})
    return root, config(root, "fork.yaml", RULES_CONFIG), str(root / "examples/run_fork.py")


def _check(*argv: str) -> tuple[int, dict[str, Any], str]:
    code, out, err = run("check", "--no-verify", "--no-cache", "--json", *argv)
    report: dict[str, Any] = json.loads(out)
    return code, report, err


@pytest.fixture(autouse=True)
def _no_escape(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FORK_IGNORE_SHARDS", raising=False)


@pytest.mark.parametrize("edit", [
    '    config["loss_fn"]["escape_shards"] = True',  # an assignment into the config
    "    enable_escape(config, tokenizer)",  # the tree's helper, editing it in place
])
def test_an_entry_that_edits_the_config_before_setup_is_judged_as_it_runs(
        tmp_path: Path, edit: str) -> None:
    _, recipe, entry = _tree_with_entry(tmp_path, edit)
    code, bare, _ = _check(recipe)
    assert code == 1 and any(REFUSED in p["message"] for p in bare["problems"])
    assert bare["entry"] is None  # no entry named, no suite script: the config's shape
    code, launched, err = _check("--entry", entry, recipe)
    assert (code, launched["problems"], err) == (0, [], "")
    assert launched["entry"] == "examples/run_fork.py (named with --entry)"


def test_an_override_reaches_the_entry_s_walk(tmp_path: Path) -> None:
    _, recipe, entry = _tree_with_entry(tmp_path, "    pass")
    code, report, _ = _check("--entry", entry, recipe, "loss_fn.escape_shards=true")
    assert (code, report["problems"]) == (0, [])


def test_an_edit_the_walk_cannot_follow_is_undecided_with_its_line(tmp_path: Path) -> None:
    _, recipe, entry = _tree_with_entry(
        tmp_path, '    config["loss_fn"] = {"escape_shards": tokenizer.escape}')
    code, report, _ = _check("--entry", entry, recipe)
    # Not refused on a value the entry replaced, not passed: undecided, the line named.
    assert (code, report["problems"]) == (0, [])
    said = [s for s in report["skipped"] if "examples/run_fork.py:22" in s]
    assert said and "config['loss_fn'] is assigned at examples/run_fork.py:22 a value " \
        "this check does not compute" in said[0]


def test_a_config_the_entry_rebinds_to_what_the_walk_cannot_follow(tmp_path: Path) -> None:
    _, recipe, entry = _tree_with_entry(tmp_path, "    config = tokenizer.adapt(config)")
    code, report, _ = _check("--entry", entry, recipe)
    said = [s for s in report["skipped"] if s.startswith("entry: undecided:")]
    assert said and "examples/run_fork.py:22 binds it to tokenizer.adapt(config)" in said[0]
    # The config is then judged as loaded: the tree's refusal of it stands.
    assert code == 1 and any(REFUSED in p["message"] for p in report["problems"])


def test_the_entry_s_own_assertion_is_a_rule(tmp_path: Path) -> None:
    _, recipe, entry = _tree_with_entry(
        tmp_path, '    assert config["policy"]["train_micro_batch_size"] > 8, "too small"')
    code, report, _ = _check("--entry", entry, recipe)
    assert code == 1
    assert any("examples/run_fork.py:22 (run_fork.main)" in p["message"] and '"too small"' in
               p["message"] for p in report["problems"])


def test_a_named_entry_that_calls_no_setup_is_said_and_the_shape_chooses(
        tmp_path: Path) -> None:
    """A user's driver builds the tree's drivers itself: no `setup` to walk to."""
    _, recipe, _ = _tree_with_entry(tmp_path, "    pass")
    driver = tmp_path / "driver.py"
    driver.write_text("def main():\n    pass\n")
    code, report, err = _check("--entry", str(driver), recipe)
    assert err == "" and code == 1  # the tree's refusal of the config as loaded stands
    assert any(s.startswith(f"entry: {driver}: calls no algorithm's setup() of this NeMo-RL")
               for s in report["skipped"])


@pytest.mark.parametrize(("text", "said"), [
    ("def main(:\n", "is not valid Python"),
    (b"\xff\xfe not utf-8", "UTF-8"),
])
def test_a_named_entry_that_cannot_be_used_is_one_line_and_exit_2(
        tmp_path: Path, text: str | bytes, said: str) -> None:
    _, recipe, _ = _tree_with_entry(tmp_path, "    pass")
    entry = tmp_path / "driver.py"
    if isinstance(text, bytes):
        entry.write_bytes(text)
    else:
        entry.write_text(text)
    code, out, err = run("check", "--no-verify", "--no-cache", "--entry", str(entry), recipe)
    assert code == 2 and said in err and len(err.splitlines()) == 1


def test_a_fifo_as_the_entry_is_one_line_and_exit_2(tmp_path: Path) -> None:
    import os

    _, recipe, _ = _tree_with_entry(tmp_path, "    pass")
    fifo = tmp_path / "entry.py"
    os.mkfifo(fifo)
    code, _, err = run("check", "--no-verify", "--no-cache", "--entry", str(fifo), recipe)
    assert code == 2 and str(fifo) in err and len(err.splitlines()) == 1
