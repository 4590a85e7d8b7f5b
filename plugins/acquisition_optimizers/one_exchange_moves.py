"""The one-exchange moves of many configurations, one batch per hyperparameter type.

:class:`~ensembo.plugins.acquisition_optimizers.neighbourhood.OneExchangeNeighbourhood`
describes the moves. Made one hyperparameter at a time, their numpy calls on a handful
of rows cost more in overhead than in arithmetic (a third of an ask with the forest on
an 8-D space), so each group below handles all its columns at once. Every group lists
its moves column by column, each column's in the order the per-hyperparameter code did
(the rows' order and the candidates' within a row); :func:`all_moves` merges the groups
by column, stably, so the neighbours come out exactly as before, in the same order, and
a climb draws the same random tie-breaks.
"""

from __future__ import annotations

import attrs
import numpy as np
from ConfigSpace.hyperparameters import (
    CategoricalHyperparameter,
    IntegerHyperparameter,
    OrdinalHyperparameter,
)

from ensembo.plugins.acquisition_optimizers.integer_scale import IntegerScale, scalable
from ensembo.spaces.quantize import quantize_array, step_of

MIN_MOVE = 1e-6
"""Smallest continuous move (vector scale, a range is [0, 1]) that makes a neighbour."""


@attrs.frozen(kw_only=True)
class Moves:
    """New vector values, the row each belongs to and the column it changes."""

    values: np.ndarray = attrs.field(eq=False)
    owners: np.ndarray = attrs.field(eq=False)
    columns: np.ndarray = attrs.field(eq=False)

    @classmethod
    def empty(cls) -> Moves:
        return cls(values=np.empty(0), owners=np.empty(0, dtype=np.intp),
                   columns=np.empty(0, dtype=np.intp))


def move_groups(hyperparameters: list) -> list:
    """One group per kind of hyperparameter present (single-valued ones never move)."""
    kinds: dict[type, list[tuple[int, object]]] = {}
    for column, hp in enumerate(hyperparameters):
        if hp.size != 1:
            kinds.setdefault(_kind_of(hp), []).append((column, hp))
    return [kind(members) for kind, members in kinds.items()]


def all_moves(groups: list, vectors: np.ndarray, step: np.ndarray) -> Moves:
    """Every group's moves, ordered by column (each group's are already)."""
    parts = [group.moves(vectors, step) for group in groups]
    parts = [part for part in parts if part.values.size]
    if len(parts) < 2:
        return parts[0] if parts else Moves.empty()
    columns = np.concatenate([part.columns for part in parts])
    order = np.argsort(columns, kind="stable")
    return Moves(
        values=np.concatenate([part.values for part in parts])[order],
        owners=np.concatenate([part.owners for part in parts])[order],
        columns=columns[order],
    )


def _kind_of(hp) -> type:
    if isinstance(hp, CategoricalHyperparameter):
        return _CategoricalMoves
    if isinstance(hp, OrdinalHyperparameter):
        return _OrdinalMoves
    if step_of(hp) is not None:
        return _GridMoves
    if isinstance(hp, IntegerHyperparameter):
        return _IntegerMoves
    return _ContinuousMoves


class _CategoricalMoves:
    """Every other value; per row, the values in order."""

    def __init__(self, members: list):
        sizes = [hp.size for _, hp in members]
        self.choice_columns = np.repeat([column for column, _ in members], sizes)
        self.choices = np.concatenate([np.arange(size, dtype=float) for size in sizes])

    def moves(self, vectors: np.ndarray, step: np.ndarray) -> Moves:
        current = vectors[:, self.choice_columns]  # (rows, all choices of all columns)
        keep = ~np.isnan(current) & (current != self.choices)
        owners, choice = np.nonzero(keep)  # by row, then column: sorted by column below
        by_column = np.argsort(self.choice_columns[choice], kind="stable")
        owners, choice = owners[by_column], choice[by_column]
        return Moves(values=self.choices[choice], owners=owners,
                     columns=self.choice_columns[choice])


class _OrdinalMoves:
    """The previous and the next value: all rows' previous, then all rows' next."""

    def __init__(self, members: list):
        self.columns = np.array([column for column, _ in members])
        self.last = np.array([hp.size - 1 for _, hp in members], dtype=float)

    def moves(self, vectors: np.ndarray, step: np.ndarray) -> Moves:
        current = vectors[:, self.columns].T  # (columns, rows)
        values = np.stack([current - 1, current + 1], axis=1)  # (columns, side, rows)
        keep = (values >= 0) & (values <= self.last[:, None, None])  # False where NaN
        return _side_moves(values, keep, self.columns)


class _ContinuousMoves:
    """A step down and a step up, clipped to the range: all rows' down, then all up."""

    def __init__(self, members: list):
        self.columns = np.array([column for column, _ in members])

    def moves(self, vectors: np.ndarray, step: np.ndarray) -> Moves:
        current = vectors[:, self.columns].T  # (columns, rows)
        values = np.stack(
            [np.clip(current - step, 0.0, 1.0), np.clip(current + step, 0.0, 1.0)], axis=1
        )
        # A step clipped at a bound from right beside it moves nowhere worth scoring.
        moved = np.abs(values - current[:, None, :]) > MIN_MOVE  # False where NaN
        return _side_moves(values, moved, self.columns)


def _side_moves(values: np.ndarray, keep: np.ndarray, columns: np.ndarray) -> Moves:
    """The kept moves of (columns, side, rows) arrays, in that order."""
    which, _, owners = np.nonzero(keep)
    return Moves(values=values[keep], owners=owners, columns=columns[which])


