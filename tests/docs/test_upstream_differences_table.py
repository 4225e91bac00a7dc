"""The guide's "Differences from upstream NeMo-RL" table: every row links to a test that exists."""

from __future__ import annotations

import ast
import re

from tests.docs.snippets import REPO

GUIDE = REPO / "docs" / "guides" / "worker-extensions.md"
LINK = re.compile(r"\[`(test_\w+)`\]\(\.\./\.\./(tests/[\w/]+\.py)\)")


def section() -> str:
    text = GUIDE.read_text(encoding="utf-8")
    return text.split("## Differences from upstream NeMo-RL", 1)[1].split("\n## ", 1)[0]


def test_every_row_links_to_a_test_that_exists() -> None:
    rows = [ln for ln in section().splitlines() if ln.startswith("| ") and "---" not in ln][1:]
    assert len(rows) >= 6
    for row in rows:
        links = LINK.findall(row)
        assert links, f"row without a test link: {row[:80]}"
        for name, path in links:
            tree = ast.parse((REPO / path).read_text(encoding="utf-8"))
            defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
            assert name in defined, f"{path} has no {name}"


def test_the_rows_name_each_departure_of_the_issue() -> None:
    text = section()
    for words in ("never writes into its input", "Megatron block is enabled",
                  "neither Megatron nor Automodel", "ModelOpt config name or a path to a recipe",
                  "quant_cfg requires worker_extension_cls_fqn=<Q>, got <X>."):
        assert words in text
