"""Choice options in order: a mapping as written, or the stored list of one-key mappings."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any


def option_name(value: Any) -> Any:
    """The option a scalar written in YAML/JSON means: option names are strings (keys of
    a mapping) even when written ``1:`` or ``2.5:``, so a default or condition value
    ``1`` must become ``"1"`` too. Non-scalars are returned unchanged (reported later)."""
    if isinstance(value, bool):
        return "true" if value else "false"  # as JSON writes a boolean key
    if isinstance(value, int | float):
        return str(value)
    return value


NULL_CHOICE = "null"  # how a categorical's null choice is named (ConfigSpace holds no None)
_JSON_LITERALS = {"true": True, "false": False, NULL_CHOICE: None}


def option_argument(name: str) -> Any:
    """What a chosen option without an estimator passes to its estimator: its name, or
    the JSON scalar the name spells (``true``, ``false``, ``null``, a number), so that
    ``bootstrap: {options: {true: ..., false: {}}}`` gives ``bootstrap=True`` and
    ``degree``'s option ``3`` gives ``degree=3``, not the strings scikit-learn refuses."""
    if name in _JSON_LITERALS:
        return _JSON_LITERALS[name]
    try:
        number = json.loads(name)
    except ValueError:
        return name
    finite = isinstance(number, int | float) and math.isfinite(number)  # not NaN, Infinity
    return number if finite else name


def yaml_bool_hint(value: Any) -> str:
    """Why a boolean may stand where an option name was meant: YAML 1.1 reads unquoted
    ``on``/``off``/``yes``/``no`` values as booleans."""
    if isinstance(value, bool):
        return " (YAML reads unquoted on/off/yes/no as true/false: quote the option name)"
    return ""


def option_pairs(options: Any) -> list[tuple[Any, Any]] | None:
    """(name, body) of a choice's options, in order: from a mapping or from a list of
    one-key mappings (the stored form, which survives JSON with sorted keys)."""
    if isinstance(options, Mapping):
        return list(options.items())
    if isinstance(options, list) and all(isinstance(o, Mapping) and len(o) == 1 for o in options):
        return [next(iter(o.items())) for o in options]
    return None


def ordered_options(document: Any) -> Any:
    """``document`` with every choice's options as a list of one-key mappings.

    Option order is the order of a categorical's values (its encoding, its default);
    stores that serialize JSON with sorted keys would otherwise reorder them.
    """
    if not isinstance(document, Mapping):
        return document
    result = dict(document)
    if isinstance(document.get("params"), Mapping):
        result["params"] = {k: _ordered_param(v) for k, v in document["params"].items()}
    return result


def _ordered_param(param: Any) -> Any:
    if not isinstance(param, Mapping) or param.get("type") != "choice":
        return param
    pairs = option_pairs(param.get("options"))
    if pairs is None:
        return param
    ordered = []
    for name, body in pairs:
        if isinstance(body, Mapping):
            body = {k: _ordered_param(v) for k, v in body.items()}
        ordered.append({name: body})
    return {**param, "options": ordered}
