"""Launch scripts a test writes: the convention read exactly, anything outside it
undecided with its line, hostile input refused in one line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nemo_rl_workers.tree.launch import Launch
from nemo_rl_workers.tree.launch_scripts import (
    MAX_DEPTH,
    MAX_SCRIPT_BYTES,
    LaunchScriptError,
    read_campaign,
    read_launch_script,
    suite_script_of,
)

# The parts of upstream's common.env a launch depends on, as upstream writes them.
COMMON_ENV = """\
#!/bin/bash
set -eou pipefail
SCRIPT_DIR=$( cd -- "$( dirname -- "${BASH_SOURCE[0]}" )" &> /dev/null && pwd)
PROJECT_ROOT=$(realpath $SCRIPT_DIR/../../..)
exit_if_max_steps_reached() {
  STEPS_SO_FAR=$(jq '.' $JSON_METRICS || echo 0)
  if [[ $STEPS_SO_FAR -ge $MAX_STEPS ]]; then
      exit 0
  fi
}
EXP_NAME=${EXP_NAME:-$(basename $0 .sh)}
EXP_DIR=$SCRIPT_DIR/$EXP_NAME
LOG_DIR=$EXP_DIR/logs
JSON_METRICS=$EXP_DIR/metrics.json
CONFIG_PATH=$(echo $SCRIPT_DIR/${EXP_NAME}.yaml | \\
    sed 's#tests/test_suites#examples/configs/recipes#')
if [[ ! -f $CONFIG_PATH ]]; then
  echo "[ERROR] Config file $CONFIG_PATH not found"
  exit 1
fi
export PYTHONPATH=${PROJECT_ROOT}:${PYTHONPATH:-}
if [[ -n "${TEST_DRYRUN:-}" ]]; then
  exit
fi
"""

HEADER = """\
#!/bin/bash
SCRIPT_DIR=$( cd -- "$( dirname -- "${BASH_SOURCE[0]}" )" &> /dev/null && pwd)
source $SCRIPT_DIR/common.env
"""  # 3 lines: a body's first line is line 4

LAUNCH = """\
cd $PROJECT_ROOT
uv run examples/run_grpo.py \\
    --config $CONFIG_PATH \\
    grpo.max_num_steps=$MAX_STEPS \\
    logger.log_dir=$LOG_DIR \\
    $@ \\
    2>&1 | tee $EXP_DIR/run.log
