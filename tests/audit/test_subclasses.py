"""#28 item 2: the tree's own subclasses of its workers and of its vLLM extension, judged
as extensions; each case as a pair (the defect found, the fixed tree clean)."""

from __future__ import annotations

from pathlib import Path

from tests.audit.tree import audited, keys

NO_CALLS = '''
def nothing(self):
    return None
'''

# SyncWorker hands vLLM `nemo_rl.backend.Extension`; QuantExtension subclasses it.
WORKERS = '''
class SyncWorker:
    def start(self, llm):
        return llm(worker_extension_cls="nemo_rl.backend.Extension")

    def _load_weights(self, weights):
        return weights


class AsyncWorker(SyncWorker):
    pass
'''


def _backend(base_load: str) -> str:
    return f'''
class Extension:
    def update_weights(self, weights):
        return self._load_weights(weights)
{base_load}

class QuantExtension(Extension):
    def _load_weights(self, weights):
        scales = weights
        return super()._load_weights(scales)
'''


def test_a_super_call_to_a_dropped_base_method_is_found(tmp_path: Path) -> None:
    """A merge dropped the base `_load_weights` the quantized extension still calls."""
    report = audited(tmp_path, workers=WORKERS, driver_body=NO_CALLS,
                     extra={"nemo_rl/backend.py": _backend("")})
    assert keys(report) == {("extension-missing-method", "QuantExtension._load_weights",
                             "_load_weights", "QuantExtension")}
    assert report.findings[0].call == "nemo_rl/backend.py:10"


def test_a_super_call_to_a_base_method_is_clean(tmp_path: Path) -> None:
    base = "\n    def _load_weights(self, weights):\n        return weights\n"
    report = audited(tmp_path, workers=WORKERS, driver_body=NO_CALLS,
                     extra={"nemo_rl/backend.py": _backend(base)})
    assert report.findings == []


def _lifecycle(override: str) -> str:
    return f'''
class SyncWorker:
    def refit(self):
        finalize_draft = True
        self.finalize(finalize_draft)
        return self.prepare(keys=None)

    def finalize(self, finalize_draft=False):
        return finalize_draft

    def prepare(self, keys=None):
        return keys


class AsyncWorker(SyncWorker):
{override}
'''


def test_an_override_the_bases_own_calls_do_not_fit_is_found(tmp_path: Path) -> None:
    """The base's lifecycle calls `self.finalize(finalize_draft)`; the subclass still
    overrides `finalize(self)`, and `prepare` without the keyword the base sends."""
    report = audited(tmp_path, driver_body=NO_CALLS, workers=_lifecycle('''
    def finalize(self):
        return None

    def prepare(self, skip_keys):
        return skip_keys
'''))
    assert keys(report) == {
        ("base-call-too-many-positional", "SyncWorker.refit", "finalize", "AsyncWorker"),
        ("base-call-unknown-keyword", "SyncWorker.refit", "prepare", "AsyncWorker"),
        ("base-call-missing-argument", "SyncWorker.refit", "prepare", "AsyncWorker"),
    }
    finalize = next(f for f in report.findings if f.method == "finalize")
    assert finalize.call == "nemo_rl/workers.py:5"  # where the base calls it
    assert finalize.definition == "nemo_rl/workers.py:17"  # the override
    assert finalize.severity == "error"


def test_an_override_that_fits_the_bases_calls_is_clean(tmp_path: Path) -> None:
    report = audited(tmp_path, driver_body=NO_CALLS, workers=_lifecycle('''
    def finalize(self, finalize_draft=False):
        return None

    def prepare(self, keys=None, **kwargs):
        return keys
'''))
    assert report.findings == []


def test_self_rebound_in_a_nested_function_is_not_the_instance(tmp_path: Path) -> None:
    """A patched method (`def new(self, ...)` inside a method) has its own `self`."""
    report = audited(tmp_path, driver_body=NO_CALLS, workers=WORKERS + '''

class Patched(AsyncWorker):
    def patch(self, model):
        def named(self, *args):
            return self.named_buffers(*args)
        model.named = named
        return self.nope_on_purpose()
''')
    assert keys(report) == {("extension-missing-method", "Patched.patch", "nope_on_purpose",
                             "Patched")}
