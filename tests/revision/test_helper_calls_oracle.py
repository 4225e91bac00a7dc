"""The helper runner (`interpret.helpers`) against Python itself: generated helpers made
of the statements it runs (assignments and tuple unpacking, `if` on config values, `for`
over `.items()`, `enumerate`, `zip`, `range` and lists, dict displays with `**`,
`.append`/`.add`, `return`), each run on generated config blocks both by the interpreter
and by the runner, which reads the source only. Where the runner answers, its answer is
the interpreter's; on these shapes it must answer. The generated source is this test's
own: it is executed."""

from __future__ import annotations

import ast
import os
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from nemo_rl_workers.interpret.expressions import Environ, Known, Scope
from nemo_rl_workers.interpret.helpers import Budget, HelperEvaluator
from nemo_rl_workers.tree.source_kept import tree_source
from tests.revision.trees import write

STATEMENTS = [
    "for key, value in cfg['m'].items():\n        acc += value",
    "for i, x in enumerate(cfg['xs']):\n        out.append(i * x)",
    "for a, b in zip(cfg['xs'], cfg['ys']):\n        acc += a - b",
    "for i in range(cfg['n']):\n        acc += i",
    "for x in cfg['xs']:\n        if x > cfg['n']:\n            seen.add(x)",
    "merged = {**cfg['m'], **{'extra': acc}}",
    "merged = {**merged, 'n': cfg.get('n', 0)}",
    "if acc > cfg['n']:\n        acc = acc - 1\n    else:\n        acc = acc + 2",
    "first, second = cfg['pair']",
    "acc += first * 2 - second",
    "out.append(len(merged))",
    "seen.add(cfg.get('missing', 5))",
]

HEAD = "def helper(cfg):\n    acc = 0\n    out = []\n    seen = set()\n    merged = {}\n" \
       "    first, second = 0, 0\n"
TAIL = "    return [acc, out, sorted(seen), merged, first, second]\n"

blocks = st.fixed_dictionaries({
    "m": st.dictionaries(st.sampled_from(["a", "b", "c"]), st.integers(-5, 5), max_size=3),
    "xs": st.lists(st.integers(-3, 6), max_size=5),
    "ys": st.lists(st.integers(-3, 6), max_size=5),
    "n": st.integers(0, 6),
    "pair": st.tuples(st.integers(-4, 4), st.integers(-4, 4)).map(list),
})


@settings(max_examples=120, deadline=None)
@given(st.lists(st.sampled_from(STATEMENTS), min_size=1, max_size=6), blocks)
def test_the_runner_s_answer_is_the_interpreter_s(statements: list[str],
                                                   block: dict[str, Any]) -> None:
    source = HEAD + "".join(f"    {s}\n" for s in statements) + TAIL
    namespace: dict[str, Any] = {}
    exec(compile(source, "<generated helper>", "exec"), namespace)  # this test's own source
    expected = namespace["helper"](block)
    with tempfile.TemporaryDirectory() as folder:
        root = write(Path(folder), {"nemo_rl/__init__.py": "", "nemo_rl/gen.py": source})
        tree = tree_source(root)
        module = tree.module("nemo_rl.gen")
        assert module is not None
        scope = Scope(names={"cfg": Known(block, "block")}, environ=Environ(os.environ),
                      imports=module.imports)
        runner = HelperEvaluator(scope, tree, 0, "nemo_rl.gen", Budget())
        got = runner.value(ast.parse("helper(cfg)", mode="eval").body)
    assert isinstance(got, Known), (got, source)
    assert got.value == expected, source