uv run tests/check_metrics.py $JSON_METRICS 'data["train/loss"]["1"] < 1'
"""


class Tree:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.suites = root / "tests" / "test_suites" / "llm"
        self.recipes = root / "examples" / "configs" / "recipes" / "llm"
        self.suites.mkdir(parents=True)
        self.recipes.mkdir(parents=True)
        (self.suites / "common.env").write_text(COMMON_ENV)
        (root / "examples" / "run_grpo.py").write_text("")

    def script(self, name: str, body: str, *, header: bool = True) -> Path:
        (self.recipes / f"{name}.yaml").write_text("grpo: {}\n")
        path = self.suites / f"{name}.sh"
        path.write_text((HEADER if header else "") + body)
        return path

    def read(self, name: str, body: str) -> Launch:
        return read_launch_script(str(self.script(name, body)))


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    return Tree(tmp_path / "nemo-rl")


def test_the_convention(tree: Tree) -> None:
    launch = tree.read(
        "grpo-x-2n4g",
        "NUM_NODES=2\nGPUS_PER_NODE=4\nMAX_STEPS=3\n"
        "NUM_RUNS=$(( (MAX_STEPS + 2 - 1) / 2 ))\nexport NRL_X=on\n"
        "exit_if_max_steps_reached\n" + LAUNCH,
    )
    assert launch.undecided is None
    assert launch.config == str(tree.recipes / "grpo-x-2n4g.yaml")
    assert launch.entry == str(tree.root / "examples" / "run_grpo.py")
    assert launch.entry_why == "tests/test_suites/llm/grpo-x-2n4g.sh runs it (line 11)"
    assert launch.overrides == (
        "grpo.max_num_steps=3",
        f"logger.log_dir={tree.suites}/grpo-x-2n4g/logs",
    )
    assert launch.environ == {"NRL_X": "on", "PYTHONPATH": f"{tree.root}:"}
    assert (launch.num_nodes, launch.gpus_per_node) == (2, 4)
    assert launch.script == str(tree.suites / "grpo-x-2n4g.sh")


def test_decided_conditions_and_command_prefixes(tree: Tree) -> None:
    body = (
        'MODE=fast\nif [[ "$MODE" == f* && -z "${UNSET_BY_CALLER:-}" ]]; then\n'
        "  NUM_NODES=1\nelse\n  NUM_NODES=$(cat nodes)\nfi\n"
        "if [[ -f /no/such/file ]]; then echo hi; exit 1; fi\n"
        "true && cd $PROJECT_ROOT && \\\n"
        "NRL_Y=1 uv run --no-sync examples/run_grpo.py --config=$CONFIG_PATH a.b=1\n"
    )
    launch = tree.read("grpo-cond", body)
    assert launch.undecided is None
    assert launch.num_nodes == 1
    assert launch.environ["NRL_Y"] == "1"
    assert launch.overrides == ("a.b=1",)
    assert launch.config == str(tree.recipes / "grpo-cond.yaml")


def test_a_delegating_wrapper(tree: Tree) -> None:
    tree.script("grpo-base", "NUM_NODES=2\n" + LAUNCH)
    wrapper = tree.script(
        "grpo-base-tq_simple",
        "NUM_NODES=1\nBASE=$(echo \"grpo-base-tq_simple\" | sed -E 's/-tq_(simple|mooncake)$//')\n"
        'export EXP_NAME="grpo-base-tq_simple"\nbash "$SCRIPT_DIR/$BASE.sh" "$@"\n',
    )
    launch = read_launch_script(str(wrapper))
    assert launch.undecided is None
    assert launch.config == str(tree.recipes / "grpo-base-tq_simple.yaml")
    assert launch.entry == str(tree.root / "examples" / "run_grpo.py")
    assert launch.environ["EXP_NAME"] == "grpo-base-tq_simple"
    assert launch.num_nodes == 1  # what the wrapper (the script a campaign names) allocates
    assert "through tests/test_suites/llm/grpo-base.sh (`bash` at line 7)" in launch.entry_why


@pytest.mark.parametrize(
    "run", ['exec "$SCRIPT_DIR/grpo-base.sh" "$@"', "$SCRIPT_DIR/grpo-base.sh"]
)
def test_a_script_run_by_exec_or_by_its_path(tree: Tree, run: str) -> None:
    tree.script("grpo-base", "NUM_NODES=2\n" + LAUNCH)
    wrapper = tree.script("grpo-smoke", f"export EXP_NAME=grpo-smoke\n{run}\n")
    launch = read_launch_script(str(wrapper))
    assert launch.undecided is None
    assert launch.config == str(tree.recipes / "grpo-smoke.yaml")
    assert launch.num_nodes == 2


def test_the_callers_variables_stay_named(tree: Tree) -> None:
    launch = tree.read(
        "grpo-ckpt",
        "cd $PROJECT_ROOT\n"
        "uv run examples/run_grpo.py --config $CONFIG_PATH policy.model_name=$MY_CKPT\n",
    )
    assert launch.undecided is None
    assert launch.overrides == ("policy.model_name=$MY_CKPT",)
    assert launch.caller_inputs == ("MY_CKPT",)


@pytest.mark.parametrize(
    ("body", "line", "why"),
    [
        (
            "CONFIG_PATH=$(python pick.py)\n" + LAUNCH,
            4,
            "`$(python pick.py)` runs `python`, which the reader does not interpret",
        ),
        ('eval "NUM_NODES=4"\n' + LAUNCH, 4, "`eval` could change any variable"),
        (
            "for n in 1 2; do\n  NUM_NODES=$n\ndone\n" + LAUNCH,
            5,
            "NUM_NODES is set in the `for` loop at line 4",
        ),
        (
            "if [[ -d /opt/x ]]; then\n  export NRL_X=1\nfi\n" + LAUNCH,
            5,
            "NRL_X is set under the condition at line 4, which the reader cannot decide",
        ),
        (
            "if grep -q x y; then\n  cd /elsewhere\nfi\n"
            + LAUNCH.replace("cd $PROJECT_ROOT\n", ""),
            5,
            "the directory changes under the condition at line 4",
        ),
        ('case "$X" in a) NUM_NODES=1;; esac\n' + LAUNCH, 4, "a `case` statement"),
        (
            "source $SCRIPT_DIR/$(ls | head -1)\n" + LAUNCH,
            4,
            "sources a file the reader cannot name",
        ),
        ("echo nothing to run\n", 4, "the script ends without a training command"),
    ],
    ids=[
        "command-substitution",
        "eval",
        "for-assigns",
        "export-under-test",
        "cd-under-test",
        "case",
        "computed-source",
        "no-command",
    ],
)
def test_outside_the_convention_is_undecided_at_its_line(
    tree: Tree, body: str, line: int, why: str
) -> None:
    launch = tree.read("grpo-odd", body)
    assert launch.undecided is not None
    assert launch.undecided.startswith(f"tests/test_suites/llm/grpo-odd.sh:{line}: "), (
        launch.undecided
    )
    assert why in launch.undecided
    assert "\n" not in launch.undecided


def test_what_follows_the_launch_is_not_read(tree: Tree) -> None:
    launch = tree.read(
        "grpo-after",
        LAUNCH + "eval whatever\ncase x in *) ;; esac\n"
        "uv run examples/converters/convert.py --config=$EXP_DIR/c.yaml\n",
    )
    assert launch.undecided is None
    assert launch.overrides[0] == "grpo.max_num_steps=$MAX_STEPS"


def _refused(path: Path) -> str:
    with pytest.raises(LaunchScriptError) as caught:
        read_launch_script(str(path))
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_hostile_inputs_are_refused_in_one_line(tree: Tree, tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.sh"
    os.mkfifo(fifo)
    assert "is not a regular file" in _refused(fifo)
    huge = tmp_path / "huge.sh"
    huge.write_bytes(b"# x\n" * (MAX_SCRIPT_BYTES // 4 + 1))
    assert f"over the {MAX_SCRIPT_BYTES}-byte limit" in _refused(huge)
    binary = tmp_path / "binary.sh"
    binary.write_bytes(b"\x7fELF\x02\x01\x01\x00\xff\xfe")
    assert "is not UTF-8 text" in _refused(binary)
    nul = tmp_path / "nul.sh"
    nul.write_bytes(b"echo a\x00b\n")
    assert "NUL byte" in _refused(nul)
    assert "is not a regular file" in _refused(tmp_path)
    assert "no such file" in _refused(tmp_path / "missing.sh")
    # nesting past what the reader follows: undecided or refused, in one line either way
    for deep in (
        "[[ " + "! " * 200_000 + "x ]]\n",
        "X=" + "${Y:-" * 5_000 + "}" * 5_000 + "\n",
        "if true; then\n" * 500 + "fi\n" * 500,
    ):
        script = tmp_path / "deep.sh"
        script.write_text(deep + LAUNCH)
        try:
            launch = read_launch_script(str(script))
        except LaunchScriptError as e:
            assert "\n" not in str(e)
        else:
            assert launch.undecided is not None and "\n" not in launch.undecided


def test_a_source_loop_and_deep_delegation_are_refused(tree: Tree) -> None:
    (tree.suites / "a.env").write_text("source $SCRIPT_DIR/b.env\n")
    (tree.suites / "b.env").write_text("source $SCRIPT_DIR/a.env\n")
    message = _refused(tree.script("grpo-loop", "source $SCRIPT_DIR/a.env\n" + LAUNCH))
    assert message.startswith(
        "tests/test_suites/llm/b.env:1: reads tests/test_suites/llm/a.env again"
    )
    assert "a.env -> tests/test_suites/llm/b.env -> " in message
    wrapper = tree.script("grpo-self", 'bash "$SCRIPT_DIR/grpo-self.sh"\n')
    assert "a `source`/`bash` loop" in _refused(wrapper)
    for i in range(MAX_DEPTH + 1):
        (tree.suites / f"d{i}.env").write_text(f"source $SCRIPT_DIR/d{i + 1}.env\n")
    (tree.suites / f"d{MAX_DEPTH + 1}.env").write_text("")
    deep = _refused(tree.script("grpo-deep", "source $SCRIPT_DIR/d0.env\n" + LAUNCH))
    assert f"nest deeper than {MAX_DEPTH} files" in deep


def test_a_sourced_fifo_is_refused_naming_the_line(tree: Tree) -> None:
    os.mkfifo(tree.suites / "pipe.env")
    message = _refused(tree.script("grpo-fifo", "source $SCRIPT_DIR/pipe.env\n" + LAUNCH))
    assert message == (
        "tests/test_suites/llm/pipe.env (read at tests/test_suites/llm/grpo-fifo.sh:4): "
        "is not a regular file"
    )


def test_a_campaign_list(tree: Tree) -> None:
    tree.script("grpo-a", LAUNCH)
    listing = tree.root / "tests" / "test_suites" / "nightly.txt"
    listing.write_text(
        "# header\n\ntests/test_suites/llm/grpo-a.sh\n  \n"
        "tests/test_suites/llm/gone.sh  # removed upstream\n"
    )
    entries = read_campaign(str(listing))
    assert [(e.line, e.script, e.missing) for e in entries] == [
        (3, "tests/test_suites/llm/grpo-a.sh", None),
        (5, "tests/test_suites/llm/gone.sh", "no such file"),
    ]
    assert entries[0].path == str(tree.suites / "grpo-a.sh")
    fifo = tree.root / "tests" / "test_suites" / "fifo.txt"
    os.mkfifo(fifo)
    with pytest.raises(LaunchScriptError, match="fifo.txt: is not a regular file"):
        read_campaign(str(fifo))


def test_a_recipes_suite_script(tree: Tree) -> None:
    tree.script("grpo-a", LAUNCH)
    assert suite_script_of(str(tree.recipes / "grpo-a.yaml")) == str(tree.suites / "grpo-a.sh")
    (tree.recipes / "grpo-alone.yaml").write_text("grpo: {}\n")
    assert suite_script_of(str(tree.recipes / "grpo-alone.yaml")) is None
    # a script of that name that launches another recipe is not that recipe's
    tree.script(
        "grpo-other",
        "cd $PROJECT_ROOT\n"
        "uv run examples/run_grpo.py --config examples/configs/recipes/llm/grpo-a.yaml\n",
    )
    assert suite_script_of(str(tree.recipes / "grpo-other.yaml")) is None


def test_the_recipe_path_is_derived_from_common_env(tree: Tree) -> None:
    # Another tree's common.env maps scripts to recipes another way: the reader follows it.
    mine = COMMON_ENV.replace("#examples/configs/recipes#", "#examples/mine#")
    (tree.suites / "common.env").write_text(mine)
    launch = tree.read("grpo-mine", LAUNCH)
    assert launch.config == str(tree.root / "examples" / "mine" / "llm" / "grpo-mine.yaml")
