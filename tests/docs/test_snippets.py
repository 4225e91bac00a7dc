"""The Markdown reader the doc tests rely on: a wrong parse would skip or mis-run snippets."""

from __future__ import annotations

from pathlib import Path

from tests.docs.snippets import REPO, commands, read_blocks

DOC = """\
# Title

```sh
make run    # a comment
nemo-rl-workers check a.yaml \\
    b.yaml  # exits 1
```

<!-- test: output -->
```text
shown
```

<!-- test: config exits 1 -->
```yaml
policy: {}
```

<!-- test: ray -->
Some prose in between drops the directive.

```python
print(1)
```
"""


def test_blocks_outputs_directives_and_commands(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(DOC)
    sh, config, python = read_blocks(doc)
    assert (sh.lang, sh.line, config.lang, python.lang) == ("sh", 3, "yaml", "python")
    assert sh.output is not None and sh.output.text == "shown\n"
    assert config.directive("config") == "exits 1" and config.directive("ray") is None
    assert python.directives == ()
    found = [(c.text, c.exit_code) for c in commands(sh)]
    assert found == [("make run    # a comment", 0),
                     ("nemo-rl-workers check a.yaml      b.yaml", 1)]


def test_the_real_documents_parse() -> None:
    guide = read_blocks(REPO / "docs" / "guides" / "worker-extensions.md")
    assert {b.lang for b in guide} == {"sh", "python", "yaml", "toml", "ini"}  # ini: pytest
