"""`check --entry DRIVER CONFIG` (issue 44, item 3): the user's driver is an entry too.

The 2026-08 corpus tree takes a worker extension only in code (`Policy(...,
worker_extension_cls_fqn=...)`; the config's key is ignored there). Upstream's research
template (`research/template_project`: `single_update.py`, which registers its extension
with the actor-environment registry at module level, builds `Policy(...,
worker_extension_cls_fqn="template_project.worker_extension.DTensorPolicyWorkerV2Extension")`
and calls `get_worker_rank` / `return_input` on its workers by name) is copied into the
test's folder, correct or with one mistake, and `check` runs in-process against the tree,
as the user types it from the project's folder. The driver is read, never imported.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.cli_run import Ran, run_cli
from tests.corpus import NEMO_RL

REPO = Path(__file__).resolve().parents[2]
CORPUS = NEMO_RL
TEMPLATE = CORPUS / "research" / "template_project"
EXTENSION = "template_project.worker_extension.DTensorPolicyWorkerV2Extension"
DRIVER = "single_update.py"
CONFIG = "configs/grpo_math_1B.yaml"
# The driver's lines, as upstream wrote them (checked against the copy: `_line`).
PASSED_AT = 'worker_extension_cls_fqn="template_project.worker_extension.' \
            'DTensorPolicyWorkerV2Extension",'
CALLED_AT = 'policy.run_all_workers_single_data("get_worker_rank")'
REGISTRATION = '''ACTOR_ENVIRONMENT_REGISTRY[
    "template_project.worker_extension.DTensorPolicyWorkerV2Extension"
] = PY_EXECUTABLES.AUTOMODEL
'''

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (TEMPLATE / DRIVER).is_file(),
                       reason=f"the 2026-08 corpus tree is absent ({CORPUS})"),
]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder of tree models for the module: the tree is modelled once."""
    return tmp_path_factory.mktemp("cache")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The research template, copied; the working folder is its folder."""
    copy = tmp_path / "template_project"
    shutil.copytree(TEMPLATE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.chdir(copy)
    return copy


def _edit(file: Path, old: str, new: str) -> None:
    text = file.read_text(encoding="utf-8")
    assert text.count(old) == 1, (file, old)
    file.write_text(text.replace(old, new), encoding="utf-8")


def _line(file: Path, text: str) -> int:
    (line,) = [n for n, got in enumerate(file.read_text("utf-8").splitlines(), 1)
               if text in got]
    return line


def _check(cache: Path, *argv: str, driver: str = DRIVER) -> Ran:
    return run_cli("check", "--cache-dir", str(cache), "--nemo-rl", str(CORPUS),
                   "--entry", driver, *argv)


def _json(cache: Path, *argv: str, driver: str = DRIVER) -> tuple[int, dict[str, Any]]:
    code, out, err = _check(cache, "--json", CONFIG, *argv, driver=driver)
    assert code in (0, 1), out + err
    payload: dict[str, Any] = json.loads(out)
    return code, payload


def _policy(payload: dict[str, Any]) -> dict[str, Any]:
    rows: list[dict[str, Any]] = [w for w in payload["workers"] if w["section"] == "policy"]
    (row,) = rows
    return row


def _problems(payload: dict[str, Any], rule: str) -> list[dict[str, Any]]:
    return [p for p in payload["problems"] if p["rule"] == rule]


def test_the_template_s_driver_names_its_class(project: Path, cache: Path) -> None:
    code, out, err = _check(cache, "-v", CONFIG)  # the table of workers
    assert code == 0, out + err
    row = next(line for line in out.splitlines() if line.startswith("  policy "))
    assert row.split()[-1] == EXTENSION and " constructor " in row, out
    assert "is ignored by this NeMo-RL" not in out
    code, payload = _json(cache)
    assert code == 0 and payload["problems"] == [], payload["problems"]
    assert _policy(payload) | {"fqn": EXTENSION, "source": "constructor",
                               "env": "PY_EXECUTABLES.AUTOMODEL"} == _policy(payload)


def test_a_misspelt_class_is_told_the_one_meant(project: Path, cache: Path) -> None:
    driver = project / DRIVER
    _edit(driver, 'V2Extension",', 'V2Extensoin",')
    code, payload = _json(cache)
    assert code == 1
    (problem,) = _problems(payload, "driver.no-such-class")
    assert problem["file"] == DRIVER
    assert problem["line"] == _line(driver, 'V2Extensoin",')
    assert problem["message"].endswith(f"did you mean {EXTENSION}?"), problem
    assert _policy(payload)["source"] == "default"  # no class judged bad is shown as chosen


def test_an_unregistered_class_is_refused(project: Path, cache: Path) -> None:
    driver = project / DRIVER
    _edit(driver, REGISTRATION, "")
    code, payload = _json(cache)
    assert code == 1
    (problem,) = _problems(payload, "extension-unregistered")
    assert problem["file"] == DRIVER
    assert "is registered with no actor environment" in problem["message"]
    assert (f'ACTOR_ENVIRONMENT_REGISTRY["{EXTENSION}"] = PY_EXECUTABLES.AUTOMODEL'
            in problem["message"]), problem


def test_a_registration_the_driver_does_not_import_is_none(project: Path, cache: Path) -> None:
    """A module beside the driver registers the class, but the driver never imports it:
    the driver's process has no environment for the class."""
    driver = project / DRIVER
    (project / "register_elsewhere.py").write_text(
        "from nemo_rl.distributed.ray_actor_environment_registry import "
        "ACTOR_ENVIRONMENT_REGISTRY\n"
        "from nemo_rl.distributed.virtual_cluster import PY_EXECUTABLES\n\n"
        + REGISTRATION, encoding="utf-8")
    _edit(driver, REGISTRATION, "")
    code, payload = _json(cache)
    assert code == 1
    (problem,) = _problems(payload, "extension-unregistered")
    assert (f"is registered with an actor environment only by register_elsewhere, which "
            f"{DRIVER} does not import") in problem["message"], problem
    _edit(driver, "import argparse\n", "import argparse\n\nimport register_elsewhere  # noqa\n")
    code, payload = _json(cache)
    assert code == 0, payload["problems"]


