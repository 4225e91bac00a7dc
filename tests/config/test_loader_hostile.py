"""Unusable and hostile config files: each is one ConfigLoadError line, after bounded work."""

from __future__ import annotations

from pathlib import Path

import pytest

from nemo_rl_workers.reading.loader import MAX_FILE_BYTES, ConfigLoadError, load_config
from nemo_rl_workers.reading.safe_read import MAX_YAML_DEPTH, parse_yaml


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def load_error(path: Path, *, root: Path | None = None) -> ConfigLoadError:
    with pytest.raises(ConfigLoadError) as info:
        load_config(path, root=root)
    err = info.value
    assert "\n" not in str(err)
    assert str(err) == f"{err.file}: {err.reason}"
    return err


def test_alias_bomb(tmp_path: Path) -> None:
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, 10)]
    bomb = write(tmp_path / "lol.yaml", "\n".join(lines) + "\n")  # 9**10 nodes expanded
    err = load_error(bomb)
    assert err.kind == "too-large"
    assert err.file == str(bomb)
    assert "aliases expand" in err.reason


def test_a_few_aliases_are_fine(tmp_path: Path) -> None:
    cfg = write(tmp_path / "ok.yaml", "a: &x {k: 1}\nb: *x\n")
    assert load_config(cfg) == {"a": {"k": 1}, "b": {"k": 1}}


def test_file_over_the_size_limit_is_not_read(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    with big.open("wb") as f:
        f.write(b"a: 1\n")
        f.truncate(50 * 1024 * 1024)  # 50 MB, sparse: cheap to make, refused by size
    err = load_error(big)
    assert err.kind == "too-large"
    assert f"over the {MAX_FILE_BYTES}-byte limit" in err.reason


def test_interpolation_bomb(tmp_path: Path) -> None:
    lines = ['a0: "xxxxxxxxxx"']
    lines += [f'a{i}: "' + f"${{a{i - 1}}}" * 10 + '"' for i in range(1, 12)]
    err = load_error(write(tmp_path / "ibomb.yaml", "\n".join(lines) + "\n"))
    assert err.kind == "interpolation"
    # Ten references a line: the evaluations pass their budget before the characters do.
    assert "would evaluate over 20000 interpolations and resolver calls" in err.reason


def test_interpolation_size_bomb(tmp_path: Path) -> None:
    lines = ["a0: " + "x" * 1_000_000, "a1: " + "${a0}" * 10]
    err = load_error(write(tmp_path / "wide.yaml", "\n".join(lines) + "\n"))
    assert err.kind == "interpolation"
    assert "interpolations in a1 would expand to over 8388608 characters" in err.reason


def test_resolver_calls_count_in_the_budget(tmp_path: Path) -> None:
    call = "${oc.decode:${a%d}}"
    lines = ["a0: x"] + [f"a{i}: '" + (call % (i - 1)) * 8 + "'" for i in range(1, 8)]
    err = load_error(write(tmp_path / "calls.yaml", "\n".join(lines) + "\n"))
    assert err.kind == "interpolation"
    assert "interpolations and resolver calls" in err.reason


@pytest.mark.parametrize("call", ["${oc.select:a%d}", "${oc.select:a%d,0}", "${oc.select:.a%d}"])
def test_a_select_bomb_is_refused_for_what_it_expands_to(tmp_path: Path, call: str) -> None:
    # Selects are evaluated once each (memoized); eight a line still multiply the text.
    lines = ["a0: x"] + [f"a{i}: '" + (call % (i - 1)) * 8 + "'" for i in range(1, 9)]
    err = load_error(write(tmp_path / "calls.yaml", "\n".join(lines) + "\n"))
    assert err.kind == "interpolation"
    assert "would expand to over 8388608 characters" in err.reason


def test_a_linear_select_chain_resolves(tmp_path: Path) -> None:
    # Issue 22: 500 selects, each naming the one before, used to be refused (and evaluated
    # quadratically, or exponentially with two selects a line).
    lines = ["a0: x"] + [f"a{i}: ${{oc.select:a{i - 1}}}" for i in range(1, 501)]
    lines += ["b0: y"] + [f"b{i}: '${{oc.select:b{i - 1}}}${{oc.select:.b{i - 1},z}}'"
                          for i in range(1, 16)]
    config = load_config(write(tmp_path / "chain.yaml", "\n".join(lines) + "\n"))
    assert config["a500"] == "x"
    assert config["b15"] == "y" * 2**15


def test_select_memo_keeps_defaults_and_relative_keys_apart(tmp_path: Path) -> None:
    text = (
        "x: 1\n"
        "a: {x: 2, s: '${oc.select:.x}', t: '${oc.select:x}', u: '${oc.select:nope,3}'}\n"
        "b: {x: 4, s: '${oc.select:.x}', u: '${oc.select:nope,5}', v: '${oc.select:nope,[1]}'}\n"
    )
    config = load_config(write(tmp_path / "memo.yaml", text))
    assert (config["a"]["s"], config["a"]["t"], config["a"]["u"]) == (2, 1, 3)
    assert (config["b"]["s"], config["b"]["u"], config["b"]["v"]) == (4, 5, [1])


def test_arithmetic_resolvers_refuse_huge_integers(tmp_path: Path) -> None:
    lines = ["a0: 10"] + [f"a{i}: ${{mul:${{a{i - 1}}},${{a{i - 1}}}}}" for i in range(1, 7)]
    err = load_error(write(tmp_path / "square.yaml", "\n".join(lines) + "\n"))  # 10**64
    assert err.kind == "interpolation"
    assert "integer result over" in err.reason


def test_recursive_interpolation(tmp_path: Path) -> None:
    err = load_error(write(tmp_path / "loop.yaml", "a: ${b}\nb: ${a}\n"))
    assert err.kind == "interpolation"
    assert "Recursive interpolation" in err.reason


def test_defaults_cycle_names_the_chain(tmp_path: Path) -> None:
    a = write(tmp_path / "a.yaml", "defaults: sub/b.yaml\nx: 1\n")
    write(tmp_path / "sub" / "b.yaml", "defaults: [../a.yaml]\ny: 1\n")
    err = load_error(a)
    assert err.kind == "cycle"
    assert err.file == str(tmp_path / "sub" / "b.yaml")
    assert err.reason == f"defaults cycle: {a} -> {tmp_path / 'sub' / 'b.yaml'} -> {a}"


def test_file_that_defaults_to_itself(tmp_path: Path) -> None:
    a = write(tmp_path / "a.yaml", "defaults: a.yaml\n")
    assert load_error(a).reason == f"defaults cycle: {a} -> {a}"


def test_defaults_outside_root(tmp_path: Path) -> None:
    write(tmp_path / "outside.yaml", "secret: 1\n")
    child = write(tmp_path / "root" / "child.yaml", "defaults: ../outside.yaml\n")
    assert load_config(child) == {"secret": 1}  # no root: allowed, as upstream
    err = load_error(child, root=tmp_path / "root")
    assert err.kind == "outside-root"
    assert err.file == str(child)
    assert "'../outside.yaml'" in err.reason and "outside the allowed root" in err.reason


def test_symlink_escaping_root(tmp_path: Path) -> None:
    write(tmp_path / "outside.yaml", "secret: 1\n")
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "link.yaml").symlink_to(tmp_path / "outside.yaml")
    child = write(tmp_path / "root" / "child.yaml", "defaults: link.yaml\n")
    assert load_error(child, root=tmp_path / "root").kind == "outside-root"


