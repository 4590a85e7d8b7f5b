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
from ensembo.storage import keeps_in_memory

STATEFUL = ("surrogate", "ensemble_strategy")
_ROLES = {"surrogate": "a surrogate", "ensemble_strategy": "an ensemble strategy"}

# id(object) -> (a weak reference to it, the storage of the study it serves or None)
_SERVING: dict[int, tuple[weakref.ref, tuple | None]] = {}


def storage_key(storage: Any) -> tuple | None:
    """What identifies the study a storage holds across ``Study`` objects: a study file
    by its real path and inode (a file deleted and made anew holds another study; one
    not made yet holds none), a storage object without a file by its identity; ``None``
    for a new study in memory, which nothing continues."""
    if storage is None or isinstance(storage, str | os.PathLike):
        if keeps_in_memory(storage):
            return None
        path = storage
    else:
        path = getattr(storage, "path", None)
        if path is None:
            return ("storage object", id(storage))
    text = os.fspath(path)
    text = os.path.expanduser(text[len("sqlite:///"):] if text.startswith("sqlite:///") else text)
    try:
        status = os.stat(text)
    except OSError:
        return ("no study file yet", os.path.realpath(text))
    return (os.path.realpath(text), status.st_dev, status.st_ino)


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
                f"{_file_of(served)}: {_ROLES[kind]} may keep the state of the study it "
                "serves, so each study needs its own instance (create one per study, or "
                "pass the registry name)",
            )


def _file_of(key: tuple | None) -> str:
    """`` (path)`` for the key of a study file, else nothing."""
    return f" ({key[0]})" if key is not None and len(key) == 3 else ""


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
