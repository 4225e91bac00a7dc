"""run_migrate: files on disk, exit codes, atomic writes and the report."""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from nemo_rl_workers.commands.migrate import run_migrate
from nemo_rl_workers.model.migration import migrate_paths
from nemo_rl_workers.reading.atomic_write import write_atomic
from nemo_rl_workers.reading.migrate_files import FileReport
from tests.migrate.test_migrate_text import quantized_fqn

OLD = "policy:\n  # backend\n  dtensor_cfg:\n    _v2: true\n    enabled: true\n"
NEW = "policy:\n  # backend\n  automodel_cfg:\n    enabled: true\n"
CLEAN = "policy:\n  automodel_cfg:\n    enabled: true  # already current\n"


def run(*argv: str | Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_migrate([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode())
    return path


def test_in_place_rewrites_outdated_and_never_touches_current_files(tmp_path: Path) -> None:
    old = write(tmp_path / "old.yaml", OLD)
    clean = write(tmp_path / "clean.yaml", CLEAN)
    before = clean.stat()
    code, out, err = run(old, clean, "--in-place")
    assert (code, err) == (0, "")
    assert old.read_text() == NEW
    assert clean.read_bytes() == CLEAN.encode()
    after = clean.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert out == (
        f"{old}: changed\n"
        "  policy.dtensor_cfg -> policy.automodel_cfg\n"
        "  dropped policy.automodel_cfg._v2\n"
        f"{clean}: unchanged\n"
        "1 changed, 1 unchanged, 0 failed\n"
    )


def test_check_exits_1_and_writes_nothing_then_0_once_migrated(tmp_path: Path) -> None:
    old = write(tmp_path / "old.yaml", OLD)
    code, out, _ = run(old, "--check")
    assert code == 1
    assert f"{old}: would change\n" in out
    assert old.read_text() == OLD
    assert run(old, "--in-place")[0] == 0
    assert run(old, "--check")[0] == 0  # migrating twice changes nothing
    assert run(old, "--in-place")[1].startswith(f"{old}: unchanged\n")


def test_without_destination_shows_a_diff_and_writes_nothing(tmp_path: Path) -> None:
    old = write(tmp_path / "old.yaml", OLD)
    code, out, _ = run(old)
    assert code == 0
    assert "-  dtensor_cfg:\n-    _v2: true\n+  automodel_cfg:\n     enabled: true\n" in out
    assert out.endswith("1 would change, 0 unchanged, 0 failed\n")
    assert old.read_text() == OLD


def test_output_file_for_one_input(tmp_path: Path) -> None:
    old = write(tmp_path / "old.yaml", OLD)
    target = tmp_path / "out" / "new.yaml"
    assert run(old, "-o", target)[0] == 0
    assert target.read_text() == NEW
    assert old.read_text() == OLD


def test_output_folder_mirrors_relative_names(tmp_path: Path) -> None:
    configs = tmp_path / "configs"
    write(configs / "base.yaml", OLD)
    write(configs / "recipes" / "llm" / "child.yaml", "defaults: ../../base.yaml\n" + CLEAN)
    write(configs / "notes.txt", "not a config")
    out_dir = tmp_path / "migrated"
    code, out, _ = run(configs, "-o", out_dir)
    assert code == 0
    assert (out_dir / "base.yaml").read_text() == NEW
    # Unchanged files are copied too, so the mirrored defaults chain stays whole.
    assert (out_dir / "recipes" / "llm" / "child.yaml").read_text() == (
        "defaults: ../../base.yaml\n" + CLEAN
    )
    assert not (out_dir / "notes.txt").exists()
    assert (configs / "base.yaml").read_text() == OLD
    # Several files: names relative to their common folder.
    out2 = tmp_path / "two"
    child = configs / "recipes" / "llm" / "child.yaml"
    assert run(configs / "base.yaml", child, "-o", out2)[0] == 0
    assert (out2 / "base.yaml").read_text() == NEW
    assert (out2 / "recipes" / "llm" / "child.yaml").exists()


def test_parse_error_is_one_line_leaves_the_file_and_others_still_migrate(tmp_path: Path) -> None:
    broken_text = "policy:\n  dtensor_cfg: [unclosed\n"
    broken = write(tmp_path / "broken.yaml", broken_text)
    old = write(tmp_path / "old.yaml", OLD)
    code, out, err = run(broken, old, "--in-place")
    assert code == 2
    assert broken.read_bytes() == broken_text.encode()
    assert old.read_text() == NEW
    lines = err.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"error: {broken}: invalid YAML")
    assert out.endswith("1 changed, 0 unchanged, 1 failed\n")
    assert run(broken, old, "--check")[0] == 2  # bad input outranks "would change"


def test_missing_file_and_usage_errors_exit_2(tmp_path: Path) -> None:
    code, _, err = run(tmp_path / "nope.yaml", "--in-place")
    assert code == 2
    assert err == f"error: {tmp_path / 'nope.yaml'}: no such file\n"
    old = write(tmp_path / "old.yaml", OLD)
    code, _, err = run(old, "--in-place", "-o", tmp_path / "x.yaml")
    assert code == 2
    assert "not allowed with argument" in err
    assert run()[0] == 2
    code, out, _ = run("--help")
    assert code == 0
    assert "--explicit-workers" in out
    assert old.read_text() == OLD
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run(empty, "--check")[0] == 2


def test_atomic_write_keeps_mode_and_leaves_no_temp_file(tmp_path: Path) -> None:
    old = write(tmp_path / "old.yaml", OLD)
    os.chmod(old, 0o640)
    assert run(old, "--in-place")[0] == 0
    assert stat.S_IMODE(old.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.yaml"]


def test_atomic_write_failure_removes_the_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "a.yaml"
    target.write_text("x: 1\n")

    with pytest.raises(TypeError):
        write_atomic(target, "not bytes")  # type: ignore[arg-type]  # a fault on purpose
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.yaml"]
    assert target.read_text() == "x: 1\n"


def test_outdated_parent_not_given_is_reported_and_left_alone(tmp_path: Path) -> None:
    parent = write(tmp_path / "base.yaml", OLD)
    grandchild_parent = write(tmp_path / "recipes" / "mid.yaml", "defaults: ../base.yaml\n")
    child = write(tmp_path / "recipes" / "child.yaml",
                  "defaults:\n  - mid.yaml\npolicy:\n  dtensor_cfg:\n    enabled: true\n")
    code, out, _ = run(child, "--in-place")
    assert code == 0
    assert parent.read_text() == OLD
    assert grandchild_parent.read_text() == "defaults: ../base.yaml\n"
    assert out.splitlines()[:3] == [
        f"{child}: changed",
        "  policy.dtensor_cfg -> policy.automodel_cfg",
        f"  note: parent {parent} still needs migrating "
        "(policy.dtensor_cfg -> policy.automodel_cfg; dropped policy.automodel_cfg._v2)",
    ]
    (report,) = migrate_paths([child])
    assert report.outdated_parents == (parent,)
    # Given together, the parent migrates too and is not reported.
    write(child, "defaults:\n  - mid.yaml\npolicy:\n  dtensor_cfg:\n    enabled: true\n")
    code, out, _ = run(parent, child, "--in-place")
    assert code == 0
    assert "note:" not in out
    assert parent.read_text() == NEW


def test_missing_parent_is_a_note_not_an_error(tmp_path: Path) -> None:
    child = write(tmp_path / "child.yaml", "defaults: ../gone/base.yaml\n" + OLD)
    code, out, _ = run(child, "--in-place")
    assert code == 0
    assert f"  note: parent {tmp_path.parent / 'gone' / 'base.yaml'}: no such file\n" in out


def test_explicit_workers_resolves_the_backend_through_defaults(tmp_path: Path) -> None:
    parent_text = (
        "policy:\n  megatron_cfg:\n    enabled: true\n  dtensor_cfg:\n    enabled: false\n"
        "  generation:\n    backend: vllm\n    vllm_cfg:\n      async_engine: true\n"
    )
    parent = write(tmp_path / "base.yaml", parent_text)
    child = write(tmp_path / "fp8.yaml",
                  "defaults: base.yaml\npolicy:\n  quant_cfg: FP8_DEFAULT_CFG\n"
                  "  generation:\n    quant_cfg: FP8_DEFAULT_CFG\n")
    code, out, _ = run(child, "--in-place", "--explicit-workers")
    assert code == 0
    megatron_q = quantized_fqn("policy", "megatron")
    async_q = quantized_fqn("generation", "vllm", "async")
    assert child.read_text() == (
        "defaults: base.yaml\n"
        "policy:\n"
        "  quant_cfg: FP8_DEFAULT_CFG\n"
        f"  worker_extension_cls_fqn: {megatron_q}\n"
        "  generation:\n"
        "    quant_cfg: FP8_DEFAULT_CFG\n"
        f"    worker_extension_cls_fqn: {async_q}\n"
    )
    assert parent.read_text() == parent_text  # only the file being migrated is written
    assert f"note: parent {parent} still needs migrating" in out
    assert run(child, "--check", "--explicit-workers")[0] == 0


def test_explicit_workers_with_a_broken_defaults_chain_notes_why(tmp_path: Path) -> None:
    child = write(tmp_path / "fp8.yaml",
                  "defaults: gone.yaml\npolicy:\n  quant_cfg: FP8_DEFAULT_CFG\n")
    code, out, _ = run(child, "--check", "--explicit-workers")
    assert code == 0
    assert (
        "note: worker_extension_cls_fqn not made explicit: the merged config does not load" in out
    )


def test_reports_are_data(tmp_path: Path) -> None:
    old = write(tmp_path / "old.yaml", "\ufeff" + OLD)  # a BOM survives
    (report,) = migrate_paths([old])
    assert isinstance(report, FileReport)
    assert report.status == "changed"
    assert report.new_bytes() == ("\ufeff" + NEW).encode()
    assert report.original == old.read_bytes()


def test_in_place_through_a_symlink_updates_the_target(tmp_path: Path) -> None:
    target = write(tmp_path / "real.yaml", OLD)
    link = tmp_path / "link.yaml"
    link.symlink_to(target)
    assert run(link, "--in-place")[0] == 0
    assert link.is_symlink()
    assert target.read_text() == NEW


def test_a_file_named_twice_is_migrated_once(tmp_path: Path) -> None:
    old = write(tmp_path / "old.yaml", OLD)
    code, out, _ = run(tmp_path, old, "--in-place")
    assert code == 0
    assert out.endswith("1 changed, 0 unchanged, 0 failed\n")


# Faults injected on purpose: a user (or another tool) edits or deletes a file between the
# moment migrate reads it and the moment it would replace it.
def _edit_after_planning(monkeypatch: pytest.MonkeyPatch, fault: Callable[[Path], object]) -> None:
    import nemo_rl_workers.commands.migrate as migrate

    planned = migrate.migrate_paths

    def plan_then_fault(paths: Iterable[Path], **kwargs: Any) -> list[FileReport]:
        reports = planned(paths, **kwargs)
        for report in reports:
            fault(report.path)
        return reports

    monkeypatch.setattr(migrate, "migrate_paths", plan_then_fault)


def test_an_edit_made_while_migrating_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = write(tmp_path / "old.yaml", OLD)
    edited = OLD + "# edited meanwhile\n"
    _edit_after_planning(monkeypatch, lambda p: p.write_text(edited))
    code, out, err = run(old, "--in-place")
    assert code == 2
    assert err == f"error: {old}: changed since it was read; not rewritten (run migrate again)\n"
    assert old.read_text() == edited


def test_a_file_deleted_while_migrating_is_not_recreated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = write(tmp_path / "old.yaml", OLD)
    _edit_after_planning(monkeypatch, lambda p: p.unlink())
    code, _, err = run(old, "--in-place")
    assert code == 2
    assert err == f"error: {old}: vanished since it was read; not recreated\n"
    assert not old.exists()


def test_a_file_replaced_by_the_same_bytes_is_still_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another inode (an editor's save-by-rename) is another file, even with equal bytes."""
    old = write(tmp_path / "old.yaml", OLD)

    def save_by_rename(path: Path) -> None:
        write(path.with_name("tmp.yaml"), OLD).replace(path)

    _edit_after_planning(monkeypatch, save_by_rename)
    code, _, err = run(old, "--in-place")
    assert code == 2 and "changed since it was read" in err
    assert old.read_text() == OLD


def test_a_symlink_out_of_the_folder_is_not_followed(tmp_path: Path) -> None:
    outside = write(tmp_path / "outside" / "target.yaml", OLD)
    inside = write(tmp_path / "d" / "own.yaml", OLD)
    (tmp_path / "d" / "link.yaml").symlink_to(outside)
    code, _, err = run(tmp_path / "d", "--in-place")
    assert code == 2
    assert err == (f"error: {tmp_path / 'd' / 'link.yaml'}: is a symlink to {outside}, "
                   "outside the folders given; not rewritten\n")
    assert outside.read_text() == OLD
    assert inside.read_text() == NEW


def test_a_symlink_in_the_output_folder_is_not_followed_out_of_it(tmp_path: Path) -> None:
    old = write(tmp_path / "in" / "old.yaml", OLD)
    victim = write(tmp_path / "elsewhere" / "victim.yaml", CLEAN)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "old.yaml").symlink_to(victim)
    code, _, err = run(tmp_path / "in", "-o", tmp_path / "out")
    assert code == 2
    assert f"is a symlink to {victim}, outside {tmp_path / 'out'}; not written" in err
    assert victim.read_text() == CLEAN
    assert old.read_text() == OLD
