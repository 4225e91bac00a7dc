"""The tool reads YAML as OmegaConf.load does, under whichever OmegaConf is installed.

The oracle is OmegaConf itself (2.4 in this repository's CI pins, 2.3.1 in NeMo-RL's lock:
`make test-py313` runs this file there): every corpus config, and each edge of the dialect,
gives the same data through `parse_yaml` as through `OmegaConf.load`, or both refuse it.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pytest
from omegaconf import OmegaConf

from nemo_rl_workers.reading.safe_read import ConfigLoadError, parse_yaml
from tests.corpus import NEMO_RL, NEMO_RL_2025_09

ROOT = Path(__file__).resolve().parents[2]
CORPORA = [NEMO_RL, NEMO_RL_2025_09]


def _through_omegaconf(path: Path) -> Any:
    return OmegaConf.to_container(OmegaConf.load(path), resolve=False)


def _through_the_tool(text: str) -> Any:
    data: Any = parse_yaml(text, "f.yaml")[1]
    return OmegaConf.to_container(OmegaConf.create(data), resolve=False)


def _same(a: Any, b: Any) -> bool:
    """Equal data, NaN equal to NaN. Key order is not compared: OmegaConf 2.3 puts the keys a
    merge (`<<: *teacher`) brings in first even where the mapping overrides them, 2.4 keeps
    an overridden key where it is written, and nothing NeMo-RL does depends on it."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, dict) and isinstance(b, dict):
        return set(a) == set(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


@pytest.mark.slow
@pytest.mark.parametrize("corpus", CORPORA, ids=lambda p: p.name)
def test_every_corpus_config_reads_as_omegaconf_reads_it(corpus: Path) -> None:
    if not corpus.is_dir():
        pytest.skip(f"corpus absent: {corpus}")
    files = sorted(corpus.joinpath("examples").rglob("*.yaml"))
    assert len(files) > 50
    for path in files:
        assert _same(_through_the_tool(path.read_text()), _through_omegaconf(path)), path


EDGES = {
    "floats as YAML 1.2 writes them": "lr: 1e-5\nb: 1.0e+3\nc: .5\nd: -.inf\ne: .nan\nf: 1_000.5\n",
    "integers and strings": "a: 10\nb: 0x1F\nc: '1e-5'\nd: 1e\ne: yes\nf: ~\n",
    "timestamps stay strings": "day: 2001-12-14\nat: 2001-12-14t21:59:43.10-05:00\n",
    "merge keys, overridden": "base: &b {x: 1, y: 2}\nuse:\n  <<: *b\n  y: 3\n",
    "paths": "p: !!python/object/apply:pathlib.Path [a, b]\n",
    "interpolations untouched": "a: ${b}\nb: ${oc.env:HOME,x}\n",
}


@pytest.mark.parametrize("text", EDGES.values(), ids=list(EDGES))
def test_each_edge_of_the_dialect(text: str, tmp_path: Path) -> None:
    path = tmp_path / "f.yaml"
    path.write_text(text)
    assert _same(_through_the_tool(text), _through_omegaconf(path))


REFUSED = {
    "a duplicate key": "a: 1\nb: 2\na: 3\n",
    "a duplicate nested key": "a: {x: 1, x: 2}\n",
    "a python object": "a: !!python/object/apply:os.system [ls]\n",
}


@pytest.mark.parametrize("text", REFUSED.values(), ids=list(REFUSED))
def test_both_refuse(text: str, tmp_path: Path) -> None:
    path = tmp_path / "f.yaml"
    path.write_text(text)
    with pytest.raises(Exception):  # noqa: B017 - OmegaConf's own error types vary by release
        OmegaConf.load(path)
    with pytest.raises(ConfigLoadError) as refused:
        parse_yaml(text, "f.yaml")
    assert refused.value.kind == "yaml" and "\n" not in str(refused.value)


@pytest.mark.parametrize("text", [
    "p: !!python/object/apply:pathlib.Path scalar\n",
    "p: !!python/object/apply:pathlib.Path [1, 2]\n",
    "p: !!python/object/apply:pathlib.WindowsPath [a]\n",
])
def test_a_hostile_path_tag_is_one_line(text: str) -> None:
    with pytest.raises(ConfigLoadError) as refused:
        parse_yaml(text, "f.yaml")
    assert str(refused.value).startswith("f.yaml: ") and "\n" not in str(refused.value)


def test_no_private_omegaconf_module_is_read() -> None:
    """The distribution admits omegaconf>=2.3: a private module of 2.4 must not be needed."""
    private = re.compile(r"^\s*(from|import)\s+omegaconf\._", re.M)
    source = (ROOT / "nemo_rl_workers").rglob("*.py")
    offenders = [p for p in source if private.search(p.read_text())]
    assert offenders == []
