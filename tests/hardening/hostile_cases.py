"""The hostile inputs of test_hostile_suite.py, as data: what to write, what to run, what to expect.

Each case builds its files in its own folder and names one `nemo-rl-workers` invocation
(run there) with the exit code the guide's table gives it and a phrase its output must
hold. Families follow issue 12: files the safe reader refuses, `defaults:` chains,
interpolation cost, numbers and names, overrides, arguments, quantization recipes, keys
and file names with control characters, and `migrate` writes.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

SECRET = "tok-hostile-4f1c9e"  # NEMO_RL_HOSTILE_SECRET in the batch's environment
PROBE_FQN = "tests.hardening.hostile_import_probe.ProbeWorker"
REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "examples" / "configs" / "grpo_tiny.yaml"

Setup = Callable[[Path], None]


@dataclass(frozen=True)
class Case:
    id: str
    setup: Setup
    argv: tuple[str, ...]
    code: int
    says: str = ""
    # Files expected after the run (name -> bytes); every other file must be byte-identical.
    expect_files: dict[str, bytes] = field(default_factory=dict)


def text(name: str, body: str | bytes) -> Setup:
    def write(folder: Path) -> None:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body.encode() if isinstance(body, str) else body)

    return write


def both(*steps: Setup) -> Setup:
    def run(folder: Path) -> None:
        for step in steps:
            step(folder)

    return run


def fifo(name: str) -> Setup:
    return lambda folder: os.mkfifo(folder / name)


def symlink(name: str, target: str) -> Setup:
    return lambda folder: os.symlink(target, folder / name)


def sparse(name: str, size: int) -> Setup:
    def write(folder: Path) -> None:
        with (folder / name).open("wb") as f:
            f.truncate(size)

    return write


def mkdir(name: str) -> Setup:
    return lambda folder: (folder / name).mkdir()


# A config every rule accepts: a base for defaults chains and overrides.
GOOD = (
    "policy:\n  model_name: tiny\n  automodel_cfg: {enabled: true}\n  megatron_cfg: "
    "{enabled: false}\n  train_micro_batch_size: 2\n  logprob_batch_size: 2\n"
)
OUTDATED = "policy:\n  # backend\n  dtensor_cfg:\n    _v2: true\n    enabled: true\n"
MIGRATED = "policy:\n  # backend\n  automodel_cfg:\n    enabled: true\n"


def alias_bomb(width: int, levels: int) -> str:
    lines = [f"l0: &l0 [{', '.join(['x'] * width)}]"]
    lines += [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def block_nesting(depth: int) -> str:
    return "".join(" " * i + f"k{i}:\n" for i in range(depth)) + " " * depth + "leaf: 1\n"


def chain(call: str, levels: int, per_line: int = 8) -> str:
    lines = ["a0: xxxxxxxxxx"]
    lines += [f"a{i}: '" + (call % (i - 1)) * per_line + "'" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def policy_with(extra: str) -> str:
    """A good policy section with `extra` lines in it (they replace the defaults they name)."""
    defaults = {"automodel_cfg": "{enabled: true}", "megatron_cfg": "{enabled: false}",
                "train_micro_batch_size": "2", "logprob_batch_size": "2"}
    lines = [f"{k}: {v}" for k, v in defaults.items() if f"{k}:" not in extra]
    return "policy:\n  model_name: tiny\n" + "".join(
        f"  {line}\n" for line in [*lines, *extra.splitlines()])


# -------------------------------------------------------------- files the reader refuses

# name -> (setup writing c.yaml, phrase of the one line). check/resolve exit 2; migrate too.
UNREADABLE: dict[str, tuple[Setup, str]] = {
    **{
        f"alias bomb {w}x{n}": (text("c.yaml", alias_bomb(w, n)), "YAML aliases expand past")
        for w, n in ((9, 9), (10, 7), (5, 10), (3, 16), (2, 30), (20, 5), (100, 3))
    },
    "self alias list": (text("c.yaml", "a: &a [*a]\n"), "YAML aliases expand past"),
    "self alias map": (text("c.yaml", "a: &a {b: *a}\n"), "YAML aliases expand past"),
    "mutual alias": (text("c.yaml", "a: &a [&b [*a, *b]]\n"), "YAML aliases expand past"),
    **{f"block nesting {d}": (text("c.yaml", block_nesting(d)), "nest")
       for d in (101, 150, 400, 990, 3000)},
    **{f"flow nesting {d}": (text("c.yaml", "a: " + "[" * d + "]" * d + "\n"), "nest")
       for d in (101, 200, 999, 1001, 3000, 20000)},
    **{f"flow map nesting {d}": (text("c.yaml", "a: " + "{b: " * d + "1" + "}" * d + "\n"),
                                 "nest") for d in (101, 1500)},
    **{f"integer of {n} digits": (text("c.yaml", f"a: {'9' * n}\n"), "Python cannot read")
       for n in (4301, 5000, 100_000)},
    "negative huge integer": (text("c.yaml", f"a: -{'7' * 5000}\n"), "Python cannot read"),
    "huge integer in a list": (text("c.yaml", f"a: [1, {'1' * 6000}]\n"), "Python cannot read"),
    "huge integer nested": (text("c.yaml", f"policy:\n  x:\n    y: {'3' * 9000}\n"),
                            "Python cannot read"),
    "huge integer key": (text("c.yaml", f"{'5' * 5000}: 1\n"), "invalid YAML"),
    "huge integer as a flow key": (text("c.yaml", f"{{{'5' * 5000}: 1}}\n"), "c.yaml"),
    **{f"binary garbage {seed}": (text("c.yaml", random.Random(seed).randbytes(4096)),
                                  "is not UTF-8 text") for seed in range(5)},
    "UTF-16 text": (text("c.yaml", "a: 1\n".encode("utf-16")), "is not UTF-8 text"),
    "Latin-1 text": (text("c.yaml", "a: caf\xe9\n".encode("latin-1")), "is not UTF-8 text"),
    "NUL inside": (text("c.yaml", b"a: 1\x00\n"), "invalid YAML"),
    "python object tag": (text("c.yaml", "a: !!python/object/apply:os.system [echo hi]\n"),
                          "invalid YAML"),
    "python name tag": (text("c.yaml", "a: !!python/name:os.system\n"), "invalid YAML"),
    "python module tag": (text("c.yaml", "a: !!python/module:os\n"), "invalid YAML"),
    "unclosed bracket": (text("c.yaml", "a: [1, 2\n"), "invalid YAML"),
    "tab indentation": (text("c.yaml", "a:\n\tb: 1\n"), "invalid YAML"),
    "duplicate key": (text("c.yaml", "a: 1\na: 2\n"), "duplicate key"),
    "two documents": (text("c.yaml", "a: 1\n---\nb: 2\n"), "invalid YAML"),
    "undefined alias": (text("c.yaml", "a: *nowhere\n"), "invalid YAML"),
    "bad directive": (text("c.yaml", "%YAML 9.9\n---\na: 1\n"), "invalid YAML"),
    "colon soup": (text("c.yaml", ": : :\n"), "invalid YAML"),
    "top-level list": (text("c.yaml", "- a\n- b\n"), "mapping"),
    "top-level string": (text("c.yaml", "just a string\n"), "mapping"),
    "top-level number": (text("c.yaml", "42\n"), "mapping"),
    "9 MB of comments": (text("c.yaml", b"# " + b"x" * (9 * 1024 * 1024) + b"\n"),
                         "over the 8388608-byte limit"),
    "1 GB sparse file": (sparse("c.yaml", 1 << 30), "over the 8388608-byte limit"),
    "a FIFO": (fifo("c.yaml"), "is not a regular file"),
    "a directory": (mkdir("c.yaml"), "c.yaml"),
    "a symlink loop": (symlink("c.yaml", "c.yaml"), "symlink loop"),
    "a dangling symlink": (symlink("c.yaml", "nowhere.yaml"), "no such"),
    "a symlink to /dev/zero": (symlink("c.yaml", "/dev/zero"), "is not a regular file"),
    "a symlink to /dev/null": (symlink("c.yaml", "/dev/null"), "is not a regular file"),
    "a symlink to a directory": (symlink("c.yaml", "/"), "c.yaml"),
}

# Issue 22: big files without an alias are not alias bombs (the size limit bounds them).
NO_ALIASES: dict[str, str] = {
    "60,000 top-level keys": GOOD + "".join(f"k{i}: {i}\n" for i in range(60_000)),
    "20,000 small flow mappings": GOOD + "".join(
        f"m{i}: {{a: {i}, b: [1, 2, 3], c: {{d: x}}}}\n" for i in range(20_000)),
    "a star in a string": GOOD + "".join(f"k{i}: '*{i}'\n" for i in range(60_000)),
}

# `defaults:` entries the loader refuses (exit 2 for check/resolve); the file itself is
# valid YAML, so migrate reads it and notes the parent (exit 0).
BAD_PARENTS: dict[str, tuple[Setup, str]] = {
    "itself": (text("c.yaml", "defaults: c.yaml\n"), "defaults cycle"),
    "a 2-cycle": (both(text("c.yaml", "defaults: b.yaml\n"), text("b.yaml", "defaults: c.yaml\n")),
                  "defaults cycle"),
    "a 3-cycle": (both(text("c.yaml", "defaults: b.yaml\n"), text("b.yaml", "defaults: d.yaml\n"),
                       text("d.yaml", "defaults: c.yaml\n")), "defaults cycle"),
    "a missing file": (text("c.yaml", "defaults: nope.yaml\n"), "does not exist"),
    "/dev/zero": (text("c.yaml", "defaults: /dev/zero\n"), "is not a regular file"),
    "/dev/null": (text("c.yaml", "defaults: /dev/null\n"), "is not a regular file"),
    "/dev/urandom": (text("c.yaml", "defaults: /dev/urandom\n"), "is not a regular file"),
    "/dev/stdin": (text("c.yaml", "defaults: /dev/stdin\n"), "not a regular file"),
    "/etc/passwd": (text("c.yaml", "defaults: /etc/passwd\n"), "mapping"),
    "a FIFO": (both(text("c.yaml", "defaults: p.yaml\n"), fifo("p.yaml")),
               "is not a regular file"),
    "a directory": (both(text("c.yaml", "defaults: d.yaml\n"), mkdir("d.yaml")),
                    "is not a regular file"),
    "a symlink loop": (both(text("c.yaml", "defaults: loop.yaml\n"),
                            symlink("loop.yaml", "loop.yaml")), "symlink loop"),
    "a two-link loop": (both(text("c.yaml", "defaults: l1.yaml\n"), symlink("l1.yaml", "l2.yaml"),
                             symlink("l2.yaml", "l1.yaml")), "symlink loop"),
    "a 300-byte name": (text("c.yaml", f"defaults: {'n' * 300}.yaml\n"), "name is too long"),
    "a 5000-byte path": (text("c.yaml", f"defaults: {'d/' * 2500}x.yaml\n"), "too long"),
    "a NUL byte": (text("c.yaml", 'defaults: "b\\0.yaml"\n'), "holds a NUL character"),
    "a number": (text("c.yaml", "defaults: 3\n"), "defaults must be"),
    "a mapping": (text("c.yaml", "defaults: {a: b}\n"), "defaults must be"),
    "a list of numbers": (text("c.yaml", "defaults: [1, 2]\n"), "defaults must be"),
    "an empty name": (text("c.yaml", "defaults: ['']\n"), "defaults must be"),
    "an alias bomb": (both(text("c.yaml", "defaults: p.yaml\n"), text("p.yaml", alias_bomb(9, 9))),
                      "YAML aliases expand past"),
    "deep nesting": (both(text("c.yaml", "defaults: p.yaml\n"),
                          text("p.yaml", block_nesting(300))), "nested"),
    "a huge integer": (both(text("c.yaml", "defaults: p.yaml\n"),
                            text("p.yaml", "a: " + "9" * 5000)), "Python cannot read"),
    "binary garbage": (both(text("c.yaml", "defaults: p.yaml\n"),
                            text("p.yaml", random.Random(9).randbytes(999))), "not UTF-8"),
    "a 1 GB sparse file": (both(text("c.yaml", "defaults: p.yaml\n"), sparse("p.yaml", 1 << 30)),
                           "over the 8388608-byte limit"),
    "a 40-deep chain": (both(text("c.yaml", "defaults: p0.yaml\n"), *(
        text(f"p{i}.yaml", f"defaults: p{i + 1}.yaml\n") for i in range(40))),
        "nest more than 32"),
    "a 2**20 fan-out": (both(text("c.yaml", "defaults: [f0.yaml, f0.yaml]\n"), *(
        text(f"f{i}.yaml", f"defaults: [f{i + 1}.yaml, f{i + 1}.yaml]\n") for i in range(20)),
        text("f20.yaml", "end: 1\n")), "more than 256 files"),
}

# Interpolations the loader refuses or cannot resolve (exit 2); migrate leaves them (exit 0).
BAD_INTERPOLATIONS: dict[str, tuple[str, str]] = {
    "size bomb": ("a0: " + "x" * 1_000_000 + "\na1: " + "${a0}" * 10 + "\n", "characters"),
    "reference chain": (chain("${a%d}", 12, 10), "over 20000"),
    # Selects are evaluated once each (issue 22): eight a line are refused for their size.
    "oc.select chain": (chain("${oc.select:a%d}", 8), "characters"),
    "oc.select chain with default": (chain("${oc.select:a%d,0}", 8), "characters"),
    "oc.select relative": (chain("${oc.select:.a%d}", 8), "characters"),
    "oc.select linear chain of 500": (chain("${oc.select:a%d}", 501, 1), ""),
    "oc.select doubling chain": (chain("${oc.select:a%d}", 16, 2), ""),
    "max chain": ("a0: 1\n" + "".join(f"a{i}: ${{max:${{a{i - 1}}},${{a{i - 1}}}}}\n"
                                      for i in range(1, 18)), "resolver calls"),
    "oc.decode chain": (chain("${oc.decode:${a%d}}", 8, 6), "resolver calls"),
    "oc.select with a default": ("a: ${oc.select:nope,1}\n", ""),
    "squaring": ("a0: 10\n" + "".join(f"a{i}: ${{mul:${{a{i - 1}}},${{a{i - 1}}}}}\n"
                                      for i in range(1, 8)), "integer result over"),
    "division by zero": ("a: ${div:1,0}\n", "interpolation failed"),
    "reference cycle": ("a: ${b}\nb: ${a}\n", "interpolation"),
    "self reference": ("a: ${a}\n", "interpolation"),
    "missing reference": ("a: ${nope}\n", "interpolation failed"),
    "unknown resolver": ("a: ${nope:1}\n", "interpolation failed"),
    "unset environment variable": ("a: ${oc.env:NEMO_RL_HOSTILE_UNSET_VARIABLE}\n",
                                   "interpolation failed"),
    "unterminated": ("a: ${b\nb: 1\n", "interpolation"),
    "empty": ("a: ${}\n", "interpolation"),
    "nested 500 deep": ("a: " + "${" * 500 + "b" + "}" * 500 + "\n", "interpolation"),
    "secret in arithmetic": ("a: ${div:${oc.env:NEMO_RL_HOSTILE_SECRET},2}\n", "interpolation"),
    "secret as a key": ("b: 1\na: ${oc.select:${oc.env:NEMO_RL_HOSTILE_SECRET}}\n", ""),
}
# Controls: these resolve (exit 0).
RESOLVES = {"oc.select with a default", "secret as a key", "oc.select linear chain of 500",
            "oc.select doubling chain"}
# `check` reads no key these fail in (issue 27: an unset variable outside the sections the
# rules read does not stop it); `resolve` still refuses them.
CHECK_UNREAD = {"unset environment variable"}
# ... and where a value the rules read needs the unset variable, `check` refuses it too.
UNSET_READ_BY_CHECK: dict[str, tuple[str, str]] = {
    "unset environment variable in policy": (
        policy_with("checkpoint_dir: ${oc.env:NEMO_RL_HOSTILE_UNSET_VARIABLE}"),
        "interpolation failed at policy.checkpoint_dir: environment variable "
        "'NEMO_RL_HOSTILE_UNSET_VARIABLE' is not set"),
    "unset environment variable reaching policy": (
        policy_with("checkpoint_dir: ${data.root}")
        + "data:\n  root: ${oc.env:NEMO_RL_HOSTILE_UNSET_VARIABLE}\n",
        "interpolation failed at policy.checkpoint_dir: environment variable"),
}

# Configs that load, with values the rules must reject (exit 1) rather than crash on.
BAD_VALUES: dict[str, tuple[str, str]] = {
    **{f"{key} {value}": (policy_with(f"{key}: {value}"), "positive integer")
       for key in ("train_micro_batch_size", "logprob_batch_size")
       for value in (".inf", "-.inf", ".nan", "1e309", "-1", "[1]", "{a: 1}")},
    # A 12,000-bit batch size is a positive integer: accepted, and printed nowhere.
    **{f"{key} a huge hex": (policy_with(f"{key}: 0x{'f' * 3000}"), "ok")
       for key in ("train_micro_batch_size", "logprob_batch_size")},
    **{f"tensor_parallel_size {value}": (policy_with(
        f"automodel_cfg: {{enabled: true, tensor_parallel_size: {value}}}"), "")
       for value in (".inf", ".nan", "0x" + "f" * 3000, "-3", "true")},
    **{f"cluster {key} {value}": (GOOD + f"cluster:\n  {key}: {value}\n", "ok")
       for key in ("num_nodes", "gpus_per_node") for value in (".inf", "0x" + "f" * 3000, "-1")},

    "huge hex enabled": (GOOD.replace("{enabled: false}", "{enabled: 0x" + "f" * 5000 + "}"),
                         "megatron_cfg.enabled"),
    "quant_cfg a huge hex": (policy_with("quant_cfg: 0x" + "f" * 5000), "quant_cfg"),
    "quant_cfg a list": (policy_with("quant_cfg: [1, 2]"), "quant_cfg"),
    "quant_cfg the secret": (policy_with("quant_cfg: ${oc.env:NEMO_RL_HOSTILE_SECRET}"),
                             "<redacted $NEMO_RL_HOSTILE_SECRET>"),
    "quant_cfg the secret in a sentence": (
        policy_with("quant_cfg: 'Bearer ${oc.env:NEMO_RL_HOSTILE_SECRET}'"), "<redacted"),
    "unregistered worker": (policy_with(f"worker_extension_cls_fqn: {PROBE_FQN}"),
                            "worker_extension_cls_fqn"),
    "unregistered worker via oc.select": (
        policy_with(f"worker_extension_cls_fqn: ${{oc.select:x,{PROBE_FQN}}}"), "registered"),
    "malformed worker name": (policy_with("worker_extension_cls_fqn: 'a..b'"), "fqn"),
    "worker name with a newline": (policy_with('worker_extension_cls_fqn: "a.b\\nc.D"'), "\\n"),
    "worker name with an escape": (policy_with('worker_extension_cls_fqn: "a.\\e[2Jb.C"'), "\\x1b"),
    "teachers a string": (GOOD + "teachers: nope\n", ""),
    "teachers a huge list": (GOOD + "teachers: [" + ", ".join(["1"] * 5000) + "]\n", ""),
    "policy a list": ("policy: [1, 2]\n", "policy"),
    "policy null": ("policy: null\n", "ok"),
    "dtensor and automodel": (policy_with("dtensor_cfg: {enabled: true}"), "dtensor_cfg"),
}

# quant_cfg naming a recipe file that the guarded reader refuses: a problem line (exit 1).
BAD_RECIPES: dict[str, tuple[Setup, str]] = {
    "/dev/zero": (symlink("r.yaml", "/dev/zero"), "not a regular file"),
    "a FIFO": (fifo("r.yaml"), "not a regular file"),
    "an alias bomb": (text("r.yaml", alias_bomb(9, 9)), "YAML aliases expand past"),
    "deep nesting": (text("r.yaml", block_nesting(500)), "nested"),
    "a 1 GB sparse file": (sparse("r.yaml", 1 << 30), "over the 8388608-byte limit"),
    "a directory": (mkdir("r.yaml"), "not a regular file"),
    "a symlink loop": (symlink("r.yaml", "r.yaml"), "symlink loop"),
    "binary garbage": (text("r.yaml", random.Random(3).randbytes(999)), "not UTF-8"),
    "a python tag": (text("r.yaml", "quantize: !!python/name:os.system\n"), "invalid YAML"),
    "a huge integer": (text("r.yaml", "quant_cfg: " + "9" * 5000 + "\n"), "Python cannot read"),
}

# Names a user can hand the CLI: each must come back escaped, on one line.
HOSTILE_NAMES = [
    "new\nline.yaml", "esc\x1b[2Jape.yaml", "bell\x07.yaml", "carriage\rreturn.yaml",
    "del\x7f.yaml", "c1\x85.yaml", "sep\u2028.yaml", "title\x1b]0;pwned\x07.yaml",
    "\udcff\udcfe.yaml", "tab\tname.yaml",
]

# Overrides on a good config (resolve): exit 2 with a line naming the override, or 0/1.
OVERRIDES: dict[str, tuple[str, int, str]] = {
    "empty": ("", 2, "malformed override"),
    "only =": ("=", 2, "malformed override"),
    "no =": ("policy", 2, "malformed override"),
    "no key": ("=1", 2, "malformed override"),
    "leading dot": (".a=1", 2, "malformed override"),
    "double dot": ("a..b=1", 2, "malformed override"),
    "three pluses": ("+++a=1", 2, "malformed override"),
    "space in key": ("a b=1", 2, "malformed override"),
    "newline in key": ("a\nb=1", 2, "malformed override"),
    "escape in key": ("a\x1b[2Jb=1", 2, "malformed override"),
    "NUL in key": ("a\x00b=1", 2, "malformed override"),
    "unclosed value": ("policy.quant_cfg=[unclosed", 2, "not valid YAML"),
    "huge integer value": ("policy.x=" + "9" * 5000, 2, "Python cannot read"),
    "huge negative value": ("policy.x=-" + "9" * 5000, 2, "Python cannot read"),
    "deep flow value": ("policy.x=" + "[" * 2000 + "]" * 2000, 2, "not valid YAML"),
    "deep flow map value": ("policy.x=" + "{a: " * 150 + "1" + "}" * 150, 2, "not valid YAML"),
    "alias bomb value": ("policy.x=" + alias_bomb(9, 9).replace("\n", "\n"), 2, "not valid YAML"),
    "flow alias bomb value": ("policy.x=[&a [1,2,3,4,5,6,7,8,9], " + ", ".join(["*a"] * 5000)
                              + "]", 2, "not valid YAML"),
    "python tag value": ("policy.x=!!python/object/apply:os.system [ls]", 2, "not valid YAML"),
    "binary value": ("policy.x=!!binary aGk=", 2, "holds a bytes"),
    "set value": ("policy.x=!!set {a, b}", 2, "holds a set"),
    "timestamp value": ("policy.x=2001-12-14t21:59:43.10-05:00", 0, ""),  # a string here
    "70 KB override": ("policy.x=" + "y" * 70_000, 2, "over 65536 characters"),
    "missing parent": ("policy.nonexistent.deep=1", 2, "is not in the config"),
    "plus on existing": ("+policy.model_name=x", 2, "already exists"),
    "through a scalar": ("policy.model_name.sub=1", 2, "is not a mapping"),
    "index past the end": ("teachers.99.x=1", 2, "is not in the config"),
    "infinite nodes": ("++cluster.num_nodes=.inf", 0, ""),
    "hex giant": ("++cluster.num_nodes=0x" + "f" * 4000, 0, ""),
    "missing reference": ("policy.x=${nope}", 2, "interpolation failed"),
    "reference cycle": ("policy.x=${policy.x}", 2, "interpolation"),
    "oc.select of the policy": ("policy.x=${oc.select:policy,1}", 2, "interpolation failed"),
    "secret value": ("policy.quant_cfg=${oc.env:NEMO_RL_HOSTILE_SECRET}", 0, "R3"),
    "secret in an error": ("policy.x=${mul:${oc.env:NEMO_RL_HOSTILE_SECRET},x}", 2,
                           "interpolation"),
    "unregistered worker": (f"policy.worker_extension_cls_fqn={PROBE_FQN}", 1, "registered"),
    "generation backend": ("++policy.generation.backend=evil", 0, ""),
    "megatron too": ("policy.megatron_cfg.enabled=true", 1, "both enabled"),
    "enabled a string": ("policy.automodel_cfg.enabled=maybe", 1, ""),
    "outdated block": ("++policy.dtensor_cfg.enabled=true", 1, "dtensor_cfg"),
    "control char value": ("policy.model_name=a\x1b[2Jb", 2, "not valid YAML"),
    "newline value": ("policy.model_name='a\nb'", 0, ""),
}

# Arguments (no files needed beyond good.yaml): exit 2, one line.
ARGUMENTS: dict[str, tuple[tuple[str, ...], int, str]] = {
    **{f"--world-size {v!r}"[:40]: (("check", "--world-size", v, "good.yaml"), 2, "")
       for v in ("1e309", "inf", "nan", "-1", "0", "9" * 5000, "", "0x10", "1.5", "\x1b[2J")},
    **{f"--nodes {v!r}"[:40]: (("check", "--nodes", v, "--gpus-per-node", "2", "good.yaml"), 2, "")
       for v in ("1e309", "-2", "0", "9" * 5000)},
    "--gpus-per-node huge": (("check", "--nodes", "2", "--gpus-per-node", "9" * 4000, "good.yaml"),
                             0, "ok"),
    "--nodes alone": (("check", "--nodes", "2", "good.yaml"), 2, ""),
    "world size disagrees": (("check", "--world-size", "3", "--nodes", "1", "--gpus-per-node",
                              "2", "good.yaml"), 2, ""),
    "unknown flag": (("check", "--bogus", "good.yaml"), 2, "unrecognized arguments"),
    "no command": ((), 2, "required"),
    "unknown command": (("explode",), 2, "invalid choice"),
    "check without files": (("check",), 2, "required"),
    "resolve without file": (("resolve",), 2, "required"),
    "verify without protocol": (("verify", "a.B"), 2, "required"),
    "verify unknown protocol": (("verify", "a.B", "--protocol", "Nope"), 2, "unknown protocol"),
    "verify empty name": (("verify", "", "--protocol", "PolicyWorker"), 2, "FQN"),
    "verify double dot": (("verify", "a..B", "--protocol", "PolicyWorker"), 2, "FQN"),
    "verify digit start": (("verify", "1a.B", "--protocol", "PolicyWorker"), 2, "FQN"),
    "verify newline": (("verify", "a.B\nC", "--protocol", "PolicyWorker"), 2, "FQN"),
    "verify 10000 chars": (("verify", "a." + "B" * 10000, "--protocol", "PolicyWorker"), 2, ""),
    "verify missing module": (("verify", "no_such_mod_xyz.C", "--protocol", "PolicyWorker"), 2,
                              "no such class"),
    "verify not a class": (("verify", "os.sep", "--protocol", "PolicyWorker"), 2, "not a class"),
    # Issue 22: a function, an int constant, an instance; as the class and as --base, both paths.
    **{f"verify{static} {what}{' as --base' if base else ''}": (
        ("verify", *(("collections.OrderedDict", "--base", fqn) if base else (fqn,)),
         "--protocol", "PolicyWorker", *((static,) if static else ())), 2, "is not a class")
       for static in ("", "--static")
       for what, fqn in (("a function", "json.dumps"), ("an int constant", "stat.S_IFDIR"),
                         ("an instance", "logging.root"))
       for base in (False, True)},
    "verify bad base": (("verify", "collections.OrderedDict", "--protocol", "PolicyWorker",
                         "--base", "a..b"), 2, "--base"),
    "verify missing base": (("verify", "collections.OrderedDict", "--protocol", "PolicyWorker",
                             "--base", "no_such_mod_xyz.B"), 2, "cannot be imported"),
    "verify bad role": (("verify", "a.B", "--protocol", "PolicyWorker", "--role", "x"), 2, ""),
    # Issue 29: explain takes one name; anything else is one line and exit 2.
    "explain unknown rule": (("explain", "R99"), 2, "no rule is named 'R99'; did you mean"),
    "explain control characters": (("explain", "\x1b[2J\nR5"), 2, "no rule is named"),
    "explain two rules": (("explain", "R5", "R6"), 2, "unrecognized arguments"),
    "migrate nothing": (("migrate",), 2, "required"),
    "migrate in place and out": (("migrate", "-i", "-o", "x", "good.yaml"), 2, "not allowed"),
    "migrate a missing file": (("migrate", "--check", "nope.yaml"), 2, "no such file"),
    "migrate an empty folder": (("migrate", "--check", "empty"), 2, "no config files"),
    "migrate unknown flag": (("migrate", "--bogus", "good.yaml"), 2, "unrecognized"),
    "json check of a missing file": (("check", "--json", "nope.yaml"), 2, "no such config"),
    "audit without --nemo-rl": (("audit",), 2, "--nemo-rl"),
    "audit a file": (("audit", "--nemo-rl", "good.yaml"), 2, "is not a folder"),
    "audit a missing folder": (("audit", "--nemo-rl", "nope"), 2, "no such folder"),
    "audit a folder that is not NeMo-RL": (("audit", "--nemo-rl", "empty"), 2,
                                           "is not a NeMo-RL checkout"),
    "audit a missing baseline": (("audit", "--nemo-rl", "empty", "--baseline", "nope.json"), 2,
                                 "baseline nope.json: no such file"),
    "audit a YAML baseline": (("audit", "--nemo-rl", "empty", "--baseline", "good.yaml"), 2,
                              "is not JSON"),
    "audit a control char path": (("audit", "--nemo-rl", "a\x1b[2Jb"), 2, "no such folder"),
}


def file_cases() -> Iterator[Case]:
    for name, (setup, says) in UNREADABLE.items():
        yield Case(f"check: {name}", setup, ("check", "--no-verify", "c.yaml"), 2, says)
        yield Case(f"resolve: {name}", setup, ("resolve", "c.yaml"), 2, says)
        yield Case(f"migrate: {name}", setup, ("migrate", "--check", "c.yaml"), 2, says)
    for name, body in NO_ALIASES.items():
        yield Case(f"check: no aliases, {name}", text("c.yaml", body),
                   ("check", "--no-verify", "c.yaml"), 0, "ok")
    for name, (setup, says) in BAD_PARENTS.items():
        yield Case(f"check: defaults {name}", setup, ("check", "--no-verify", "c.yaml"), 2, says)
        yield Case(f"resolve: defaults {name}", setup, ("resolve", "--json", "c.yaml"), 2, says)
        yield Case(f"migrate: defaults {name}", setup, ("migrate", "--check", "c.yaml"), 0, "")
    for name, (body, says) in BAD_INTERPOLATIONS.items():
        code = 0 if name in RESOLVES else 2
        setup = text("c.yaml", body)
        yield Case(f"resolve: {name}", setup, ("resolve", "c.yaml"), code, says)
        yield Case(f"check: {name}", setup, ("check", "--no-verify", "c.yaml"),
                   *((0, "ok") if name in CHECK_UNREAD else (code, says)))
        yield Case(f"migrate: {name}", setup, ("migrate", "--check", "c.yaml"), 0, "")
    for name, (body, says) in UNSET_READ_BY_CHECK.items():
        yield Case(f"check: {name}", text("c.yaml", body), ("check", "--no-verify", "c.yaml"),
                   2, says)
    for name, (body, says) in BAD_VALUES.items():
        setup = text("c.yaml", body)
        code = 0 if says == "ok" else 1  # `check --world-size` leaves `cluster` to the launcher
        yield Case(f"check: {name}", setup, ("check", "--world-size", "2", "c.yaml"), code, says)
    for name, (setup, says) in BAD_RECIPES.items():
        config = text("c.yaml", policy_with("quant_cfg: r.yaml"))
        yield Case(f"check: recipe {name}", both(setup, config),
                   ("check", "--world-size", "2", "c.yaml"), 1, says)


def name_cases() -> Iterator[Case]:
    for name in HOSTILE_NAMES:
        good = text(name, GOOD)
        yield Case(f"check: name {name!a}", good, ("check", "--no-verify", name), 0, "ok")
        yield Case(f"resolve missing: name {name!a}", text("x", ""), ("resolve", name), 2,
                   "no such config file")
        yield Case(f"migrate: name {name!a}", text(name, OUTDATED), ("migrate", "--check", name), 1,
                   "would change")
        if name.isprintable() or "\udcff" not in name:  # YAML text holds no undecodable bytes
            body = "defaults: " + json.dumps(name) + "\n"
            yield Case(f"check: parent {name!a}", text("c.yaml", body),
                       ("check", "--no-verify", "c.yaml"), 2, "does not exist")


def override_cases() -> Iterator[Case]:
    for name, (item, code, says) in OVERRIDES.items():
        yield Case(f"override: {name}", text("good.yaml", GOOD), ("resolve", "good.yaml", item),
                   code, says)


def argument_cases() -> Iterator[Case]:
    setup = both(text("good.yaml", GOOD), mkdir("empty"))
    for name, (argv, code, says) in ARGUMENTS.items():
        yield Case(f"args: {name}", setup, argv, code, says)


# Issue 22: sizes beyond any cluster, and a name too long for the file system.
HUGE = str(10**400)
TP3 = policy_with("automodel_cfg: {enabled: true, tensor_parallel_size: 3}")
LONG_NAME = "n" * 300 + ".yaml"


def huge_and_long_cases() -> Iterator[Case]:
    tp3 = both(text("tp3.yaml", TP3), text("good.yaml", GOOD),
               text("cluster.yaml", TP3 + f"cluster:\n  num_nodes: {HUGE}\n  gpus_per_node: 1\n"))
    half = str(10**200)
    for name, argv, code, says in (
        ("--world-size 10**400, TP 3", ("check", "--world-size", HUGE, "tp3.yaml"), 1,
         "does not divide the world size a 401-digit number"),
        ("--world-size 10**400, a good config", ("check", "--world-size", HUGE, "good.yaml"), 0,
         "ok"),
        ("--nodes 10**200 --gpus-per-node 10**200, TP 3",
         ("check", "--nodes", half, "--gpus-per-node", half, "tp3.yaml"), 1,
         "a 401-digit number"),
        ("cluster.num_nodes 10**400, TP 3", ("check", "cluster.yaml"), 1, "a 401-digit number"),
        ("migrate --check a 300-character name", ("migrate", "--check", LONG_NAME), 2,
         "name is too long for the file system"),
        ("migrate -i a 300-character name", ("migrate", "-i", LONG_NAME), 2,
         "name is too long for the file system"),
        ("migrate -o a 300-character name", ("migrate", "-o", LONG_NAME, "good.yaml"), 2,
         "File name too long"),
    ):
        yield Case(f"huge: {name}", tp3, argv, code, says)


def message_cases() -> Iterator[Case]:
    """Issue 22: messages that used to mislead (a loop as missing, a device as absent, an
    int key as no mapping, a newline dropped from a name)."""
    check = ("check", "--world-size", "2", "c.yaml")
    for name, setup, code, says in (
        ("recipe under a looping folder",
         both(symlink("la", "la"), text("c.yaml", policy_with("quant_cfg: la/r.yaml"))), 1,
         "its path is a symlink loop"),
        ("recipe /dev/zero named directly", text("c.yaml", policy_with("quant_cfg: /dev/zero")),
         1, "is not a regular file"),
        ("an int key in policy", text("c.yaml", policy_with("1: x")), 1,
         "policy has the key 1, which is an int, not a string"),
        ("an int key in a backend block",
         text("c.yaml", policy_with("automodel_cfg: {enabled: true, 3: 4}")), 1,
         "policy.automodel_cfg has the key 3, which is an int, not a string"),
        ("an int key at the top", text("c.yaml", "1: x\n" + GOOD), 1,
         "the config has the key 1, which is an int, not a string"),
        ("a float key at the top", text("c.yaml", "1.5: x\n" + GOOD), 2, "keys must be names"),
        ("a parent named with a newline", text("c.yaml", 'defaults: "a\\nb.yaml"\n' + GOOD), 2,
         "names a\\nb.yaml, which does not exist"),
    ):
        yield Case(f"message: {name}", setup, check, code, says)


def migrate_write_cases() -> Iterator[Case]:
    yield Case("migrate -i: outdated", text("c.yaml", OUTDATED), ("migrate", "-i", "c.yaml"), 0,
               "changed", {"c.yaml": MIGRATED.encode()})
    yield Case("migrate -i: CRLF", text("c.yaml", OUTDATED.replace("\n", "\r\n")),
               ("migrate", "-i", "c.yaml"), 0, "changed",
               {"c.yaml": MIGRATED.replace("\n", "\r\n").encode()})
    yield Case("migrate -i: BOM", text("c.yaml", "\ufeff" + OUTDATED),
               ("migrate", "-i", "c.yaml"), 0, "changed",
               {"c.yaml": ("\ufeff" + MIGRATED).encode()})
    yield Case("migrate -i: folder", both(text("d/a.yaml", OUTDATED), text("d/b.yaml", GOOD)),
               ("migrate", "-i", "d"), 0, "1 changed, 1 unchanged", {"d/a.yaml": MIGRATED.encode()})
    yield Case("migrate -i: symlink out of the folder",
               both(text("outside/v.yaml", OUTDATED), mkdir("d"),
                    symlink("d/link.yaml", "../outside/v.yaml"), text("d/own.yaml", OUTDATED)),
               ("migrate", "-i", "d"), 2, "outside the folders given",
               {"d/own.yaml": MIGRATED.encode()})
    yield Case("migrate -i: symlink named", both(text("t.yaml", OUTDATED),
                                                 symlink("l.yaml", "t.yaml")),
               ("migrate", "-i", "l.yaml"), 0, "changed", {"t.yaml": MIGRATED.encode()})
    yield Case("migrate -i: symlink loop in folder",
               both(text("d/a.yaml", OUTDATED), symlink("d/loop.yaml", "loop.yaml")),
               ("migrate", "-i", "d"), 0, "1 changed", {"d/a.yaml": MIGRATED.encode()})
    yield Case("migrate -i: FIFO in folder", both(text("d/a.yaml", OUTDATED), mkdir("d/sub"),
                                                  fifo("d/sub/p.yaml")),
               ("migrate", "-i", "d"), 0, "1 changed", {"d/a.yaml": MIGRATED.encode()})
    for name, (setup, says) in list(UNREADABLE.items())[::4]:
        yield Case(f"migrate -i: {name}", setup, ("migrate", "-i", "c.yaml"), 2, says)
    for name, (setup, _) in list(BAD_PARENTS.items())[::3]:
        yield Case(f"migrate -i --explicit-workers: defaults {name}", setup,
                   ("migrate", "-i", "--explicit-workers", "c.yaml"), 0, "unchanged")


TEMPLATE_STATIC = ("verify", "template_project.workers.TemplateAutomodelPolicyWorker",
                   "--protocol", "PolicyWorker", "--static")
# --cache-dir folders that cannot be used: (setup, the folder given, phrase); exit 2.
BAD_CACHE_DIRS: dict[str, tuple[Setup, str, str]] = {
    "a file": (text("f", "x"), "f", "exists and is not a directory"),
    "a FIFO": (fifo("p"), "p", "exists and is not a directory"),
    "below a file": (text("f", "x"), "f/cache", "Not a directory"),
    "a symlink loop": (symlink("loop", "loop"), "loop", "cannot be used"),
    "its entries folder a file": (text("c/v3", "x"), "c", "cannot be used"),
    "empty name": (text("x", ""), "", "name is empty"),
    "control characters": (text("a\x1b[2Jb", "x"), "a\x1b[2Jb", "not a directory"),
    "in /proc": (text("x", ""), "/proc/nemo-rl-cache", "cannot be used"),
}


def format_and_cache_cases() -> Iterator[Case]:
    """--output-format on hostile files and flags; --cache-dir on folders that are not."""
    for fmt in ("github", "sarif", "junit"):
        for name, (setup, says) in list(UNREADABLE.items())[::3]:
            yield Case(f"check --output-format {fmt}: {name}", setup,
                       ("check", "--no-verify", "--output-format", fmt, "c.yaml"), 2, says)
        yield Case(f"migrate --output-format {fmt}: outdated", text("c.yaml", OUTDATED),
                   ("migrate", "--check", "--output-format", fmt, "c.yaml"), 1, "migrate")
        yield Case(f"migrate --output-format {fmt}: missing", text("x", ""),
                   ("migrate", "--check", "--output-format", fmt, "nope.yaml"), 2, "no such file")
        for name in HOSTILE_NAMES[::2]:
            yield Case(f"check --output-format {fmt}: name {name!a}", text(name, GOOD),
                       ("check", "--no-verify", "--output-format", fmt, name), 0, "")
    for argv, says in (
        (("check", "--no-verify", "--output-format", "xml", "good.yaml"), "invalid choice"),
        (("check", "--no-verify", "--json", "--output-format", "sarif", "good.yaml"), "disagree"),
        (("migrate", "--output-format", "junit", "good.yaml"), "needs --check"),
        (("migrate", "--check", "-i", "--output-format", "junit", "good.yaml"), "unrecognized"),
        (("migrate", "--check", "--output-format"), "expected one argument"),
        ((*TEMPLATE_STATIC, "--no-cache", "--cache-dir", "c"), "not allowed with"),
    ):
        yield Case(f"args: {' '.join(argv)[:60]!a}", text("good.yaml", GOOD), argv, 2, says)
    for name, (setup, folder, says) in BAD_CACHE_DIRS.items():
        yield Case(f"verify --static --cache-dir: {name}", setup,
                   (*TEMPLATE_STATIC, "--cache-dir", folder), 2, says)
        yield Case(f"check --static --cache-dir: {name}", both(setup, text("good.yaml", GOOD)),
                   ("check", "--static", "--cache-dir", folder, "good.yaml"), 2, says)
    # The default folder blocked: a warning, then the verdict (nothing is written).
    yield Case("verify --static: default cache folder a FIFO", fifo(".nemo-rl-workers-cache"),
               TEMPLATE_STATIC, 0, "running without the cache")


# `check --cluster-resources FILE`: (setup of n.json, what the one line says).
CLUSTER_RESOURCES: dict[str, tuple[Setup, str]] = {
    "a directory": (mkdir("n.json"), "is not a regular file"),
    "a FIFO": (fifo("n.json"), "is not a regular file"),
    "a sparse 9 MB file": (sparse("n.json", 9 * 1024 * 1024), "byte limit"),
    "a symlink loop": (symlink("n.json", "n.json"), "n.json"),
    "binary garbage": (text("n.json", random.Random(7).randbytes(512)), "n.json"),
    "not JSON": (text("n.json", "nodes: [CPU: 4]"), "not valid JSON"),
    "nested 100000 deep": (text("n.json", "[" * 100_000 + "]" * 100_000), "nests too deeply"),
    "an integer of 5000 digits": (text("n.json", f'[{{"CPU": {"9" * 5000}}}]'),
                                  "not valid JSON"),
    "an integer of 400 digits": (text("n.json", f'[{{"CPU": {"9" * 400}}}]'),
                                 "must be a number from 0 to"),
    "infinity": (text("n.json", '[{"GPU": Infinity}]'), "must be a number from 0 to"),
    "NaN": (text("n.json", '[{"GPU": NaN}]'), "must be a number from 0 to"),
    "a negative amount": (text("n.json", '[{"GPU": -8}]'), "must be a number from 0 to"),
    "a string amount": (text("n.json", '[{"GPU": "8"}]'), "is str, not a number"),
    "a boolean amount": (text("n.json", '[{"GPU": true}]'), "is bool, not a number"),
    "a null amount": (text("n.json", '[{"GPU": null}]'), "is NoneType, not a number"),
    "a list of lists": (text("n.json", "[[4, 8]]"), "node 0 is list"),
    "an object without nodes": (text("n.json", '{"CPU": 4}'), "expected a JSON list"),
    "too many nodes": (text("n.json", "[" + ",".join(["{}"] * 100_001) + "]"),
                       "at most 100000 are read"),
    "a control character in a key": (text("n.json", '[{"G\\u001bPU": "x"}]'), "not a number"),
}


def cluster_resources_cases() -> Iterator[Case]:
    for name, (setup, says) in CLUSTER_RESOURCES.items():
        yield Case(f"check --cluster-resources: {name}", both(text("good.yaml", GOOD), setup),
                   ("check", "--no-verify", "good.yaml", "--cluster-resources", "n.json"), 2,
                   says)


def all_cases() -> list[Case]:
    cases = [*file_cases(), *name_cases(), *override_cases(), *argument_cases(),
             *huge_and_long_cases(), *message_cases(), *migrate_write_cases(),
             *format_and_cache_cases(), *cluster_resources_cases()]
    ids = [c.id for c in cases]
    assert len(ids) == len(set(ids)), "case ids must be unique"
    return cases
