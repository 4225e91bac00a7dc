"""The shell subset's values: what is decided, and what is left Unknown."""

from __future__ import annotations

import pytest

from nemo_rl_workers.tree.shell_syntax import AndOr, Conditional, Word, parse_all
from nemo_rl_workers.tree.shell_values import (
    ShellState,
    Text,
    Unknown,
    decide_test,
    expand_fields,
    expand_string,
    substitution_command,
)


def _state(**variables: str) -> ShellState:
    state = ShellState(variables={k: Text(v) for k, v in variables.items()}, where="x.sh:3")
    state.cwd = Text("/work")
    return state


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("$(( (MAX + PER - 1) / PER ))", "3"),
        ("$(( -7 / 2 ))", "-3"),  # bash truncates toward zero
        ("${NOPE:-$(basename /a/b/grpo-x.sh .sh)}", "grpo-x"),
        ("${UNSET:-d}-${MAX:+set}-${UNSET:+no}", "d-set-"),
        (
            "$(echo /r/tests/test_suites/llm/x.yaml"
            " | sed 's#tests/test_suites#examples/configs/recipes#')",
            "/r/examples/configs/recipes/llm/x.yaml",
        ),
        ("$(echo grpo-a-tq_mooncake | sed -E 's/-tq_(simple|mooncake)$//')", "grpo-a"),
        ("$(echo a.b.c | sed 's/\\./-/g')", "a-b-c"),
        ("$(dirname -- /a/b/c.sh)", "/a/b"),
        ('$( cd -- "$( dirname -- /etc/x.sh )" &> /dev/null && pwd)', "/etc"),
        ("$( cd -- /no/such/dir &> /dev/null && pwd)", ""),  # `cd` fails: `pwd` never runs
        ("'$MAX'\"$MAX\"\\$", "$MAX7$"),
        ("${#EXP}", "4"),
        ("${EXP%.sh}${EXP#gr}", "grpopo"),
    ],
)
def test_decided_expansions(raw: str, expected: str) -> None:
    assert expand_string(raw, _state(MAX="7", PER="3", EXP="grpo")) == Text(expected)


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ("$(python pick.py)", "runs `python`"),
        ("$(jq .x f.json || echo 0)", "runs `jq`"),
        ("$(( X = 3 ))", "arithmetic the reader does not interpret"),
        ("${EXP/a/b}", "parameter expansion the reader does not interpret"),
        ("$RANDOM", "known only when the script runs"),
        ("$(echo x | sed 's/\\(a*\\)*//')", "a repeated group"),
        ("$(echo x | sed -n 'p')", "is not interpreted"),
    ],
)
def test_unknown_expansions_say_where_and_why(raw: str, why: str) -> None:
    value = expand_string(raw, _state(EXP="grpo"))
    assert isinstance(value, Unknown)
    assert value.why.startswith("x.sh:3: ")
    assert why in value.why


def test_the_callers_variables_and_defaults() -> None:
    state = _state()
    assert expand_string("$CKPT/x", state) == Text("$CKPT/x", frozenset({"CKPT"}))
    assert expand_string("${PYTHONPATH:-}", state) == Text("")  # a default: taken as unset
    assert expand_string("${N:=4}", state) == Text("4")
    assert state.variables["N"] == Text("4")
    assert expand_fields(Word('"$@"', 1), state) == []
    assert expand_fields(Word("a$SPLIT", 1), _state(SPLIT="b c")) == [Text("ab"), Text("c")]


@pytest.mark.parametrize(
    ("test", "expected"),
    [
        ('[[ "$B" =~ ^(grpo|dapo)- ]]', True),
        ('[[ ! "$B" =~ ^(grpo|dapo)- ]]', False),
        ('[[ "$B" != *-tq_simple && "$B" != *-tq_mooncake ]]', True),
        ('[[ "$B" == "grpo-*" ]]', False),  # quoted: a literal, not a pattern
        ('[[ -n "${TEST_DRYRUN:-}" ]]', False),
        ("[[ $N -ge 3 ]]", True),
        ("[[ -f /etc/passwd ]]", None),  # the file system is the run's, not the reader's
        ('[[ -z "$CALLER" ]]', None),
        ("[[ $(jq . m.json) -ge 3 ]]", None),
        ("[[ -f /x || $N -ge 3 ]]", True),
    ],
)
def test_conditions(test: str, expected: bool | None) -> None:
    (statement,) = parse_all(test)
    assert isinstance(statement, AndOr)
    command = statement.first.commands[0]
    assert isinstance(command, Conditional)
    assert decide_test(command.words, _state(B="grpo-x", N="4")) is expected


def test_sed_scripts() -> None:
    assert isinstance(substitution_command("s#a#b#", extended=False), tuple)
    assert substitution_command("s#a#b#x", extended=False) == "the flags `x`"
    assert substitution_command("y/a/b/", extended=False) == "not an `s` command"
    assert isinstance(substitution_command("s/[[:alpha:]]//", extended=True), str)
