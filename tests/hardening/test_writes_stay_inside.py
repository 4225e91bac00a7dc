"""No write follows a symlink out of the folder it writes in (issue 45, item 1): a
baseline committed as a link to a file elsewhere, an output folder or file linked out of
the folder given. Each is refused in one line naming the path and the link's end, exit 2,
and the file outside is left as it was; a link that stays inside is still written through
(tests/hardening/test_written_files.py)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from nemo_rl_workers.cache.store import FORMAT, Store
from nemo_rl_workers.reading.atomic_write import TargetRefused, write_atomic
from tests.audit.tree import write_tree
from tests.cli_run import run_cli as run
from tests.docs.snippets import REPO
from tests.hardening.test_written_files import KEPT, Answer, Asked

WORKERS = '''
class SyncWorker:
    def wake_up(self):
        return True
'''
BODY = '''
def wake(self):
    return self.worker_group.run_all_workers_single_data("wake_up")
'''
STALE = {"rule": "missing-method", "driver": "Gen.gone", "method": "gone",
         "worker": "nemo_rl.workers.SyncWorker"}
KEEP = "keep me\n"


def refusal(path: str, end: Path, folder: str, *, command: str = "audit") -> str:
    return (f"nemo-rl-workers: {command}: cannot write {path}: is a symlink to {end}, "
            f"outside {folder}, the folder it is written in; not written\n")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository (the working folder) holding a NeMo-RL tree, and a victim beside it."""
    root = tmp_path / "repo"
    write_tree(root / "checkout", driver_body=BODY, workers=WORKERS)
    (tmp_path / "victim.json").write_text(KEEP)
    monkeypatch.chdir(root)
    return root


@pytest.fixture
def victim(repo: Path) -> Path:
    return repo.parent / "victim.json"


def test_audit_write_baseline_through_a_link_out_is_refused(repo: Path, victim: Path) -> None:
    Path("baseline.json").symlink_to(victim)
    code, out, err = run("audit", "--nemo-rl", "checkout", "--write-baseline", "baseline.json")
    assert (code, err) == (2, refusal("baseline.json", victim, "."))
    assert victim.read_text() == KEEP and Path("baseline.json").is_symlink()


def test_audit_prune_baseline_through_a_link_out_is_refused(repo: Path, victim: Path) -> None:
    assert run("audit", "--nemo-rl", "checkout", "--write-baseline", "real.json")[0] == 0
    data = json.loads(Path("real.json").read_text())
    victim.write_text(json.dumps({"version": 1, "findings": [*data["findings"], STALE]}))
    before = victim.read_text()
    Path("baseline.json").symlink_to(victim)
    code, _, err = run("audit", "--nemo-rl", "checkout", "--baseline", "baseline.json",
                       "--prune-baseline")
    assert (code, err) == (2, refusal("baseline.json", victim, "."))
    assert victim.read_text() == before


def test_a_baseline_in_a_linked_folder_out_is_refused(repo: Path, victim: Path) -> None:
    Path("ci").symlink_to(victim.parent)  # a committed folder link: ci -> ..
    code, _, err = run("audit", "--nemo-rl", "checkout", "--write-baseline",
                       "ci/victim.json")
    assert code == 2
    assert err == ("nemo-rl-workers: audit: cannot write ci/victim.json: its folder ci is a "
                   f"symlink to {victim.parent}, outside ., the folder it is written in; "
                   "not written\n")
    assert victim.read_text() == KEEP


@pytest.fixture
def configs(repo: Path) -> Path:
    """This repository's example configs (one R5 mismatch among them) in the repository."""
    shutil.copytree(REPO / "examples" / "configs", repo / "configs")
    return repo / "configs"


def check(*args: str) -> tuple[int, str, str]:
    return run("check", "--no-verify", "--reference", *args)


def test_check_write_and_prune_baseline_through_a_link_out_are_refused(
    configs: Path, victim: Path
) -> None:
    Path("baseline.json").symlink_to(victim)
    code, _, err = check("--write-baseline", "baseline.json", "configs")
    assert (code, err) == (2, refusal("baseline.json", victim, ".", command="check"))
    assert victim.read_text() == KEEP
    # A stale entry to prune: the file outside holds it, and keeps it.
    victim.write_text(json.dumps({"version": 1, "findings": [
        {"rule": "R5", "recipe": "configs/grpo_tiny.yaml", "key": "policy.x"}]}))
    before = victim.read_text()
    code, _, err = check("--baseline", "baseline.json", "--prune-baseline", "configs")
    assert code == 2 and err.splitlines()[-1] == refusal(
        "baseline.json", victim, ".", command="check").rstrip("\n")
    assert victim.read_text() == before


