"""A class that does not exist is an error in every command that takes one (issue 43,
item 6), with "did you mean X?" drawn from the classes of the tree and of the user's own
folders: `audit` (it said "unknown: ... no such class", then "no findings", exit 0),
`verify`, `verify --static`, a config's class in `check` / `resolve`, the pytest plugin's
items and the guard's refusal.

The commands run as the user runs them (`python -m nemo_rl_workers` in a fresh process,
the extension's folder and the tree on its import path); the corpus cases are skipped
where a corpus folder is absent.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from nemo_rl_workers.guard.judgement import judge_source, source_model
from nemo_rl_workers.tree.source import ImportRoots
from tests.corpus import CORPORA
from tests.revision.test_verify_tree_protocols import TREES, cli, extension
from tests.revision.trees import config, new_tree, write

pytest_plugins = ("pytester",)

MISSPELT = "myext.gen_workers.MyVlmWorker"
MEANT = "myext.gen_workers.MyVLMWorker"


def _tree(era: str) -> tuple[Path, str, str]:
    folder, module, base = TREES[era]
    tree = CORPORA / folder
    if not (tree / "nemo_rl").is_dir():
        pytest.skip(f"the corpus {tree} is absent")
    return tree, module, base


def _one_line(code: int, out: str, err: str) -> str:
    """The refusal: exit 2 (unusable input), nothing on stdout, its line last on stderr."""
    assert (code, out) == (2, ""), out + err
    assert "Traceback" not in err
    return err.splitlines()[-1]


@pytest.mark.parametrize("era", sorted(TREES))
def test_audit_refuses_a_misspelt_extension(era: str, tmp_path: Path) -> None:
    tree, module, base = _tree(era)
    ext = extension(tmp_path / "ext", module, base)
    audit = ("audit", "--no-cache", "--nemo-rl", str(tree), "--path", str(ext))
    line = _one_line(*cli(*audit, MISSPELT, path=[], cwd=tmp_path))
    assert line == (f"nemo-rl-workers: audit: {MISSPELT}: no such class (not in the tree or "
                    f"under --path; given by the command line); did you mean {MEANT}?")
    # Named by a config: the config's field is said.
    named = tmp_path / "ext.yaml"
    named.write_text(f"policy:\n  worker_extension_cls_fqn: {MISSPELT}\n", encoding="utf-8")
    line = _one_line(*cli(*audit, str(named), path=[], cwd=tmp_path))
    assert f"given by {named}: policy.worker_extension_cls_fqn); did you mean {MEANT}?" in line
    # The class spelt right is audited (its findings are the audit's business).
    code, out, err = cli(*audit, MEANT, "--json", path=[], cwd=tmp_path)
    assert code in (0, 1), err
    assert [e["class"] for e in json.loads(out)["extensions"]] == [MEANT]


@pytest.mark.parametrize("era", sorted(TREES))
@pytest.mark.parametrize("static", [True, False], ids=["static", "runtime"])
def test_verify_refuses_a_misspelt_class(era: str, static: bool, tmp_path: Path) -> None:
    tree, module, base = _tree(era)
    ext = extension(tmp_path / "ext", module, base)
    verify = ("verify", "--no-cache", *(["--static"] if static else []), "--protocol",
              "PolicyWorker", "--nemo-rl", str(tree))
    cases = [
        (MISSPELT, f"module myext.gen_workers ({ext / 'myext' / 'gen_workers.py'}) has no "
                   "class 'MyVlmWorker'", MEANT),
        ("myext.gen_worker.MyVLMWorker", "no source file for myext.gen_worker", MEANT),
        ("myexr.gen_workers.MyVLMWorker", "no folder on the import path has a module or "
                                          "package named 'myexr'", MEANT),
        # The tree's own classes are suggested too.
        (f"{module}.{base}s", f"has no class '{base}s'", f"{module}.{base}"),
    ]
    for given, why, meant in cases:
        line = _one_line(*cli(*verify, given, path=[ext, tree], cwd=tmp_path))
        assert line.startswith(f"nemo-rl-workers: FQN={given}: no such class ("), line
        assert why in line and line.endswith(f"); did you mean {meant}?") or (
            f"); did you mean {meant}," in line), line


def test_a_config_naming_a_misspelt_class_is_told_the_registered_one(tmp_path: Path) -> None:
    """A tree that reads the class from the config: its R2 names the closest class of the
    tree's own registry, in `check` and `resolve` (exit 1, a problem of the config)."""
    root = new_tree(tmp_path)
    path = config(root, "ext.yaml", """\
        policy:
          model_name: tiny
          automodel_cfg: {enabled: true}
          megatron_cfg: {enabled: false}
          worker_extension_cls_fqn: research.ext.RegisterdWorker
        """)
    for command in (("check", "--no-verify"), ("resolve",)):
        code, out, err = cli(*command, "--json", path, path=[], cwd=tmp_path)
        assert code == 1, out + err
        (problem,) = json.loads(out)["problems"]
        assert problem["rule"] == "R2" and problem["given"] == "research.ext.RegisterdWorker"
        assert ("(ACTOR_ENVIRONMENT_REGISTRY); did you mean research.ext.RegisteredWorker? "
                "Otherwise add it there, or Ray cannot tell which Python runs it."
                ) in problem["message"]


def test_a_pytest_item_of_a_misspelt_class_fails_with_the_line(
    pytester: pytest.Pytester,
) -> None:
    pytester.makefile(".ini", pytest=textwrap.dedent("""\
        [pytest]
        pythonpath = .
        nemo_rl_workers_registered = false
        nemo_rl_workers_static = true
        nemo_rl_workers_extensions =
            userext.workers.GodWorker --protocol PolicyWorker
        """))
    package = pytester.mkpydir("userext")
    (package / "workers.py").write_text("class GoodWorker:\n    pass\n", encoding="utf-8")
    result = pytester.runpytest_subprocess("--nemo-rl-workers", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)  # the verify item and the verify --static item
    said = [line for line in result.outlines if "no such class" in line]
    assert said and all(line.endswith("did you mean userext.workers.GoodWorker?")
                        for line in said), result.outlines


def test_the_guard_s_refusal_names_the_closest_class(tmp_path: Path) -> None:
    folder = write(tmp_path / "user", {"guard_ext/__init__.py": "",
                                       "guard_ext/workers.py": "class EchoWorker: ...\n"})
    roots = ImportRoots.of_this_interpreter().searched_first([str(folder)])
    verdict = judge_source("guard_ext.workers.EchoWorkr", source_model(roots), None)
    assert verdict.rule == "defined"
    assert verdict.fix.startswith("did you mean guard_ext.workers.EchoWorker? Otherwise "
                                  "define class EchoWorkr in module guard_ext.workers")