def test_a_method_the_driver_calls_by_name_is_missing(project: Path, cache: Path) -> None:
    _edit(project / "template_project" / "worker_extension.py",
          "def get_worker_rank(", "def get_rank(")
    code, payload = _json(cache)
    assert code == 1
    (problem,) = _problems(payload, "missing-method")
    assert problem["file"] == DRIVER
    assert problem["line"] == _line(project / DRIVER, CALLED_AT)
    assert f"calls 'get_worker_rank' on {EXTENSION}, which has no such method" in \
        problem["message"], problem


def test_the_class_read_from_a_config_key(project: Path, cache: Path) -> None:
    """`worker_extension_cls_fqn=policy_config["worker_extension_cls_fqn"]`, with
    `policy_config = config.policy`: the config's key, as the driver reads it."""
    driver = project / DRIVER
    _edit(driver, PASSED_AT, 'worker_extension_cls_fqn=policy_config["worker_extension_cls_fqn"],')
    key = "policy.worker_extension_cls_fqn"
    code, payload = _json(cache, f"{key}={EXTENSION}o")
    assert code == 1
    (problem,) = _problems(payload, "driver.no-such-class")
    assert problem["path"] == key and problem["file"] == DRIVER
    assert f"the config's {key}" in problem["message"]
    assert problem["message"].endswith(f"did you mean {EXTENSION}?"), problem
    code, payload = _json(cache, f"{key}={EXTENSION}")
    assert code == 0, payload["problems"]
    assert _policy(payload)["fqn"] == EXTENSION
    # The tree ignores the key, but the driver reads it: no "ignored" warning.
    assert not [w for w in payload["warnings"] if "is ignored" in w], payload["warnings"]


@pytest.mark.parametrize("read", [
    'config["policy"]["worker_extension_cls_fqn"]',
    'config.policy.get("worker_extension_cls_fqn")',
    'policy_config.get("worker_extension_cls_fqn", None)',
])
def test_each_read_of_the_config_is_followed(project: Path, cache: Path, read: str) -> None:
    _edit(project / DRIVER, PASSED_AT, f"worker_extension_cls_fqn={read},")
    code, payload = _json(cache, f"policy.worker_extension_cls_fqn={EXTENSION}")
    assert code == 0, payload["problems"]
    assert _policy(payload)["fqn"] == EXTENSION
    if ".get(" in read:  # absent: None, and the driver's own worker
        code, payload = _json(cache)
        assert code == 0, payload["problems"]
        assert _policy(payload)["source"] == "default"


