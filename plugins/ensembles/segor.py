"""``segor``: simultaneous ensemble generation and HPO for regression (Roschewitz et al., seed 004).

EO's round-robin slot optimization with a mean combination and a regression loss —
``mse`` (default), ``huber`` or ``tukey`` — used both to label the history and to refill
slots. ``size``: ``fixed`` (12 slots, SEGOR-F), ``grow`` (start empty; each iteration
replace slot j or add the best model, whichever lowers the loss: BG) or ``dynamic``
(also consider deleting slot j: BD). The paper leaves the BG/BD decision rule open; we
take the action with the lowest loss (ties: replace, then shrink, then grow).
``post=True`` is the ``-ph`` variant: forward-greedy selection over the final pool with
``post_loss`` (default mse, the benchmark metric), starting from an empty ensemble as
Roschewitz et al.'s PHEG does (seed 004 L236); ``start: k`` starts from the k best
models instead, as EO-post does.
"""

from __future__ import annotations

from typing import Any

from ensembo.plugins.ensembles.round_robin import RoundRobinEnsemble


class SEGOR(RoundRobinEnsemble):
    name = "segor"
    task = "regression"

    def __init__(
        self,
        size: str = "fixed",
        slots: int = 12,
        loss: Any = "mse",
        post: bool = False,
        post_loss: Any = "mse",
        max_size: int | None = None,
        start: int = 0,
    ):
        # Options that would change nothing are refused rather than silently ignored.
        if max_size is not None and size == "fixed":
            raise ValueError("segor: max_size bounds size grow or dynamic; a fixed ensemble "
                             "has its slots (slots: N)")
        if start != 0 and post is not True:
            raise ValueError(f"segor: start {start!r} is where the post-hoc rebuild starts, "
                             "so it needs post: true")
        super().__init__(
            target_loss=loss, refill_loss=loss, slots=slots, size=size, post=post,
            post_loss=post_loss, post_start=start, max_size=max_size,
        )