def test_config_itself_outside_root(tmp_path: Path) -> None:
    cfg = write(tmp_path / "cfg.yaml", "a: 1\n")
    assert load_error(cfg, root=tmp_path / "elsewhere").kind == "outside-root"
    assert load_config(cfg, root=tmp_path) == {"a": 1}


def test_missing_defaults_file_names_both_files(tmp_path: Path) -> None:
    child = write(tmp_path / "recipes" / "child.yaml", "defaults: ../gone/parent.yaml\n")
    err = load_error(child)
    assert err.kind == "missing-default"
    assert err.file == str(child)
    assert err.reason == (
        f"defaults entry '../gone/parent.yaml' names {tmp_path / 'gone' / 'parent.yaml'},"
        " which does not exist"
    )


def test_missing_config_file(tmp_path: Path) -> None:
    err = load_error(tmp_path / "nope.yaml")
    assert err.kind == "missing-file"
    assert err.file == str(tmp_path / "nope.yaml")


def test_directory_is_not_a_config(tmp_path: Path) -> None:
    assert load_error(tmp_path).kind == "not-a-file"


@pytest.mark.parametrize(
    ("content", "kind", "says"),
    [
        (bytes(range(256)) * 4, "not-utf8", "is not UTF-8 text (byte 0x80 at offset 128)"),
        (b"a: 1\x00\n", "yaml", "unacceptable character #x0000"),
        (b"a: [1, 2\nb: 3\n", "yaml", "invalid YAML at line"),
        (b"a: 1\na: 2\n", "yaml", "found duplicate key a"),
        (b"a: 1\n---\nb: 2\n", "yaml", "expected a single document"),
        # libyaml's own nesting limit where the PyYAML wheel's libyaml has one (6.0.4), else
        # the reader's MAX_YAML_DEPTH (6.0.3, which NeMo-RL locks)
        (b"a: " + b"[" * 5000 + b"]" * 5000 + b"\n", "yaml", ("nesting depth", "nested more than")),
        (b"- 1\n- 2\n", "not-mapping", "not a list"),
        (b"a: !!set {x, y}\n", "yaml", "a holds a set; a config holds only strings"),
        (b"a: [!!binary aGVsbG8=]\n", "yaml", "a[0] holds a bytes"),
        (b"a: !!python/object/apply:pathlib.Path [/etc]\n", "yaml", "a holds a PosixPath"),
        (
            b"a: !!python/object/apply:os.system [echo]\n",
            "yaml",
            "could not determine a constructor",
        ),
        (b"~: 1\n", "yaml", "has a key None under the top level"),
        (b"just a string\n", "not-mapping", "not a str"),
        (b"defaults: 5\n", "defaults", "defaults must be a file name or a list of file names"),
        (b"defaults: [a.yaml, 3]\n", "defaults", "defaults must be a file name"),
    ],
)
def test_unusable_content(tmp_path: Path, content: bytes, kind: str,
                          says: str | tuple[str, ...]) -> None:
    path = tmp_path / "bad.yaml"
    path.write_bytes(content)
    err = load_error(path)
    assert err.kind == kind
    assert any(one in err.reason for one in ((says,) if isinstance(says, str) else says))
    assert err.file == str(path)