@pytest.mark.parametrize(("before", "given"), [
    ("", "EXTENSION_FQN"),  # a module constant (written at module level below)
    (f'    ext = "{EXTENSION}"\n', "ext"),  # a local name assigned before the call
])
def test_a_constant_or_a_local_name(project: Path, cache: Path, before: str,
                                    given: str) -> None:
    driver = project / DRIVER
    _edit(driver, PASSED_AT, f"worker_extension_cls_fqn={given},")
    _edit(driver, "\n\ndef main(", f'\nEXTENSION_FQN = "{EXTENSION}"\n\n\ndef main(')
    _edit(driver, "    # 0) Config\n", f"    # 0) Config\n{before}")
    code, payload = _json(cache)
    assert code == 0, payload["problems"]
    assert _policy(payload)["fqn"] == EXTENSION


@pytest.mark.parametrize(("before", "given", "why"), [
    ("", "os.environ.get('MY_EXT') or pick()", "it calls pick(), code this check does not run"),
    # A name assigned under a branch: which value it holds at the call is not followed.
    (f'    ext = "{EXTENSION}"\n    if tokenizer is None:\n        ext = "other.Ext"\n',
     "ext", "assigns in a statement this check does not follow"),
])
def test_a_class_the_walk_cannot_compute_is_undecided(project: Path, cache: Path, before: str,
                                                      given: str, why: str) -> None:
    driver = project / DRIVER
    _edit(driver, PASSED_AT, f"worker_extension_cls_fqn={given},")
    _edit(driver, "\n    # 1) Set up compute cluster", f"\n{before}    # 1) Set up compute cluster")
    code, payload = _json(cache)
    assert code == 1
    (problem,) = _problems(payload, "driver.undecided")
    assert problem["file"] == DRIVER and problem["line"] == _line(driver, f"={given},")
    assert "policy: undecided: " in problem["message"] and why in problem["message"], problem
    assert _policy(payload)["source"] == "default"


def test_a_config_block_the_driver_hands_a_call_is_not_known(project: Path,
                                                             cache: Path) -> None:
    """A block given to code that may change it before the call: undecided, not read."""
    driver = project / DRIVER
    _edit(driver, PASSED_AT, 'worker_extension_cls_fqn=policy_config["worker_extension_cls_fqn"],')
    _edit(driver, "    # 1) Set up compute cluster", "    tweak(policy_config)\n"
                                                     "    # 1) Set up compute cluster")
    code, payload = _json(cache, f"policy.worker_extension_cls_fqn={EXTENSION}")
    assert code == 1
    (problem,) = _problems(payload, "driver.undecided")
    assert "hands it to tweak(), which may change it" in problem["message"], problem


def test_an_extension_of_another_worker_is_the_wrong_base(project: Path, cache: Path) -> None:
    """The template's class extends DTensor v2's worker; with `_v2: false` the policy
    starts DTensor v1's."""
    code, payload = _json(cache, "policy.dtensor_cfg._v2=false")
    assert code == 1
    (problem,) = _problems(payload, "driver.wrong-base")
    assert ("dtensor_policy_worker.DTensorPolicyWorker, the worker policy starts with this "
            "config, but its nearest base in the tree is ") in problem["message"], problem


def test_a_driver_that_takes_no_such_parameter(project: Path, cache: Path) -> None:
    _edit(project / DRIVER, 'cluster=cluster, config=policy_config["generation"]',
          f'cluster=cluster, config=policy_config["generation"], '
          f'worker_extension_cls_fqn="{EXTENSION}"')
    code, payload = _json(cache)
    assert code == 1
    (problem,) = _problems(payload, "driver.no-parameter")
    assert "this NeMo-RL's VllmGeneration takes no worker_extension_cls_fqn" in \
        problem["message"], problem


def test_a_replaced_resolver(project: Path, cache: Path) -> None:
    """The worker-class resolver the tree's Policy calls, replaced at module level (as
    callers did for vLLM before upstream's config field): followed where it returns one
    class name, undecided otherwise."""
    driver = project / DRIVER
    _edit(driver, PASSED_AT, "")
    _edit(driver, "\n\ndef main(", (
        "\nimport nemo_rl.models.policy.lm_policy as lm_policy\n\n"
        "def _mine(default_cls, config):\n"
        f'    return "{EXTENSION}"\n\n'
        "lm_policy.resolve_policy_worker_cls = _mine\n\n\ndef main("))
    code, payload = _json(cache)
    assert code == 0, payload["problems"]
    assert _policy(payload)["fqn"] == EXTENSION
    _edit(driver, f'    return "{EXTENSION}"\n', "    return default_cls\n")
    code, payload = _json(cache)
    assert code == 1
    (problem,) = _problems(payload, "driver.undecided")
    assert problem["line"] == _line(driver, "lm_policy.resolve_policy_worker_cls = _mine")
    assert "replaces nemo_rl.models.policy.lm_policy.resolve_policy_worker_cls" in \
        problem["message"], problem


