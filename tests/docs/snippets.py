"""The fenced blocks of the project's Markdown, and how the doc tests run them.

Conventions a document follows (they are invisible when the Markdown is rendered):

- ```sh: one command per line (a trailing backslash continues it), run with bash from
  the repository root, `.venv/bin` first on PATH. A trailing `# exits N` says the
  command is expected to exit with N; otherwise it must exit 0.
- ```python: exec'd in a fresh namespace, from the repository root.
- `<!-- test: DIRECTIVE -->` on the line before a fence says more:
  `output` on a ```text or ```json block: the exact stdout of the last command (or of
  the python block) right above it; `ray`: the block needs the session's Ray cluster
  (its address is passed as RAY_ADDRESS); `config` / `config exits N`: a ```yaml block is
  a whole config, checked with `nemo-rl-workers check --no-verify`; `pre-commit-config`,
  `github-workflow`: special YAML snippets (see test_guide.py); a ```toml block must be
  part of the template project's pyproject.toml; `corpus`: a ```sh block reads
  `../shared/corpus/nemo-rl` and is skipped where that tree is absent; `nemo-rl-checkout`
  (a ```sh block run at the root of a NeMo-RL checkout; its `output` is what the commands
  print, stderr included), `tool-release` (a ```sh block run in a clone of this repository)
  and `nemo-rl-workflow` (a GitHub Actions job for a NeMo-RL checkout) run in the copies
  test_ci_templates.py makes.

`shell_env` and `run_hook` run commands and pre-commit hooks the way users do.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
VENV_BIN = REPO / ".venv" / "bin"
TIMEOUT_S = 300

FENCE = re.compile(r"^```(?P<lang>[\w-]*)\s*$")
DIRECTIVE = re.compile(r"^<!--\s*test:\s*(?P<text>.*?)\s*-->\s*$")
EXITS = re.compile(r"\s+#\s*exits\s+(?P<code>\d+)\s*$")


@dataclass(frozen=True)
class Command:
    text: str
    exit_code: int


@dataclass
class Block:
    doc: Path
    line: int  # of the opening fence, 1-based
    lang: str
    text: str
    directives: tuple[str, ...] = ()
    # The `<!-- test: output -->` block right after this one, if any.
    output: Block | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return f"{self.doc.relative_to(REPO)}:{self.line}"

    def directive(self, word: str) -> str | None:
        """The rest of the first directive starting with `word` ('' when bare), else None."""
        for d in self.directives:
            head, _, rest = d.partition(" ")
            if head == word:
                return rest.strip()
        return None


def read_blocks(doc: Path) -> list[Block]:
    """Every fenced block of `doc`, in order; `output` blocks are attached to the one above."""
    lines = doc.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    pending: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        directive = DIRECTIVE.match(line)
        fence = FENCE.match(line)
        if directive:
            pending.append(directive["text"])
        elif fence:
            end = i + 1
            while end < len(lines) and lines[end].rstrip() != "```":
                end += 1
            if end == len(lines):
                raise ValueError(f"{doc}:{i + 1}: fence never closed")
            body = "\n".join(lines[i + 1:end]) + "\n"
            block = Block(doc, i + 1, fence["lang"], body, tuple(pending))
            pending = []
            if block.directive("output") is not None and blocks:
                blocks[-1].output = block
            else:
                blocks.append(block)
            i = end
        elif line.strip():
            pending = []
        i += 1
    return blocks


def commands(block: Block) -> list[Command]:
    """The commands of a ```sh block (continuations joined, comment lines dropped)."""
    found: list[Command] = []
    current = ""
    for raw in block.text.splitlines():
        if not current and (not raw.strip() or raw.lstrip().startswith("#")):
            continue
        if raw.endswith("\\"):
            current += raw[:-1] + " "
            continue
        current += raw
        marker = EXITS.search(current)
        code = int(marker["code"]) if marker else 0
        text = current[: marker.start()] if marker else current
        found.append(Command(text.strip(), code))
        current = ""
    if current:
        raise ValueError(f"{block.name}: a command ends with a backslash")
    return found


def shell_env(tmp_path: Path, ray_address: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "NO_COLOR")}
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    env["TMPDIR"] = str(tmp_path)
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # a block running the corpus tree writes nothing into it
    env.setdefault("HF_HOME", str(tmp_path / "hf"))
    if ray_address is not None:
        env["RAY_ADDRESS"] = ray_address
    return env


# Configs that pass every rule, and YAML files a config hook must leave alone.
GOOD_CONFIGS = (
    "examples/configs/grpo_tiny.yaml",
    "examples/configs/grpo_tiny_int8.yaml",
    "research/template_project/configs/single_update.yaml",
)
NOT_CONFIGS = (".pre-commit-hooks.yaml", ".github/workflows/ci.yml", "docs/schemas/x.json")


def run_hook(hook: Mapping[str, Any], tmp_path: Path) -> None:
    """pre-commit's contract: `entry [args] files...` on the staged files `files` matches."""
    pattern = re.compile(hook["files"])
    assert all(pattern.search(f) for f in GOOD_CONFIGS), hook
    assert not any(pattern.search(f) for f in NOT_CONFIGS), hook
    argv = [*hook["entry"].split(), *hook.get("args", [])]
    env = shell_env(tmp_path)
    good = subprocess.run([*argv, *GOOD_CONFIGS], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=TIMEOUT_S, check=False)
    assert good.returncode == 0, good.stdout + good.stderr
    # A hook must also fail: on the shipped R5 mismatch (check), on an outdated config (migrate).
    bad_file, says = "examples/configs/mismatched_quant.yaml", "mismatched_quant.yaml:6: quant_cfg"
    if "migrate" in argv:
        bad_file, says = "docs/examples/outdated_grpo.yaml", "policy.dtensor_cfg -> policy."
    bad = subprocess.run([*argv, bad_file], cwd=REPO, env=env, capture_output=True, text=True,
                         timeout=TIMEOUT_S, check=False)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert says in bad.stdout, bad.stdout
