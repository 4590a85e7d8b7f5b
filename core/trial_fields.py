"""How a trial's and an evaluation's fields are taken in (their attrs converters):
predictions as read-only arrays of their own, info with text keys and read-only."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ensembo.read_only import ReadOnlyDict, read_only


def optional_array(value: Any) -> np.ndarray | None:
    """A read-only copy: an objective refilling one output buffer left every trial in
    memory with the last trial's predictions (the study file had the right ones). A
    read-only array that owns its data is taken as it is, so evolving a trial copies
    nothing."""
    if value is None:
        return None
    if isinstance(value, np.ndarray) and not value.flags.writeable and value.base is None:
        return value  # our own copy (a read-only view, a memory map, still shares data)
    array = np.array(value)
    array.setflags(write=False)
    return array


def info_dict(value: Mapping[Any, Any]) -> dict[str, Any]:
    """A private copy with text keys, as storage keeps them (JSON): ``{3: 4}`` came back
    from a resumed study as ``{"3": 4}``, so one study saw both."""
    info = {str(key): item for key, item in dict(value).items()}
    if len(info) != len(value):
        raise ValueError(f"info keys that differ only in type collide as text: {list(value)}")
    return info


def read_only_info(value: Mapping[Any, Any]) -> ReadOnlyDict:
    """A trial's info: :func:`info_dict`, read-only down to nested dicts and lists."""
    return read_only_as_far_as_it_goes(info_dict(value))


def read_only_as_far_as_it_goes(info: dict[str, Any]) -> ReadOnlyDict:
    """``info`` read-only down to its nested dicts and lists; only at its top when they
    hold themselves or nest too deep to copy, as an in-memory study keeps info with no
    JSON form as given (copying them raised RecursionError out of ``tell`` and
    ``optimize``)."""
    try:
        return read_only(info)
    except RecursionError:
        return ReadOnlyDict(info)
