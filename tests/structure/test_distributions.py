"""The entry points and versions read from metadata folders are importlib.metadata's, in
this environment (differential: the standard library is the oracle)."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from nemo_rl_workers.reading import distributions


@pytest.mark.parametrize("group", ["nemo_rl.workers", "console_scripts", "pytest11"])
def test_entry_points_are_importlib_metadata_s(group: str) -> None:
    ours = {(e.name, e.value) for e in distributions.entry_points(group)}
    theirs = {(e.name, e.value) for e in metadata.entry_points(group=group)}
    assert ours == theirs
    assert ours  # each group has entry points here (the template, pip, this plugin)


@pytest.mark.parametrize("name", ["pyrefly", "mypy", "nemo-rl-worker-contracts", "PyYAML",
                                  "ruamel.yaml", "no-such-distribution"])
def test_versions_are_importlib_metadata_s(name: str) -> None:
    try:
        expected: str | None = metadata.version(name)
    except metadata.PackageNotFoundError:
        expected = None
    assert distributions.version(name) == expected


def test_a_plugin_folder_on_the_path_is_read_and_loaded(tmp_path: Path) -> None:
    (tmp_path / "plug.py").write_text("class A:\n    B = 42\n")
    info = tmp_path / "my_plug-1.2.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-plug\nVersion: 1.2\n")
    (info / "entry_points.txt").write_text(
        "# a comment\n[other]\nx = y:z\n\n[nemo_rl.workers]\nmine = plug:A.B\n")
    found = distributions.entry_points("nemo_rl.workers", [str(tmp_path)])
    assert [(e.name, e.value, e.dist) for e in found] == [("mine", "plug:A.B", "my-plug")]
    assert distributions.version("My_Plug", [str(tmp_path)]) == "1.2"
    code = ("import sys; sys.path.insert(0, sys.argv[1]);"
            "from nemo_rl_workers.reading import distributions as d;"
            "print(d.entry_points('nemo_rl.workers', [sys.argv[1]])[0].load())")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                          text=True, timeout=60, check=True)
    assert done.stdout.strip() == "42"


def test_hostile_metadata_folders_are_passed_over(tmp_path: Path) -> None:
    """A FIFO named entry_points.txt or METADATA, a folder in its place, a huge file:
    nothing hangs, nothing raises, the other distributions are still read."""
    import os

    fifo = tmp_path / "fifo_dist-1.0.dist-info"
    fifo.mkdir()
    os.mkfifo(fifo / "entry_points.txt")
    os.mkfifo(fifo / "METADATA")
    folder = tmp_path / "folder_dist-1.0.dist-info"
    (folder / "entry_points.txt").mkdir(parents=True)
    huge = tmp_path / "huge_dist-1.0.dist-info"
    huge.mkdir()
    (huge / "entry_points.txt").write_text("[nemo_rl.workers]\n" + "# pad\n" * 300_000)
    good = tmp_path / "good_dist-2.0.dist-info"
    good.mkdir()
    (good / "entry_points.txt").write_text("[nemo_rl.workers]\ng = good:PLUGIN\n")
    (good / "METADATA").write_text("Metadata-Version: 2.1\nName: good-dist\nVersion: 2.0\n")
    found = distributions.entry_points("nemo_rl.workers", [str(tmp_path)])
    assert [(e.name, e.dist) for e in found] == [("g", "good-dist")]
    assert distributions.version("fifo-dist", [str(tmp_path)]) is None
    assert distributions.version("good-dist", [str(tmp_path)]) == "2.0"