def emit(out: str) -> tuple[int, str]:
    code, _, err = run("audit", "--nemo-rl", "checkout", "--emit-protocols", out)
    return code, err


def emit_refusal(path: str, reason: str) -> str:
    return (f"nemo-rl-workers: audit: --emit-protocols {path}: cannot be written: "
            f"{reason}\n")


def test_emitting_into_a_linked_output_folder_out_is_refused(repo: Path) -> None:
    outside = repo.parent / "elsewhere"
    outside.mkdir()
    Path("out").symlink_to(outside)
    code, err = emit("out/p.py")
    assert (code, err) == (2, emit_refusal("out/p.py", (
        f"its folder out is a symlink to {outside}, outside ., the folder it is written "
        "in; not written")))
    assert list(outside.iterdir()) == []


def test_emitting_onto_a_linked_output_file_out_is_refused(repo: Path, victim: Path) -> None:
    Path("out").mkdir()
    Path("out/p.py").symlink_to(victim)
    code, err = emit("out/p.py")
    assert (code, err) == (2, emit_refusal("out/p.py", (
        f"is a symlink to {victim}, outside out, the folder it is written in; not written")))
    assert victim.read_text() == KEEP


def test_a_link_inside_the_folder_is_written_through(repo: Path) -> None:
    Path("out/real").mkdir(parents=True)
    Path("out/real/p.py").write_text("old\n")
    Path("out/p.py").symlink_to("real/p.py")
    Path("linked").symlink_to("out")  # a folder link that stays in the repository
    assert emit("linked/p.py")[0] == 0
    assert Path("out/p.py").is_symlink() and "(Protocol):" in Path("out/real/p.py").read_text()


@pytest.mark.parametrize(("make", "reason"), [
    (lambda p: p.symlink_to(p.parent / "nowhere.py"),
     "is a symlink to a missing file; not written"),
    (lambda p: p.symlink_to(p.name), "is a symlink loop; not written"),
    (lambda p: os.mkfifo(p), "is not a regular file"),
])
def test_hostile_targets_are_refused_in_one_line(repo: Path, make: object,
                                                 reason: str) -> None:
    make(Path("p.py"))  # type: ignore[operator]  # the parametrized maker, a plain callable
    code, err = emit("p.py")
    assert (code, err) == (2, emit_refusal("p.py", reason))


def test_a_folder_loop_on_the_way_is_refused(repo: Path) -> None:
    Path("out").symlink_to("out")
    code, err = emit("out/p.py")
    assert (code, err) == (2, emit_refusal("out/p.py",
                                           "its folder out is a symlink loop; not written"))


def test_an_absolute_path_is_judged_from_the_root(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "out").symlink_to(outside)
    with pytest.raises(TargetRefused, match="its folder .*/folder/out is a symlink to"):
        write_atomic(tmp_path / "folder" / "out" / "p.py", b"x")
    assert list(outside.iterdir()) == []


def test_a_named_folder_is_the_callers_choice(tmp_path: Path) -> None:
    """A cache folder that is itself a link (a home's cache on a scratch disk) is used;
    a link inside it that leads out is never written through: the entry is not kept."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (tmp_path / "cache").symlink_to(scratch)
    cache = Store.open(tmp_path / "cache")
    cache.put(KEPT, Asked("k"), Answer(1))
    assert cache.get(KEPT, Asked("k")).payload == Answer(1)
    assert any(scratch.rglob("*.json"))
    victim = tmp_path / "victim"
    victim.mkdir()
    moved = tmp_path / "moved"
    (scratch / f"v{FORMAT}").rename(moved)
    (scratch / f"v{FORMAT}").symlink_to(victim)
    cache.put(KEPT, Asked("other"), Answer(2))
    assert list(victim.iterdir()) == []
    with pytest.raises(TargetRefused, match="outside"):
        (tmp_path / "cache" / "sub").symlink_to(victim)
        write_atomic(tmp_path / "cache" / "sub" / "e.json", b"x",
                     within=tmp_path / "cache")
    assert list(victim.iterdir()) == []
