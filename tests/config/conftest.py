"""Shared fixtures: the upstream corpus of real NeMo-RL configs, loaded once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nemo_rl_workers.reading.loader import ConfigLoadError, load_config
from tests.corpus import NEMO_RL

CORPUS = (NEMO_RL / "examples" / "configs").resolve()

CorpusResults = dict[Path, "dict[str, Any] | ConfigLoadError"]


@pytest.fixture(scope="session")
def corpus_results() -> CorpusResults:
    """Every corpus YAML -> its loaded config, or the ConfigLoadError it raised."""
    if not CORPUS.is_dir():
        pytest.skip(f"corpus absent: {CORPUS}")
    results: CorpusResults = {}
    with pytest.MonkeyPatch.context() as mp:
        # One recipe reads ${oc.env:HF_HOME}; loading it needs the variable, as upstream.
        mp.setenv("HF_HOME", "/tmp/hf_home")
        for path in sorted(CORPUS.rglob("*.yaml")):
            try:
                results[path] = load_config(path)
            except ConfigLoadError as e:
                results[path] = e
    return results