def test_block_nesting_too_deep_for_python(tmp_path: Path) -> None:
    text = "".join(" " * i + f"k{i}:\n" for i in range(990)) + " " * 990 + "leaf: 1\n"
    err = load_error(write(tmp_path / "deep.yaml", text))
    assert err.kind == "yaml"
    assert err.reason == f"is nested more than {MAX_YAML_DEPTH} levels deep"


def test_defaults_fan_out_is_bounded(tmp_path: Path) -> None:
    # Each level names the next twice: 2**20 loads without a bound on the files pulled in.
    for i in range(20):
        write(tmp_path / f"l{i}.yaml", f"defaults: [l{i + 1}.yaml, l{i + 1}.yaml]\nk{i}: 1\n")
    write(tmp_path / "l20.yaml", "end: 1\n")
    err = load_error(tmp_path / "l0.yaml")
    assert err.kind == "too-deep"
    assert err.reason == "defaults pull in more than 256 files"


def test_defaults_chain_depth_is_bounded(tmp_path: Path) -> None:
    for i in range(40):
        write(tmp_path / f"c{i}.yaml", f"defaults: c{i + 1}.yaml\n")
    write(tmp_path / "c40.yaml", "end: 1\n")
    err = load_error(tmp_path / "c0.yaml")
    assert err.kind == "too-deep"
    assert err.reason == "defaults nest more than 32 files deep"


def test_resolving_is_bounded_in_time() -> None:
    from nemo_rl_workers.reading.interpolation import within_time

    with pytest.raises(ConfigLoadError, match=r"^c.yaml: interpolations took over 0.2 s"):
        with within_time("c.yaml", 0.2):
            while True:  # stands for a resolution the budget did not foresee
                pass


def test_environment_values_are_redacted_once_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nemo_rl_workers.reading.interpolation import redact

    monkeypatch.setenv("NEMO_RL_TEST_TOKEN", "s3cr3t-value")
    config = load_config(write(tmp_path / "c.yaml", "a: ${oc.env:NEMO_RL_TEST_TOKEN}\n"))
    assert config == {"a": "s3cr3t-value"}
    assert redact("given s3cr3t-value.") == "given <redacted $NEMO_RL_TEST_TOKEN>."


def test_plain_nodes_are_not_counted_as_alias_expansion() -> None:
    # Issue 22: 2.5 MB of small flow mappings and 60,000 keys hold no alias: nothing expands.
    flows = "".join(f"m{i}: {{a: {i}, b: [1, 2, 3, 4, 5, 6, 7, 8], c: xxxxxxxxxxxxxxxxxxxx"
                    f"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx}}\n"
                    for i in range(20_000))
    assert len(flows) > 2_500_000
    data = parse_yaml(flows, "flows.yaml")[1]
    assert isinstance(data, dict) and len(data) == 20_000
    keys = "".join(f"k{i}: {i}\n" for i in range(60_000))
    data = parse_yaml(keys, "keys.yaml")[1]
    assert isinstance(data, dict) and len(data) == 60_000


def test_aliases_are_counted_by_what_they_add() -> None:
    anchor = "a: &a [" + ", ".join(["x"] * 100) + "]\n"
    # 900 references of 101 nodes add 90,900 nodes: under the limit.
    parse_yaml(anchor + "b: [" + ", ".join(["*a"] * 900) + "]\n", "ok.yaml")
    # 1,000 add 101,000: over it.
    with pytest.raises(ConfigLoadError, match="YAML aliases expand past 100000 nodes") as info:
        parse_yaml(anchor + "b: [" + ", ".join(["*a"] * 1000) + "]\n", "bomb.yaml")
    assert info.value.kind == "too-large"