class _IntegerMoves:
    """Plus and minus one, and the continuous steps rounded, as distinct integers.

    Moves are compared as integers, not vectors: a sampled vector is any point of
    its integer's cell, so the canonical vector of the *same* integer differs from
    it and would pass for a move.
    """

    def __init__(self, members: list):
        hyperparameters = [hp for _, hp in members]
        self.columns = np.array([column for column, _ in members])
        self.lower = np.array([hp.lower for hp in hyperparameters], dtype=float)[:, None]
        self.upper = np.array([hp.upper for hp in hyperparameters], dtype=float)[:, None]
        self.scale = (
            IntegerScale(hyperparameters)
            if all(scalable(hp) for hp in hyperparameters)
            else _EachHyperparameter(hyperparameters)
        )

    def moves(self, vectors: np.ndarray, step: np.ndarray) -> Moves:
        current = vectors[:, self.columns].T  # (columns, rows)
        active = ~np.isnan(current)
        current = np.where(active, current, 0.0)  # inactive rows are dropped below
        unit = np.stack(
            [current, np.clip(current - step, 0.0, 1.0), np.clip(current + step, 0.0, 1.0)],
            axis=1,
        )  # (columns, 3, rows)
        integers = self.scale.to_value(unit)
        whole = integers[:, 0]
        candidates = [
            integers[:, 1],
            integers[:, 2],
            np.clip(whole - 1, self.lower, self.upper),
            np.clip(whole + 1, self.lower, self.upper),
        ]
        moved, owners, which = _distinct_moves(whole, candidates, active)
        return Moves(values=self.scale.to_vector(moved, which), owners=owners,
                     columns=self.columns[which])


class _EachHyperparameter:
    """ConfigSpace's own conversions, one hyperparameter at a time."""

    def __init__(self, hyperparameters: list):
        self.hyperparameters = hyperparameters

    def to_value(self, vector: np.ndarray) -> np.ndarray:
        """The values of ``vector`` (columns, ...), as floats."""
        values = np.empty_like(vector)
        for index, hp in enumerate(self.hyperparameters):
            row = vector[index].ravel()  # contiguous, as ConfigSpace is usually given
            values[index] = np.asarray(hp.to_value(row), dtype=float).reshape(vector.shape[1:])
        return values

    def to_vector(self, values: np.ndarray, columns: np.ndarray) -> np.ndarray:
        """The vectors of ``values`` (flat, ordered by ``columns``), one call per column."""
        vectors = np.empty_like(values)
        bounds = np.searchsorted(columns, np.arange(len(self.hyperparameters) + 1))
        for index, hp in enumerate(self.hyperparameters):
            start, stop = bounds[index], bounds[index + 1]
            if stop > start:
                vectors[start:stop] = hp.to_vector(values[start:stop])
        return vectors


class _GridMoves:
    """One grid step either way, and the continuous steps snapped to the grid, as
    distinct grid values (compared as values, as integers are); one column at a time,
    as stepped hyperparameters are few."""

    def __init__(self, members: list):
        self.members = members

    def moves(self, vectors: np.ndarray, step: np.ndarray) -> Moves:
        parts = [self._column_moves(column, hp, vectors, step) for column, hp in self.members]
        return Moves(
            values=np.concatenate([part.values for part in parts]),
            owners=np.concatenate([part.owners for part in parts]),
            columns=np.concatenate([part.columns for part in parts]),
        )

    @staticmethod
    def _column_moves(column: int, hp, vectors: np.ndarray, step: np.ndarray) -> Moves:
        current = vectors[:, column]
        active = ~np.isnan(current)
        current = np.where(active, current, 0.0)  # inactive rows are dropped below
        q = step_of(hp)
        on_grid = quantize_array(hp, np.asarray(hp.to_value(current), dtype=float))
        stepped = [np.clip(current - step, 0.0, 1.0), np.clip(current + step, 0.0, 1.0)]
        # Every candidate goes through quantize_array: one grid point, one spelling.
        candidates = [
            quantize_array(hp, np.asarray(hp.to_value(s), dtype=float)) for s in stepped
        ] + [quantize_array(hp, on_grid - q), quantize_array(hp, on_grid + q)]
        moved, owners, _ = _distinct_moves(
            on_grid[None, :], [c[None, :] for c in candidates], active[None, :]
        )
        return Moves(values=np.asarray(hp.to_vector(moved), dtype=float), owners=owners,
                     columns=np.full(len(moved), column, dtype=np.intp))


def _distinct_moves(values: np.ndarray, candidates: list, active: np.ndarray):
    """The candidate values of each active row that differ from its value and from each
    other (a rounded or snapped step often lands on the one-step move): the values, their
    rows and their columns' indices, ordered by column, then row, then value.

    ``values``, ``active`` and each candidate are (columns, rows).
    """
    count, rows = values.shape
    table = np.stack(candidates, axis=2).reshape(count * rows, len(candidates))
    keep = table != values.reshape(-1, 1)
    ordered = np.sort(table, axis=1)
    first = np.concatenate(
        [np.ones((len(table), 1), dtype=bool), ordered[:, 1:] != ordered[:, :-1]], axis=1
    )
    keep = np.take_along_axis(keep, np.argsort(table, axis=1), axis=1) & first
    keep &= active.reshape(-1, 1)
    which, owners = np.divmod(np.nonzero(keep)[0], rows)
    return ordered[keep], owners, which
