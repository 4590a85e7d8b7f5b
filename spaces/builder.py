"""A small Python builder for DSL documents, for users who prefer code to YAML.

Each function returns the plain mapping the YAML would hold, so a built space is the
same document (``Space.document``) and stores, compares and resumes like one::

    from ensembo.spaces import builder as b

    space = b.space(
        "svm-kernels",
        impute="midpoint",
        C=b.Float(1e-5, 1e5, log=True, default=1.0),
        kernel=b.Choice(linear={}, rbf={}, poly={"degree": b.Int(1, 10)}, sigmoid={}),
        gamma=b.Float(1e-5, 1e5, log=True, when={"kernel": ["rbf", "sigmoid"]}),
    )
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ensembo.spaces.parse import TOP_KEYS

_UNSET = object()
DOCUMENT_KEYS = tuple(key for key in TOP_KEYS if key != "params")
"""The keywords of :func:`document` that are document keys; every other is a hyperparameter."""


def _param(kind: str, extra: Mapping[str, Any], common: Mapping[str, Any]) -> dict[str, Any]:
    body = {"type": kind, **extra}
    body.update({k: v for k, v in common.items() if v is not _UNSET})
    return _plain(body)


def _plain(value: Any) -> Any:
    """``value`` with numpy arrays as lists and numpy scalars as Python ones, in mappings,
    lists and tuples too: the document is stored as JSON, which refused the weights
    ``np.array([3, 1])`` and the sequence ``np.array([1, 2, 4])`` (its ``int64`` items)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_plain(item) for item in value)
    return value


def Float(
    low: float,
    high: float,
    *,
    log: bool = False,
    default: Any = _UNSET,
    q: Any = _UNSET,
    when: Any = _UNSET,
    impute: Any = _UNSET,
    description: Any = _UNSET,
) -> dict[str, Any]:  # noqa: N802 - reads like a type
    return _param(
        "float",
        {"low": low, "high": high, "log": log},
        {"default": default, "q": q, "when": when, "impute": impute, "description": description},
    )


def Int(
    low: int,
    high: int,
    *,
    log: bool = False,
    default: Any = _UNSET,
    q: Any = _UNSET,
    when: Any = _UNSET,
    impute: Any = _UNSET,
    description: Any = _UNSET,
) -> dict[str, Any]:  # noqa: N802
    return _param(
        "int",
        {"low": low, "high": high, "log": log},
        {"default": default, "q": q, "when": when, "impute": impute, "description": description},
    )


def Categorical(
    choices: Sequence[Any],
    *,
    default: Any = _UNSET,
    weights: Any = _UNSET,
    when: Any = _UNSET,
    impute: Any = _UNSET,
    description: Any = _UNSET,
) -> dict[str, Any]:  # noqa: N802
    """``weights``: the sampling prior, one non-negative number per choice."""
    if weights is not _UNSET and isinstance(weights, Sequence):
        weights = list(weights)  # a tuple is no YAML list (a numpy array becomes one below)
    return _param(
        "categorical",
        {"choices": list(choices)},
        {
            "default": default,
            "weights": weights,
            "when": when,
            "impute": impute,
            "description": description,
        },
    )


def Bool(
    *,
    default: Any = _UNSET,
    when: Any = _UNSET,
    impute: Any = _UNSET,
    description: Any = _UNSET,
) -> dict[str, Any]:  # noqa: N802
    return _param(
        "bool", {}, {"default": default, "when": when, "impute": impute, "description": description}
    )


def Ordinal(
    sequence: Sequence[Any],
    *,
    default: Any = _UNSET,
    when: Any = _UNSET,
    impute: Any = _UNSET,
    description: Any = _UNSET,
) -> dict[str, Any]:  # noqa: N802
    return _param(
        "ordinal",
        {"sequence": list(sequence)},
        {"default": default, "when": when, "impute": impute, "description": description},
    )


def Constant(
    value: Any, *, when: Any = _UNSET, impute: Any = _UNSET, description: Any = _UNSET
) -> dict[str, Any]:  # noqa: N802
    return _param(
        "constant", {"value": value}, {"when": when, "impute": impute, "description": description}
    )


def Choice(
    *,
    default: Any = _UNSET,
    when: Any = _UNSET,
    impute: Any = _UNSET,
    description: Any = _UNSET,
    **options: Mapping[str, Any],
) -> dict[str, Any]:  # noqa: N802
    """A branch point; each keyword is an option: a mapping of hyperparameters (and
    ``estimator``/``fixed``/``rename``/``pack``/``description`` for the option itself)."""
    return _param(
        "choice",
        {"options": {k: dict(v) for k, v in options.items()}},
        {"default": default, "when": when, "impute": impute, "description": description},
    )


def document(
    name: str,
    *,
    description: Any = _UNSET,
    impute: Any = _UNSET,
    forbidden: Any = _UNSET,
    steps: Any = _UNSET,
    categorical_steps: Any = _UNSET,
    estimator: Any = _UNSET,
    fixed: Any = _UNSET,
    rename: Any = _UNSET,
    pack: Any = _UNSET,
    **params: Mapping[str, Any],
) -> dict[str, Any]:
    """The DSL document with hyperparameters given as keywords (so a hyperparameter named
    like a document key needs a dict document). A keyword whose value is no mapping is
    refused here: a misspelt document key would otherwise become a hyperparameter."""
    _refuse_non_mappings(params)
    top = {
        "description": description,
        "impute": impute,
        "forbidden": forbidden,
        "steps": steps,
        "categorical_steps": categorical_steps,
        "estimator": estimator,
        "fixed": fixed,
        "rename": rename,
        "pack": pack,
    }
    return _plain({
        "name": name,
        "params": dict(params),
        **{k: v for k, v in top.items() if v is not _UNSET},
    })


def _refuse_non_mappings(params: Mapping[str, Any]) -> None:
    wrong = [name for name, body in params.items() if not isinstance(body, Mapping)]
    if not wrong:
        return
    reasons = []
    for name in wrong:
        close = difflib.get_close_matches(name, DOCUMENT_KEYS, n=1, cutoff=0.75)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        reasons.append(f"{name}={params[name]!r}{hint}")
    raise TypeError(
        f"document() takes hyperparameters as mappings (Float(0, 1), ...), got "
        f"{', '.join(reasons)}; its other keywords are the document keys "
        f"{', '.join(DOCUMENT_KEYS)}"
    )


def space(name: str, **keywords: Any):
    """:func:`document` loaded as a :class:`~ensembo.spaces.Space`."""
    from ensembo.spaces.load import load

    return load(document(name, **keywords))
