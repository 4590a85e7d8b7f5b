"""What a study file can keep: values as its JSON text, the place of the first value it
cannot write, a trial's info and error in the form they read back in."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"cannot store {type(value).__name__} in a trial record: {value!r}")


def json_text(value: Any, sort_keys: bool = True, label: str = "") -> str:
    """``value`` as the JSON a study file keeps (numpy scalars and arrays as numbers); a
    value it cannot keep is named by its place in ``label`` (``metadata['when']``)."""
    try:
        return json.dumps(value, default=_json_default, sort_keys=sort_keys)
    except TypeError as error:
        place = unwritable(value, label) if label else None
        if place is None:
            raise
        raise TypeError(f"a study file cannot keep {place}: give numbers, text, true/false, "
                        "lists and mappings with text keys") from error


def unwritable(value: Any, where: str) -> str | None:
    """The place in ``value`` of the first thing JSON cannot write, with its type, as
    ``where['a'][0] (a datetime)``; None if there is none."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str | int | float | bool) and key is not None:
                return f"{where} key {key!r} ({_a(type(key).__name__)})"
            found = unwritable(item, f"{where}[{key!r}]")
            if found is not None:
                return found
        return None
    if isinstance(value, list | tuple):
        return next((found for i, item in enumerate(value)
                     if (found := unwritable(item, f"{where}[{i}]")) is not None), None)
    if value is None or isinstance(value, str | bool | int | float | np.generic | np.ndarray):
        return None
    return f"{where} ({_a(type(value).__name__)}: {value!r:.80})"


def _a(noun: str) -> str:
    """'a set', 'an object'."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def json_form(info: Mapping[str, Any]) -> dict[str, Any]:
    """``info`` as it reads back from a study file, so a resumed study shows the same
    values (nested keys as text, numpy scalars as numbers, tuples as lists); info the
    JSON encoder cannot write (a datetime, a set, an object) raises TypeError or
    ValueError."""
    return json.loads(json_text(info, sort_keys=False))


def stored_form(info: Mapping[str, Any]) -> dict[str, Any]:
    """``info`` in :func:`json_form` if it has one, else as given (a private copy).

    Info a study file could not keep is not refused here: an in-memory study keeps it
    as given (a datetime, a set, a Path), and a study file refuses it when the trial is
    written, as it always did."""
    try:
        return json_form(info)
    except (TypeError, ValueError, RecursionError):
        return dict(info)


def error_text(error: Any) -> str | None:
    """A failed trial's ``error`` as storable text: an exception as "Type: message" (as
    ``optimize`` records it); lone surrogates (undecodable file names) escaped, since a
    study file keeps UTF-8 and would refuse the whole record."""
    if isinstance(error, BaseException):
        error = f"{type(error).__name__}: {error}"
    if error is not None and not isinstance(error, str):
        raise TypeError(f"error= takes text or an exception, got {type(error).__name__}: "
                        f"{error!r:.200}")
    return None if error is None else error.encode("utf-8", "backslashreplace").decode("utf-8")
