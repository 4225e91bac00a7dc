"""The fast loading path gives exactly the answers of the path every config took before.

Fast: merged parents reused across loads, and `${...}` resolved by OmegaConf on only the
part of the config interpolation touches. Reference: every parent merged anew and OmegaConf
over the whole merged config (both caches declined). Compared on every corpus file, as
found and migrated, cold and with every cache warm, and on the shapes of interpolation and
`defaults:` the corpus does not hold.
"""

from __future__ import annotations

import io
import shutil
from pathlib import Path
from typing import Any

import pytest

from nemo_rl_workers.commands.migrate import run_migrate
from nemo_rl_workers.reading import loader
from nemo_rl_workers.reading.loader import ConfigLoadError, load_config, load_config_located

from .conftest import CORPUS

Outcome = tuple[str, object, object]


def _outcome(path: Path) -> Outcome:
    try:
        config, lines = load_config_located(path)
    except ConfigLoadError as err:
        return ("error", err.kind, str(err))
    return ("ok", repr(config), lines)


def _compare(files: list[Path]) -> int:
    loader.forget_loads()
    cold = {f: _outcome(f) for f in files}
    warm = {f: _outcome(f) for f in files}
    with loader.reference_loads():
        reference = {f: _outcome(f) for f in files}
    assert [f for f in files if cold[f] != reference[f]] == []
    assert [f for f in files if warm[f] != reference[f]] == []
    return sum(1 for o in reference.values() if o[0] == "ok")


@pytest.mark.slow
def test_every_corpus_file_as_found_resolves_as_omegaconf_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if not CORPUS.is_dir():
        pytest.skip(f"corpus absent: {CORPUS}")
    monkeypatch.delenv("HF_HOME", raising=False)  # one recipe then fails to resolve: same error
    files = sorted(CORPUS.rglob("*.yaml"))
    assert _compare(files) > 200


@pytest.mark.slow
def test_every_migrated_corpus_file_resolves_as_omegaconf_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not CORPUS.is_dir():
        pytest.skip(f"corpus absent: {CORPUS}")
    copy = tmp_path / "configs"
    shutil.copytree(CORPUS, copy)
    assert run_migrate([str(copy), "--in-place"], io.StringIO(), io.StringIO()) == 0
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    files = sorted(copy.rglob("*.yaml"))
    assert _compare(files) > 270


CASES: dict[str, str] = {
    "relative": "a:\n  x: 3\n  b:\n    y: ${..x}\n    z: ${.y}\n",
    "string with a mapping": "a: {k: 1}\ns: 'v=${a}'\n",
    "node is a mapping": "a: {k: [1, 2]}\nb: ${a}\n",
    "inside a list": "n: 4\nl: [1, '${n}', {m: '${..n}'}]\nr: ${l}\n",
    "list index": "l: [10, 20]\nx: ${l[1]}\ny: ${l.0}\n",
    "chain through another interpolation": "a: ${b}\nb: ${c}\nc: 7\n",
    "nested resolvers": (
        "t: 2\nc: 3\nx: ${mul:${mul:${t},${c}},2}\ny: ${div:${x},4}\nz: ${max:1, ${t}}\n"
    ),
    "escaped": "a: 1\nb: '\\${a}'\nc: 'x\\${a}${a}'\n",
    "types kept": "i: 1\nf: 1.0\nt: true\nn: null\ns: '1'\nr: [${i}, ${f}, ${t}, ${n}, ${s}]\n",
    "select reads a node by name": "a: 5\nb: ${oc.select:a,0}\nc: ${oc.select:missing,9}\n",
    "integer key": "m: {1: one}\nx: ${m.1}\n",
    "independent groups": "p: {x: 1}\nq: {y: 2}\na: ${p.x}\nb: ${q.y}\nc: ${add:${p.x},${q.y}}\n",
    "missing value": "a: ???\nb: ${a}\n",
    "absent key": "a: 1\nb: ${nope.x}\n",
    "cycle": "a: ${b}\nb: ${a}\n",
    "too many dots": "a:\n  b: ${...x}\nx: 1\n",
    "whole root": "a: 1\nb: ${..}\n",
    "env": "h: ${oc.env:I13_PRUNED_ENV,unset}\n",
    # Plain references, copied without OmegaConf where nothing else is in the group.
    "each scalar type by reference": (
        "v: {i: 1, f: 1.5, t: true, n: null, s: text, z: 0.0}\n"
        "r: {i: '${v.i}', f: '${v.f}', t: '${v.t}', n: '${v.n}', s: '${v.s}', z: '${v.z}'}\n"
    ),
    "relative references": "a:\n  x: 2\n  y: ${.x}\n  b:\n    z: ${..x}\n",
    "a reference to a mapping": "a: {k: 1}\nb: ${a}\n",
    "a reference to a list element": "l: [1, 2]\nx: ${l.1}\n",
    "a reference from inside a list": "n: 3\nl: ['${n}']\n",
    "a reference to a mandatory value": "a: {m: ???}\nb: ${a.m}\n",
    "a reference to a number-like text": "a: '1'\nb: ${a}\n",
    "a key with a dot beside a reference": "'x.y': 1\na: 2\nb: ${a}\n",
    "one dot too many": "a: ${..b}\nb: 1\n",
    "text around a reference": "a: 1\nb: 'n=${a}'\n",
}


