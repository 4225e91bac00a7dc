"""The tree stage's front door: the revision a command judges against.

`revision_of(checkout, cache, notes)`: the reference without a tree; else the tree's model,
from the store when an entry validly holds it (`REVISION`, keyed by `model_inputs`), else
built from source (`revision_build`) and stored (the commands ask once per run and tree: every
config of a `check` shares it). A tree that is no NeMo-RL tree the model can judge (no driver, and
nothing unread that could hold one) is `UnusableCheckout`: one line, exit code 2.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from nemo_rl_workers.cache.key import Computation
from nemo_rl_workers.cache.store import Store
from nemo_rl_workers.tree.checkout import PACKAGE, Checkout, UnusableCheckout, project_pin
from nemo_rl_workers.tree.git_head import head_commit
from nemo_rl_workers.tree.knowledge import LIBRARY_PACKAGE
from nemo_rl_workers.tree.model_inputs import TreeInputs, tree_inputs
from nemo_rl_workers.tree.revision import Revision, reference_revision
from nemo_rl_workers.tree.tree_version import tree_version


@dataclass(frozen=True)
class StoredRevision:
    """A tree's model as stored: None for a tree judged as the reference. What changes
    without any of its files changing (the commit, the vLLM pin, how the tree was found
    and is named, the version `package_info.py` states) is read afresh on every run."""

    revision: Revision | None


REVISION = Computation("revision", TreeInputs, StoredRevision, "model")


def revision_of(checkout: Checkout | None, cache: Store | None = None,
                notes: list[str] | None = None) -> Revision:
    """The revision to judge (see the module docstring); a line about the cache (an entry
    that was not trusted) is added to `notes` once."""
    if checkout is None:
        return reference_revision()
    revision, note = _tree_revision(checkout.root, checkout.how, checkout.name, cache)
    if note is not None and notes is not None and note not in notes:
        notes.append(note)
    if not revision.is_reference and not revision.drivers and not revision.unread:
        raise UnusableCheckout(
            f"{checkout.name}: is not a NeMo-RL tree the tool can judge: no module of its "
            f"{PACKAGE} package starts workers (none names a worker class for a worker "
            f"builder) and none failed to read; give the folder of a NeMo-RL checkout")
    return revision


def _tree_revision(root: Path, how: str, name: str,
                   cache: Store | None) -> tuple[Revision, str | None]:
    note: str | None = None
    if cache is None:
        return _build(root, how, name)[0], None
    key = REVISION.key(tree_inputs(root, cache))
    got = cache.get_at(REVISION, key)
    if got.payload is not None:
        stored = got.payload.revision
        if stored is None:
            return _as_reference(how), None
        pin, project_problem = project_pin(root)
        fresh = dataclasses.replace(stored, name=name, root=str(root), how=how,
                                    commit=head_commit(root), version=tree_version(root),
                                    vllm_pin=pin, project_problem=project_problem)
        return _kept_under(fresh, key, cache), None
    if got.ignored is not None:
        note = (f"cache entry {cache.describe(key)} {got.ignored}; ignored, the tree "
                "is read again")
    revision, storable = _build(root, how, name)
    if storable:
        cache.put_at(REVISION, key, StoredRevision(
            None if revision.is_reference else _stored_part(revision)))
        if not revision.is_reference:
            revision = _kept_under(revision, key, cache)
    return revision, note


def _stored_part(revision: Revision) -> Revision:
    """The model without what is read afresh on every run (`StoredRevision`)."""
    return dataclasses.replace(revision, name="", root=None, how="", commit=None,
                               version=None, vllm_pin=None, project_problem=None)


def _kept_under(revision: Revision, key: str, cache: Store) -> Revision:
    """The model, with where answers derived from it are kept (`Revision.answers`)."""
    return dataclasses.replace(revision, key=key, answers=cache)


def _as_reference(how: str) -> Revision:
    # Judged as the reference, named as it: nothing machine-specific in the report.
    return reference_revision(f"{how}, which selects workers through {LIBRARY_PACKAGE}")


def _build(root: Path, how: str, name: str) -> tuple[Revision, bool]:
    """(the model, whether it may be stored)."""
    # Loaded only to build: a run the cache answers does not load the source model.
    from nemo_rl_workers.tree.revision_build import build_revision, selects_through_library

    if selects_through_library(root):
        return _as_reference(how), True
    try:
        return build_revision(root, how, name), True
    except (RecursionError, MemoryError, ValueError, OSError) as err:
        # A tree the source model cannot take whole: everything it would decide is
        # undecided, with the reason, and the rest of each config is still checked.
        return Revision(
            name=name, root=str(root), how=how, commit=head_commit(root),
            version=tree_version(root), schema="undecided",
            has_v2=False, extension_field="not read", rows=(), environments={}, defaults={},
            vllm_pin=project_pin(root)[0], project_problem=project_pin(root)[1], undecided=(
                f"the tree's source could not be modelled: {type(err).__name__}: {err}",),
            unread=(f"{name}: the tree's source could not be modelled",)), False
