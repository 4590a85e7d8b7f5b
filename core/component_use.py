"""One study per stateful component object.

A surrogate or an ensemble strategy keeps state between calls that belongs to the
study it serves: a warm start from the last fit, per-trial caches keyed by trial
number, bootstrap draws, ensemble slots. Given to a second study, the same object
built other ensembles than a fresh instance (``posthoc``, ``esmbo``,
``agnostic-bayes``) or failed (``eo``). A study uses the objects it is given as they
are (they may hold locks, and their owner may read them afterwards), so a second study
is refused instead, unless it continues the same study file.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Mapping
from typing import Any

from ensembo.components import EXPERIMENT_KEYS
from ensembo.errors import ExperimentError

STATEFUL = ("surrogate", "ensemble_strategy")

# id(object) -> (a weak reference to it, the storage of the study it serves or None)
_SERVING: dict[int, tuple[weakref.ref, str | None]] = {}


def storage_key(storage: Any) -> str | None:
    """What identifies a study's storage across ``Study`` objects: the real path of a
    study file; ``None`` for a study in memory, which no other study continues."""
    path = storage if isinstance(storage, str | os.PathLike) else getattr(storage, "path", None)
    if path is None or str(path) in (":memory:", "sqlite://", "sqlite:///:memory:"):
        return None
    text = os.fspath(path)
    return os.path.realpath(text[len("sqlite:///"):] if text.startswith("sqlite:///") else text)


def check_unused(specs: Mapping[str, Any], storage: Any) -> None:
    """Refuse a stateful component object that already serves another study."""
    key = storage_key(storage)
    for kind in STATEFUL:
        spec = specs.get(kind)
        entry = _SERVING.get(id(spec))
        if entry is None or entry[0]() is not spec:
            continue
        served = entry[1]
        if key is None or served != key:
            raise ExperimentError(
                EXPERIMENT_KEYS.get(kind, kind),
                f"this {type(spec).__name__} object already served another study"
                + (f" ({served})" if served else "")
                + ": it keeps that study's state between trials, so each study needs its "
                "own instance (create one per study, or pass the registry name)",
            )


def record_use(specs: Mapping[str, Any], storage: Any) -> None:
    """Remember which study file (or none) each stateful component object serves."""
    key = storage_key(storage)
    for kind in STATEFUL:
        spec = specs.get(kind)
        if spec is None or isinstance(spec, str | Mapping):
            continue
        try:
            ref = weakref.ref(spec, _forget(id(spec)))
        except TypeError:  # no weak references (__slots__): not tracked
            continue
        _SERVING[id(spec)] = (ref, key)


def _forget(ident: int):
    """The callback that drops an object's entry once it is garbage-collected (its id
    may then be given to another object)."""
    return lambda _: _SERVING.pop(ident, None)