@pytest.mark.parametrize("text", CASES.values(), ids=CASES.keys())
def test_pruned_resolution_matches_the_whole_config(text: str, tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    got = [_outcome(path), _outcome(path)]  # the second from the warm cache
    with loader.reference_loads():
        expected = _outcome(path)
    assert got == [expected, expected]


def test_the_environment_is_part_of_a_cached_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(CASES["env"])
    monkeypatch.setenv("I13_PRUNED_ENV", "first")
    assert load_config(path) == {"h": "first"}
    monkeypatch.setenv("I13_PRUNED_ENV", "second")
    assert load_config(path) == {"h": "second"}


def test_a_loaded_config_shares_nothing_with_the_caches(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(CASES["node is a mapping"])
    first: dict[str, Any] = load_config(path)
    first["b"]["k"].append(99)
    first["a"]["k"].append(98)
    assert load_config(path) == {"a": {"k": [1, 2]}, "b": {"k": [1, 2]}}


def test_a_changed_parent_is_read_again(tmp_path: Path) -> None:
    (tmp_path / "base.yaml").write_text("a: 1\nb: ${a}\n")
    (tmp_path / "mid.yaml").write_text("defaults: base.yaml\nc: 2\n")
    (tmp_path / "one.yaml").write_text("defaults: mid.yaml\n")
    (tmp_path / "two.yaml").write_text("defaults: mid.yaml\nc: 3\n")
    assert load_config(tmp_path / "one.yaml") == {"a": 1, "b": 1, "c": 2}
    assert load_config(tmp_path / "two.yaml") == {"a": 1, "b": 1, "c": 3}  # mid reused
    (tmp_path / "base.yaml").write_text("a: 10\nb: ${a}\nd: new\n")
    assert load_config(tmp_path / "two.yaml") == {"a": 10, "b": 10, "c": 3, "d": "new"}


def test_a_reused_parent_still_reports_a_cycle_and_the_depth_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "base.yaml").write_text("a: 1\n")
    (tmp_path / "mid.yaml").write_text("defaults: base.yaml\n")
    (tmp_path / "top.yaml").write_text("defaults: mid.yaml\n")
    assert load_config(tmp_path / "top.yaml") == {"a": 1}  # mid is now a reusable parent
    (tmp_path / "base.yaml").write_text("defaults: top.yaml\na: 1\n")
    got = _outcome(tmp_path / "top.yaml")
    with loader.reference_loads():
        assert got == _outcome(tmp_path / "top.yaml")
    assert got[0] == "error" and got[1] == "cycle"
    (tmp_path / "base.yaml").write_text("a: 1\n")
    assert load_config(tmp_path / "top.yaml") == {"a": 1}  # mid reusable again
    monkeypatch.setattr(loader, "MAX_DEFAULTS_DEPTH", 2)
    got = _outcome(tmp_path / "top.yaml")
    with loader.reference_loads():
        assert got == _outcome(tmp_path / "top.yaml")
    assert got[0] == "error" and got[1] == "too-deep"
