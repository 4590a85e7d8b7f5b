"""One writing study per storage *object*.

Studies given a path each open their own storage, and the file's writer lock keeps them
apart (:mod:`ensembo.storage.writer_lock`). Two studies handed the same storage object
(``Study(space, storage=st)``, then ``Study.load(st)``) would share it and number new
trials from their own histories, overwriting each other's. So the newest study to open
a storage object writes it, and an older one's writes are refused, as for a file.
"""

from __future__ import annotations

import weakref
from typing import Any

from ensembo.errors import StorageError

# storage object -> the token of the study that writes it; weak, so a storage no study
# holds any more is forgotten
_writers: weakref.WeakKeyDictionary[Any, object] = weakref.WeakKeyDictionary()


def take_over(storage: Any) -> object:
    """Make a new study the writer of ``storage``; returns the study's token. A storage
    that cannot be weakly referenced (or hashed) is not tracked."""
    token = object()
    try:
        _writers[storage] = token
    except TypeError:
        pass
    return token


def check_still_writer(storage: Any, token: object) -> None:
    """Refuse a write of a study that another study of the same storage object
    superseded, or of a study whose storage was closed (checked first: a closed file
    is no longer claimed, and a study asking would compute a proposal in vain)."""
    check_open = getattr(storage, "check_open", None)
    if callable(check_open):
        check_open()
    try:
        current = _writers.get(storage, token)
    except TypeError:  # not tracked
        return
    if current is not token:
        raise StorageError(
            f"{getattr(storage, 'path', 'this storage object')}: another Study has opened "
            "this storage object since, and writes it now; this one can no longer write it "
            "(both would number new trials from their own histories and overwrite each "
            "other's): use the newer study"
        )
