"""``eo``: Bayesian ensemble optimization (Lévesque et al., seed 001; thesis ch. 4).

A fixed-size majority-vote ensemble (default m = 12) whose slot j = i mod m is
re-optimized at iteration i: the surrogate models the ensemble loss of
(E without slot j) ∪ {h} — ``squared-margin`` by default, or ``sigmoid-margin`` /
``c-bound`` — and the slot is refilled greedily with the zero-one loss (Algorithm 4.1).
Members are distinct (``replacement=False``, the thesis's "without replacement", L862):
the slot is refilled from the models not already in the other slots.
``post=True`` is EO-post: a forward-greedy rebuild (top-3 start, with replacement)
over the final pool.
"""

from __future__ import annotations

from typing import Any

from ensembo.plugins.ensembles.round_robin import RoundRobinEnsemble


class EnsembleOptimization(RoundRobinEnsemble):
    name = "eo"
    task = "classification"

    def __init__(
        self,
        size: int = 12,
        loss: Any = "squared-margin",
        refill_loss: Any = "zero-one",
        post: bool = False,
        replacement: bool = False,
    ):
        super().__init__(
            target_loss=loss, refill_loss=refill_loss, slots=size, size="fixed", post=post,
            replacement=replacement,
        )
