"""What an objective may return, normalized to an :class:`Evaluation`."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

from ensembo.trials import Evaluation


class InvalidResultError(ValueError):
    """The objective returned something that is not a usable loss."""


def to_evaluation(result: Any) -> Evaluation:
    """Accept a number, an :class:`Evaluation` or a mapping with a ``loss`` key."""
    if isinstance(result, Evaluation):
        evaluation = result
    elif isinstance(result, numbers.Real) and not isinstance(result, bool):
        evaluation = Evaluation(loss=float(result))
    elif isinstance(result, Mapping) and "loss" in result:
        evaluation = Evaluation(**result)
    else:
        raise InvalidResultError(
            "the objective must return a number, an ensembo.Evaluation or a mapping "
            f"with a 'loss' key; got {type(result).__name__}: {result!r:.200}"
        )
    if not math.isfinite(evaluation.loss):
        raise InvalidResultError(f"the objective returned a non-finite loss ({evaluation.loss})")
    return evaluation
