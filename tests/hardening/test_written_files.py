"""Every file the tool writes goes through one atomic writer (issue 35): emitted Protocols,
pruned baselines, migrated configs and cache entries. Asserted as a user sees it: the line,
the exit code, and the files left (content, mode, link), with a planted symlink, a full
disk (a fault injected at the write call) and read-only files."""

from __future__ import annotations

import errno
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path

import pytest

from nemo_rl_workers.cache.folder import MODEL_CACHE_ENV
from nemo_rl_workers.cache.key import Computation
from nemo_rl_workers.cache.store import Store
from nemo_rl_workers.reading import atomic_write
from nemo_rl_workers.reading.atomic_write import write_atomic
from tests.audit.tree import write_tree
from tests.cli_run import Ran, run_cli

WORKERS = '''
class SyncWorker:
    def wake_up(self):
        return True


class AsyncWorker:
    async def wake_up_async(self):
        return True
'''
BODY = '''
def wake(self):
    return self.worker_group.run_all_workers_single_data("wake_up")
'''
STALE = {"rule": "missing-method", "driver": "Gen.gone", "method": "gone",
         "worker": "nemo_rl.workers.SyncWorker"}


def run(argv: list[str]) -> Ran:
    return run_cli(*argv)


def injected_full_disk(fd: int, data: bytes) -> None:
    """A fault injected on purpose: the disk fills up halfway through the write."""
    os.write(fd, data[: len(data) // 2])
    raise OSError(errno.ENOSPC, "No space left on device")


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "checkout", driver_body=BODY, workers=WORKERS)


@pytest.fixture
def baseline(tree: Path, tmp_path: Path) -> Path:
    """A baseline of today's finding and one stale entry."""
    path = tmp_path / "base" / "audit-baseline.json"
    path.parent.mkdir()
    assert run(["audit", "--nemo-rl", str(tree), "--write-baseline", str(path)])[0] == 0
    data = json.loads(path.read_text())
    data["findings"].append(STALE)
    path.write_text(json.dumps(data))
    return path


def pruned(tree: Path, baseline: str) -> tuple[int, str]:
    code, _, err = run(["audit", "--nemo-rl", str(tree), "--baseline", baseline,
                        "--prune-baseline"])
    return code, err


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o444])
def test_a_pruned_baseline_keeps_its_mode(tree: Path, baseline: Path, mode: int) -> None:
    os.chmod(baseline, mode)
    code, err = pruned(tree, str(baseline))
    assert (code, err) == (0, f"nemo-rl-workers: audit: removed 1 stale entries from "
                              f"{baseline}\n")
    assert stat.S_IMODE(baseline.stat().st_mode) == mode
    assert STALE not in json.loads(baseline.read_text())["findings"]
    assert listing(baseline.parent) == ["audit-baseline.json"]


def test_a_symlinked_baseline_is_pruned_through_its_link(
    tree: Path, baseline: Path, tmp_path: Path
) -> None:
    link = tmp_path / "link.json"
    link.symlink_to(baseline)
    code, err = pruned(tree, str(link))
    assert (code, err) == (0, f"nemo-rl-workers: audit: removed 1 stale entries from {link}\n")
    assert link.is_symlink() and os.readlink(link) == str(baseline)
    assert STALE not in json.loads(baseline.read_text())["findings"]
    assert listing(tmp_path / "base") == ["audit-baseline.json"]


