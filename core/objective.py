"""What an objective may return, normalized to an :class:`Evaluation`."""

from __future__ import annotations

import decimal
import math
import numbers
from collections.abc import Iterable, Mapping
from typing import Any

import attrs
import numpy as np

from ensembo.trials import Evaluation, Trial


class InvalidResultError(ValueError):
    """The objective returned something that is not a usable loss."""


class NonFiniteLossError(InvalidResultError):
    """The loss is NaN or infinite: a well-formed result of a failed evaluation (a
    diverged model), which fails its trial rather than being refused as a mistake."""


def _as_number(result: Any) -> Any:
    """A numpy array of one element (``np.mean(...)`` of a 0-d array, ``model.score``
    of one row, ``np.array([loss])``) as its value, and a ``Decimal`` (what a database
    query's average gives) as a float: it is a loss, however wrapped. A Decimal is no
    ``numbers.Real``, and was refused as "not a number"."""
    if isinstance(result, np.ndarray) and result.size == 1 and result.dtype.kind in "iuf":
        return result.reshape(()).item()
    if isinstance(result, decimal.Decimal):
        return float(result)
    return result


def to_evaluation(result: Any) -> Evaluation:
    """Accept a number (numpy scalars and one-element arrays included), an
    :class:`Evaluation` or a mapping with a ``loss`` key."""
    result = _as_number(result)
    if isinstance(result, Evaluation):
        evaluation = result
    elif isinstance(result, numbers.Real) and not isinstance(result, bool):
        evaluation = Evaluation(loss=_as_float(result))
    elif isinstance(result, Mapping) and "loss" in result:
        evaluation = _from_mapping(result)
    elif result is None:
        raise InvalidResultError(
            "the objective returned None; did it forget to `return` its loss?"
        )
    else:
        raise InvalidResultError(
            "the objective must return a number, an ensembo.Evaluation or a mapping "
            f"with a 'loss' key; got {type(result).__name__}: {result!r:.200}"
        )
    if not math.isfinite(evaluation.loss):
        raise NonFiniteLossError(f"the objective returned a non-finite loss ({evaluation.loss})")
    return evaluation


def without_object_predictions(evaluation: Evaluation) -> Evaluation:
    """Predictions of dtype object (a pandas column of text labels) as an array of their
    values: a study file keeps no object arrays, so a run that worked in memory failed
    every trial with a file. What stays of dtype object is refused in memory too."""
    predictions = evaluation.predictions
    if predictions is None or predictions.dtype != object:
        return evaluation
    try:
        plain = np.asarray(predictions.tolist())
    except ValueError:  # ragged: rows of different lengths
        plain = predictions
    if plain.dtype == object:
        raise TypeError(
            f"predictions of dtype {predictions.dtype} cannot be kept (their values are not "
            "all text or all numbers, e.g. None among labels): give labels or class "
            "probabilities as an array of one plain type"
        )
    return attrs.evolve(evaluation, predictions=plain)


def _as_float(loss: numbers.Real) -> float:
    """``loss`` as a float; an int or Fraction beyond the float range is refused like a
    non-finite loss (``float()`` raises OverflowError, which no caller expects)."""
    try:
        return float(loss)
    except OverflowError:
        raise NonFiniteLossError(
            f"the objective returned a loss too large for a float ({str(loss):.30}...)"
        ) from None


def _from_mapping(result: Mapping[str, Any]) -> Evaluation:
    """A result mapping as an Evaluation; keys other than its fields (Hyperopt's
    ``status``, extra metrics) are kept in ``info``."""
    loss = _as_number(result["loss"])
    if not isinstance(loss, numbers.Real) or isinstance(loss, bool):
        raise InvalidResultError(
            f"the objective's 'loss' must be a number, got {type(loss).__name__}: {loss!r:.200}"
        )
    extra = {key: value for key, value in result.items() if key not in _FIELDS}
    info = {**extra, **dict(result.get("info") or {})}
    return Evaluation(loss=_as_float(loss), predictions=result.get("predictions"),
                      model=result.get("model"), info=info)


_FIELDS = ("loss", "predictions", "model", "info")


def failure_summary(trials: Iterable[Trial], limit: int = 3) -> str:
    """The first ``limit`` distinct errors of failed trials, one per line, for the
    message of a search where no trial completed: the cause is usually the same in
    every trial, and the user should read it without opening the study."""
    seen: dict[str, list[int]] = {}
    for trial in trials:
        if trial.error:
            seen.setdefault(trial.error, []).append(trial.number)
    lines = []
    for error, which in list(seen.items())[:limit]:
        label = "trial" if len(which) == 1 else "trials"
        shown = ", ".join(map(str, which[:5])) + (", ..." if len(which) > 5 else "")
        lines.append(f"  {label} {shown}: {error[:300]}")
    if len(seen) > limit:
        lines.append(f"  ... and {len(seen) - limit} other errors")
    return "\n".join(lines)
