"""One-exchange neighbourhoods of many configurations at once.

Configurations are ConfigSpace vectors (one column per hyperparameter, NaN where
inactive; see :meth:`Space.vectors`). A neighbour changes exactly one *active*
hyperparameter (notes/003 §1.4, Eq. 5.8):

* continuous: a step of the current size up and down (in the normalized, log-aware
  vector scale), clipped to the range;
* integer: the value plus and minus one, and a step of the current size rounded to an
  integer, so that wide ranges are not crawled one unit at a time;
* stepped (``q``, integer or float): likewise on its grid, one grid step either way and
  the continuous steps snapped to the grid (a neighbour off the grid would be scored
  at a value it is never run at);
* ordinal: the previous and the next value;
* categorical: every other value.

Changing a parent activates the children its new value satisfies (at their defaults)
and deactivates the others, the way ConfigSpace's own neighbourhood does; neighbours
hitting a forbidden clause are dropped. The moves are made per type of hyperparameter
over the whole population (:mod:`.one_exchange_moves`), the conditions per run of
independent condition nodes (:mod:`.condition_stages`), so a local search scores all
its neighbourhoods as one batch. The neighbours are listed column by column, each
column's in the order its type gives; a climb breaks ties by that order.
"""

from __future__ import annotations

import attrs
import numpy as np

from ensembo.plugins.acquisition_optimizers.condition_stages import (
    condition_stages,
    evaluate_stages,
)
from ensembo.plugins.acquisition_optimizers.one_exchange_moves import (
    MIN_MOVE,
    all_moves,
    move_groups,
)
from ensembo.spaces import Space
from ensembo.spaces.activity import in_activation_order

__all__ = ["MIN_MOVE", "Neighbours", "OneExchangeNeighbourhood"]


@attrs.frozen(kw_only=True)
class Neighbours:
    """Neighbour vectors (m, d) and, per row, the index of the configuration it came from."""

    vectors: np.ndarray = attrs.field(eq=False)
    origin: np.ndarray = attrs.field(eq=False)


class OneExchangeNeighbourhood:
    """Neighbours over the active hyperparameters of ``space``."""

    def __init__(self, space: Space):
        self.space = space
        configspace = space.configspace
        # ConfigSpace 1.x keeps, per parent, the condition nodes to re-evaluate when the
        # parent changes (in dependency order) and the normalized defaults; its own
        # ``change_hp_value`` uses the same two fields, one vector at a time.
        dag = configspace._dag
        self._dependants = [dag.change_hp_lookup.get(name, []) for name in space.names]
        self._one_pass = [in_activation_order(nodes) for nodes in self._dependants]
        defaults = np.asarray(dag.normalized_defaults, dtype=float)
        self._stages = [condition_stages(nodes, defaults) for nodes in self._dependants]
        self._forbidden = list(configspace.forbidden_clauses)
        self._groups = move_groups([configspace[name] for name in space.names])
        self._parents = np.array(
            [column for column, nodes in enumerate(self._dependants) if nodes], dtype=np.intp
        )

    def neighbours(self, vectors: np.ndarray, step: np.ndarray) -> Neighbours:
        """All one-exchange neighbours of each row of ``vectors``.

        ``step`` (one per row) is the continuous step size in the vector scale.
        """
        vectors = np.atleast_2d(np.asarray(vectors, dtype=float))
        step = np.broadcast_to(np.asarray(step, dtype=float), (len(vectors),))
        moves = all_moves(self._groups, vectors, step)
        if moves.values.size == 0:
            return Neighbours(
                vectors=np.empty((0, vectors.shape[1])), origin=np.empty(0, dtype=int)
            )
        stacked = vectors[moves.owners]
        stacked[np.arange(len(stacked)), moves.columns] = moves.values
        if self._parents.size:
            self._update_parents_activity(stacked, moves.columns)
        allowed = self._allowed(stacked)
        return Neighbours(vectors=stacked[allowed], origin=moves.owners[allowed])

    # --- conditions and forbidden clauses ------------------------------------------------

    def _update_parents_activity(self, stacked: np.ndarray, columns: np.ndarray) -> None:
        """Conditions below each changed parent, on its neighbours (one run of rows each,
        as moves come ordered by column)."""
        starts = np.searchsorted(columns, self._parents, side="left")
        stops = np.searchsorted(columns, self._parents, side="right")
        for column, start, stop in zip(self._parents, starts, stops, strict=True):
            if stop > start:
                self._update_activity(stacked[start:stop], column)

    def _update_activity(self, block: np.ndarray, column: int) -> None:
        """Re-evaluate the conditions below ``column`` after it changed (in place).

        ConfigSpace orders the conditions by depth, which a conjunction does not respect:
        ``batch`` under ``clf == mlp and dropout == true``, with ``dropout`` inside a
        nested choice, was evaluated before ``dropout`` was activated and stayed
        inactive, an invalid neighbour. Out of order, the pass repeats until nothing
        changes, as :func:`~ensembo.spaces.activity.deactivate` does.
        """
        if self._one_pass[column]:
            self._evaluate_conditions(block, column)
            return
        inactive = np.isnan(block)
        while True:
            self._evaluate_conditions(block, column)
            now = np.isnan(block)
            if np.array_equal(now, inactive):
                return
            inactive = now

    def _evaluate_conditions(self, block: np.ndarray, column: int) -> None:
        """One pass over the conditions below ``column``, in ConfigSpace's order."""
        evaluate_stages(self._stages[column], block)

    def _allowed(self, vectors: np.ndarray) -> np.ndarray:
        allowed = np.ones(len(vectors), dtype=bool)
        for clause in self._forbidden:
            allowed &= ~np.asarray(clause.is_forbidden_vector_array(vectors.T), dtype=bool)
        return allowed