def test_a_resolver_replaced_where_it_is_defined(project: Path, cache: Path) -> None:
    """`utils.resolve_policy_worker_cls = f`: lm_policy imported the function by name, so
    whether Policy calls the replacement depends on the import order: undecided."""
    driver = project / DRIVER
    _edit(driver, PASSED_AT, "")
    _edit(driver, "\n\ndef main(", (
        "\nimport nemo_rl.models.policy.utils as policy_utils\n\n"
        f'policy_utils.resolve_policy_worker_cls = lambda cls, cfg: "{EXTENSION}"\n\n\n'
        "def main("))
    code, payload = _json(cache)
    assert code == 1
    (problem,) = _problems(payload, "driver.undecided")
    assert ("but nemo_rl.models.policy.lm_policy imports that function by name, so Policy "
            "calls the replacement only if") in problem["message"], problem


def test_a_replaced_vllm_resolver(project: Path, cache: Path) -> None:
    """VllmGeneration's resolver takes the class through a local name (`worker_cls =
    "..."; resolve_generation_worker_cls(worker_cls, self.cfg)`): found as well."""
    driver = project / DRIVER
    _edit(driver, "\n\ndef main(", (
        "\nfrom nemo_rl.models.generation.vllm import vllm_generation\n\n"
        "vllm_generation.resolve_generation_worker_cls = lambda cls, cfg: cls\n\n\n"
        "def main("))
    code, payload = _json(cache)
    assert code == 1
    (problem,) = _problems(payload, "driver.undecided")
    assert problem["message"].startswith("policy.generation: undecided: "), problem
    assert "replaces nemo_rl.models.generation.vllm.vllm_generation." \
           "resolve_generation_worker_cls" in problem["message"], problem


def _hostile(folder: Path) -> dict[str, Path]:
    fifo = folder / "fifo.py"
    os.mkfifo(fifo)
    latin = folder / "latin.py"
    latin.write_bytes(b'NAME = "caf\xe9"\n')
    directory = folder / "folder.py"
    directory.mkdir()
    huge = folder / "huge.py"
    with huge.open("wb") as f:
        f.truncate(9 * 2**20)  # over the 8 MiB a module may be; sparse, nothing written
    return {"is not a regular file": fifo, "is not UTF-8 text": latin,
            "is not a regular file ": directory, "over the": huge}


def test_a_hostile_driver_is_one_line(project: Path, cache: Path) -> None:
    for said, driver in _hostile(project).items():
        code, out, err = _check(cache, CONFIG, driver=str(driver))
        assert code == 2 and out == "", out + err
        (line,) = err.splitlines()
        assert line.startswith(f"nemo-rl-workers: {CONFIG}: --entry {driver}: "), line
        assert said.strip() in line, line


def test_an_expression_nested_past_the_limit_is_undecided(project: Path, cache: Path) -> None:
    """A chain the parser accepts but no recursive walk can follow (or show)."""
    _edit(project / DRIVER, PASSED_AT, "worker_extension_cls_fqn=" + "+".join(['"a"'] * 900)
          + ",")
    code, payload = _json(cache)
    assert code == 1
    (problem,) = _problems(payload, "driver.undecided")
    assert "nested too deeply" in problem["message"], problem


def test_quant_cfg_with_the_driver_s_class_is_a_warning(project: Path, cache: Path) -> None:
    """This tree's Policy starts the constructor's class over the quantized worker
    `quant_cfg` picks (DESIGN's mechanism 3): said, as the quantization may not run."""
    code, payload = _json(cache, "policy.quant_cfg=FP8_DEFAULT_CFG")
    assert code == 0, payload["problems"]
    assert _policy(payload)["fqn"] == EXTENSION
    (warning,) = [w for w in payload["warnings"] if "quant_cfg is set" in w]
    assert "in place of nemo_rl.modelopt.models.policy.workers.dtensor_quant_policy_worker_v2" \
           ".DTensorQuantPolicyWorkerV2, the quantized worker it would pick" in warning, warning


def test_a_class_that_is_no_actor_is_refused(project: Path, cache: Path) -> None:
    _edit(project / "template_project" / "worker_extension.py",
          '@ray.remote(\n    runtime_env=get_runtime_env_for_policy_worker('
          '"dtensor_policy_worker_v2")\n)  # pragma: no cover\n', "")
    code, payload = _json(cache)
    assert code == 1
    (problem,) = _problems(payload, "extension-not-actor")
    assert problem["file"] == DRIVER
    assert f"{EXTENSION} is not an actor class" in problem["message"], problem
