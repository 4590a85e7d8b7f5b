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

from collections.abc import Mapping, Sequence
from typing import Any

_UNSET = object()


def _param(kind: str, extra: Mapping[str, Any], common: Mapping[str, Any]) -> dict[str, Any]:
    body = {"type": kind, **extra}
    body.update({k: v for k, v in common.items() if v is not _UNSET})
    return body


def Float(
    low: float,
    high: float,
    *,
    log: bool = False,
    default: Any = _UNSET,
    q: Any = _UNSET,
    when: Any = _UNSET,
    impute: Any = _UNSET,
) -> dict[str, Any]:  # noqa: N802 - reads like a type
    return _param(
        "float",
        {"low": low, "high": high, "log": log},
        {"default": default, "q": q, "when": when, "impute": impute},
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
) -> dict[str, Any]:  # noqa: N802
    return _param(
        "int",
        {"low": low, "high": high, "log": log},
        {"default": default, "q": q, "when": when, "impute": impute},
    )


def Categorical(
    choices: Sequence[Any], *, default: Any = _UNSET, when: Any = _UNSET, impute: Any = _UNSET
) -> dict[str, Any]:  # noqa: N802
    return _param(
        "categorical",
        {"choices": list(choices)},
        {"default": default, "when": when, "impute": impute},
    )


def Bool(*, default: Any = _UNSET, when: Any = _UNSET, impute: Any = _UNSET) -> dict[str, Any]:  # noqa: N802
    return _param("bool", {}, {"default": default, "when": when, "impute": impute})


def Ordinal(
    sequence: Sequence[Any], *, default: Any = _UNSET, when: Any = _UNSET, impute: Any = _UNSET
) -> dict[str, Any]:  # noqa: N802
    return _param(
        "ordinal",
        {"sequence": list(sequence)},
        {"default": default, "when": when, "impute": impute},
    )


def Constant(value: Any, *, when: Any = _UNSET) -> dict[str, Any]:  # noqa: N802
    return _param("constant", {"value": value}, {"when": when})


def Choice(
    *, default: Any = _UNSET, when: Any = _UNSET, impute: Any = _UNSET, **options: Mapping[str, Any]
) -> dict[str, Any]:  # noqa: N802
    """A branch point; each keyword is an option: a mapping of hyperparameters (and
    ``estimator``/``fixed``/``rename``/``pack`` for executable options)."""
    return _param(
        "choice",
        {"options": {k: dict(v) for k, v in options.items()}},
        {"default": default, "when": when, "impute": impute},
    )


def document(
    name: str,
    *,
    impute: Any = _UNSET,
    forbidden: Any = _UNSET,
    steps: Any = _UNSET,
    estimator: Any = _UNSET,
    fixed: Any = _UNSET,
    rename: Any = _UNSET,
    pack: Any = _UNSET,
    **params: Mapping[str, Any],
) -> dict[str, Any]:
    """The DSL document with hyperparameters given as keywords."""
    top = {
        "impute": impute,
        "forbidden": forbidden,
        "steps": steps,
        "estimator": estimator,
        "fixed": fixed,
        "rename": rename,
        "pack": pack,
    }
    return {
        "name": name,
        "params": dict(params),
        **{k: v for k, v in top.items() if v is not _UNSET},
    }


def space(name: str, **keywords: Any):
    """:func:`document` loaded as a :class:`~ensembo.spaces.Space`."""
    from ensembo.spaces.load import load

    return load(document(name, **keywords))
