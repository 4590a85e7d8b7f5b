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
hitting a forbidden clause are dropped. Everything is done per hyperparameter over the
whole population, so a local search scores all its neighbourhoods as one batch.
"""

from __future__ import annotations

import attrs
import numpy as np
from ConfigSpace.hyperparameters import (
    CategoricalHyperparameter,
    IntegerHyperparameter,
    OrdinalHyperparameter,
)

from ensembo.spaces import Space
from ensembo.spaces.activity import in_activation_order
from ensembo.spaces.quantize import quantize_array, step_of

MIN_MOVE = 1e-6
"""Smallest continuous move (vector scale, a range is [0, 1]) that makes a neighbour."""


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
        self._defaults = np.asarray(dag.normalized_defaults, dtype=float)
        self._forbidden = list(configspace.forbidden_clauses)
        self._hyperparameters = [configspace[name] for name in space.names]

    def neighbours(self, vectors: np.ndarray, step: np.ndarray) -> Neighbours:
        """All one-exchange neighbours of each row of ``vectors``.

        ``step`` (one per row) is the continuous step size in the vector scale.
        """
        vectors = np.atleast_2d(np.asarray(vectors, dtype=float))
        step = np.broadcast_to(np.asarray(step, dtype=float), (len(vectors),))
        blocks, origins = [], []
        for column, hp in enumerate(self._hyperparameters):
            rows = np.flatnonzero(~np.isnan(vectors[:, column]))
            if rows.size == 0 or hp.size == 1:
                continue
            values, owners = self._moves(hp, vectors[rows, column], step[rows], rows)
            if values.size == 0:
                continue
            block = vectors[owners].copy()
            block[:, column] = values
            if self._dependants[column]:
                self._update_activity(block, column)
            blocks.append(block)
            origins.append(owners)
        if not blocks:
            return Neighbours(
                vectors=np.empty((0, vectors.shape[1])), origin=np.empty(0, dtype=int)
            )
        stacked, origin = np.concatenate(blocks), np.concatenate(origins)
        allowed = self._allowed(stacked)
        return Neighbours(vectors=stacked[allowed], origin=origin[allowed])

    # --- moves per hyperparameter type ---------------------------------------------------

    def _moves(self, hp, current: np.ndarray, step: np.ndarray, rows: np.ndarray):
        """New vector values and the row each belongs to, for one hyperparameter."""
        if isinstance(hp, CategoricalHyperparameter):
            choices = np.arange(hp.size, dtype=float)
            values = np.tile(choices, len(current))
            owners = np.repeat(rows, hp.size)
            keep = values != np.repeat(current, hp.size)
            return values[keep], owners[keep]
        if isinstance(hp, OrdinalHyperparameter):
            values = np.concatenate([current - 1, current + 1])
            owners = np.concatenate([rows, rows])
            keep = (values >= 0) & (values <= hp.size - 1)
            return values[keep], owners[keep]
        stepped = [np.clip(current - step, 0.0, 1.0), np.clip(current + step, 0.0, 1.0)]
        if step_of(hp) is not None:
            return self._grid_moves(hp, current, stepped, rows)
        if isinstance(hp, IntegerHyperparameter):
            return self._integer_moves(hp, current, stepped, rows)
        values = np.concatenate(stepped)
        owners = np.concatenate([rows, rows])
        # A step clipped at a bound from right beside it moves nowhere worth scoring.
        moved = np.abs(values - np.tile(current, 2)) > MIN_MOVE
        return values[moved], owners[moved]

    @staticmethod
    def _integer_moves(hp, current: np.ndarray, stepped: list, rows: np.ndarray):
        """Plus and minus one, and the continuous steps rounded, as distinct integers.

        Moves are compared as integers, not vectors: a sampled vector is any point of
        its integer's cell, so the canonical vector of the *same* integer differs from
        it and would pass for a move.
        """
        integers = np.asarray(hp.to_value(current), dtype=float)
        candidates = [np.asarray(hp.to_value(s), dtype=float) for s in stepped] + [
            np.clip(integers - 1, hp.lower, hp.upper),
            np.clip(integers + 1, hp.lower, hp.upper),
        ]
        return _distinct_moves(hp, integers, candidates, rows)

    @staticmethod
    def _grid_moves(hp, current: np.ndarray, stepped: list, rows: np.ndarray):
        """One grid step either way, and the continuous steps snapped to the grid, as
        distinct grid values (compared as values, as integers are)."""
        q = step_of(hp)
        on_grid = quantize_array(hp, np.asarray(hp.to_value(current), dtype=float))
        # Every candidate goes through quantize_array, so one grid point has one spelling.
        candidates = [quantize_array(hp, np.asarray(hp.to_value(s), dtype=float))
                      for s in stepped] + [quantize_array(hp, on_grid - q),
                                           quantize_array(hp, on_grid + q)]
        return _distinct_moves(hp, on_grid, candidates, rows)

    # --- conditions and forbidden clauses ------------------------------------------------

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
        for node in self._dependants[column]:
            satisfied = np.asarray(node.condition.satisfied_by_vector_array(block.T), dtype=bool)
            children = np.asarray(node.children_indices)
            sub = block[:, children]
            activate = satisfied[:, None] & np.isnan(sub)
            sub = np.where(activate, self._defaults[children][None, :], sub)
            sub[~satisfied] = np.nan
            block[:, children] = sub

    def _allowed(self, vectors: np.ndarray) -> np.ndarray:
        allowed = np.ones(len(vectors), dtype=bool)
        for clause in self._forbidden:
            allowed &= ~np.asarray(clause.is_forbidden_vector_array(vectors.T), dtype=bool)
        return allowed


def _distinct_moves(hp, values: np.ndarray, candidates: list, rows: np.ndarray):
    """The candidate values of each row that differ from its value and from each other
    (a rounded or snapped step often lands on the one-step move), as vectors."""
    table = np.stack(candidates, axis=1)  # (rows, candidates)
    keep = table != values[:, None]
    ordered = np.sort(table, axis=1)
    first = np.concatenate(
        [np.ones((len(table), 1), dtype=bool), ordered[:, 1:] != ordered[:, :-1]], axis=1
    )
    keep = np.take_along_axis(keep, np.argsort(table, axis=1), axis=1) & first
    moved, owners = ordered[keep], np.broadcast_to(rows[:, None], table.shape)[keep]
    return np.asarray(hp.to_vector(moved), dtype=float), owners
