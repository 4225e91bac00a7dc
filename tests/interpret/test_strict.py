"""An unknown syntax shape is undecided for users and an error in strict mode (the suite's).

Before `interpret.strict`, a `match` statement in a walked body was passed over in silence:
the assertion inside it was neither judged nor said undecided.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from nemo_rl_workers.interpret.expressions import Environ, Evaluator, Known, Scope, Unknown
from nemo_rl_workers.interpret.strict import STRICT_ENV, UnknownShape
from nemo_rl_workers.interpret.walk import SetupWalk, walk_scope
from nemo_rl_workers.tree.source import read_tree

SETUP = '''
def setup(config):
    match config["mode"]:
        case "a":
            assert config["n"] > 1, "n must exceed one"
'''


def _walk(tmp_path: Path) -> SetupWalk:
    package = tmp_path / "nemo_rl"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "fork.py").write_text(SETUP)
    tree = read_tree(tmp_path, packages=["nemo_rl"])
    module = tree.module("nemo_rl.fork")
    assert module is not None
    function = module.functions["setup"]
    scope = walk_scope(function, module, Environ({}),
                       {"config": Known({"mode": "a", "n": 0}, "")})
    return SetupWalk(function, scope, tmp_path, frozenset(), tree)


def test_a_statement_of_unknown_shape_is_undecided_for_users(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(STRICT_ENV, raising=False)
    walk = _walk(tmp_path)
    walk.run()
    [rule] = walk.rules
    assert rule.verdict == "undecided"
    assert rule.reason == "it holds a Match at nemo_rl/fork.py:3, a shape this check does " \
                          "not follow"


def test_a_statement_of_unknown_shape_fails_in_strict_mode(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(STRICT_ENV, "1")
    with pytest.raises(UnknownShape, match="nemo_rl/fork.py:3: .* Match node"):
        _walk(tmp_path).run()


class _Novel(ast.expr):
    """An expression node of a type no Python has yet (fake, for the test)."""

    _fields = ()


def test_an_expression_of_unknown_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    evaluator = Evaluator(Scope(names={}, environ=Environ({})))
    monkeypatch.delenv(STRICT_ENV, raising=False)
    value = evaluator.value(_Novel())
    assert isinstance(value, Unknown) and "_Novel" in value.reason
    monkeypatch.setenv(STRICT_ENV, "1")
    with pytest.raises(UnknownShape, match="_Novel node"):
        evaluator.value(_Novel())
    # A shape deliberately not computed is no error: it is undecided, said so.
    comprehension = ast.parse("[x for x in y]", mode="eval").body
    assert isinstance(evaluator.value(comprehension), Unknown)