def test_a_full_disk_leaves_the_baseline_and_no_temporary_file(
    tree: Path, baseline: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = baseline.read_bytes()
    monkeypatch.setattr(atomic_write, "_write_all", injected_full_disk)
    code, err = pruned(tree, str(baseline))
    assert (code, err) == (2, f"nemo-rl-workers: audit: cannot write {baseline}: "
                              "No space left on device\n")
    assert baseline.read_bytes() == before
    assert listing(baseline.parent) == ["audit-baseline.json"]


def emit(tree: Path, out: Path) -> tuple[int, str]:
    code, _, err = run(["audit", "--nemo-rl", str(tree), "--emit-protocols", str(out)])
    return code, err


def test_a_symlink_planted_at_the_old_temporary_name_is_left_alone(
    tree: Path, tmp_path: Path
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    planted = tmp_path / ".p.py.tmp"
    planted.symlink_to(victim)
    out = tmp_path / "p.py"
    code, err = emit(tree, out)
    assert code == 1 and err.splitlines()[-1] == (
        f"nemo-rl-workers: audit: wrote 2 Protocols to {out}")
    assert victim.read_text() == "keep me\n"
    assert not out.is_symlink() and "class SyncWorkerProtocol(Protocol):" in out.read_text()
    assert planted.is_symlink()
    assert listing(tmp_path) == [".p.py.tmp", "checkout", "p.py", "victim.txt"]


def test_emitting_through_a_symlink_writes_the_file_it_names(
    tree: Path, tmp_path: Path
) -> None:
    real = tmp_path / "real.py"
    real.write_text("old\n")
    os.chmod(real, 0o600)
    link = tmp_path / "p.py"
    link.symlink_to(real)
    assert emit(tree, link)[0] == 1
    assert link.is_symlink() and "(Protocol):" in real.read_text()
    assert stat.S_IMODE(real.stat().st_mode) == 0o600


@pytest.mark.parametrize(("make", "reason"), [
    (lambda p: p.symlink_to(p.parent / "missing.py"), "is a symlink to a missing file; "
     "not written"),
    (lambda p: p.mkdir(), "is not a regular file"),
])
def test_emitting_onto_what_is_not_a_file_is_refused(
    tree: Path, tmp_path: Path, make: object, reason: str
) -> None:
    out = tmp_path / "p.py"
    make(out)  # type: ignore[operator]  # the parametrized maker, a plain callable
    code, err = emit(tree, out)
    assert (code, err) == (2, f"nemo-rl-workers: audit: --emit-protocols {out}: cannot be "
                              f"written: {reason}\n")
    assert listing(tmp_path) == ["checkout", "p.py"]


def test_emitting_onto_a_full_disk_leaves_nothing(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "p.py"
    out.write_text("previous\n")
    monkeypatch.setattr(atomic_write, "_write_all", injected_full_disk)
    code, err = emit(tree, out)
    assert (code, err) == (2, f"nemo-rl-workers: audit: --emit-protocols {out}: cannot be "
                              "written: No space left on device\n")
    assert out.read_text() == "previous\n"
    assert listing(tmp_path) == ["checkout", "p.py"]


def test_a_migrated_config_on_a_full_disk_is_left_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "old.yaml"
    text = "policy:\n  dtensor_cfg:\n    enabled: true\n  megatron_cfg:\n    enabled: false\n"
    config.write_text(text)
    # The session's cache folder made before the disk fills: only the config is written here.
    Store.open(os.environ[MODEL_CACHE_ENV])
    monkeypatch.setattr(atomic_write, "_write_all", injected_full_disk)
    code, _, err = run(["migrate", "--in-place", str(config)])
    assert code == 2
    assert err == f"error: {config}: cannot be written: No space left on device\n"
    assert config.read_text() == text
    assert listing(tmp_path) == ["old.yaml"]


def test_a_new_file_gets_the_mode_the_umask_allows(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        write_atomic(tmp_path / "new.txt", b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o640


# A computation the cache tests here and in test_writes_stay_inside.py store.
@dataclass(frozen=True)
class Asked:
    name: str


@dataclass(frozen=True)
class Answer:
    a: int


KEPT = Computation("hardening-entry", Asked, Answer)


def test_a_cache_entry_is_never_written_through_a_symlink(tmp_path: Path) -> None:
    cache = Store.open(tmp_path / "cache")
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    key = KEPT.key(Asked("k"))
    entry = cache.entry_path(key)
    entry.symlink_to(victim)
    assert cache.get(KEPT, Asked("k")).payload is None
    cache.put(KEPT, Asked("k"), Answer(1))  # the link is replaced by the entry
    assert victim.read_text() == "keep me\n"
    assert not entry.is_symlink() and cache.get(KEPT, Asked("k")).payload == Answer(1)
    assert listing(entry.parent) == [f"{key}.json"]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="this system has no /dev/full")
@pytest.mark.parametrize(("option", "line"), [
    ("--emit-protocols", "nemo-rl-workers: audit: --emit-protocols /dev/full: cannot be "
     "written: is not a regular file\n"),
    ("--write-baseline", "nemo-rl-workers: audit: cannot write /dev/full: is not a regular "
     "file\n"),
])
def test_a_device_as_the_target_is_refused_not_written(
    tree: Path, option: str, line: str
) -> None:
    code, _, err = run(["audit", "--nemo-rl", str(tree), option, "/dev/full"])
    assert (code, err) == (2, line)
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)
