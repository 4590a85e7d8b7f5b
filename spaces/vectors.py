"""Encoded and ConfigSpace vector forms of a :class:`~ensembo.spaces.space.Space`.

Surrogates see configurations encoded (:meth:`VectorForms.encode`); acquisition
optimizers work on ConfigSpace's own vectors, one column per name, NaN where inactive,
categorical and ordinal values as their index. A mixin of ``Space``: it reads the
space's ConfigSpace, layout and rules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from ConfigSpace import Configuration
from ConfigSpace.hyperparameters import (
    CategoricalHyperparameter,
    Constant,
    OrdinalHyperparameter,
)

from ensembo.errors import SpaceError
from ensembo.spaces.activity import deactivate
from ensembo.spaces.encoding import EncodedBatch, activity_signature
from ensembo.spaces.quantize import quantize_array, snap_vectors
from ensembo.spaces.values import whole, wrong_kind_of_number


class VectorForms:
    """``Space`` methods between configurations, encoded rows and ConfigSpace vectors."""

    # --- encoding ---------------------------------------------------------------------

    def encode(self, configs: Sequence[Mapping[str, Any]]) -> EncodedBatch:
        """Encode configurations for surrogates: values (n, encoded_dimension) in [0, 1]
        (NaN where the rule is ``none``), inactive columns imputed per the rules.

        A value out of range, a value for an inactive hyperparameter, or none for an
        active one is a SpaceError: encoded, it would leave [0, 1] or change the
        configuration's signature, silently."""
        return self._batch(self.checked_vectors(configs))

    def checked_vectors(
        self, configs: Sequence[Mapping[str, Any]], *, positions: Sequence[int] | None = None
    ) -> np.ndarray:
        """ConfigSpace vectors (n, d) of configurations that :meth:`encode` accepts:
        ``encode(configs)`` is ``encode_vectors(checked_vectors(configs))``, so rows
        kept from earlier calls encode alike. A configuration ``encode`` refuses is the
        same SpaceError here; ``positions`` (one per configuration, default 0..n-1) are
        the row numbers the error names, for configurations checked apart from the
        batch they are encoded in."""
        raw = self.vectors(configs)
        self._check_encodable(configs, raw, positions)
        return raw

    def _check_encodable(
        self,
        configs: Sequence[Mapping[str, Any]],
        raw: np.ndarray,
        positions: Sequence[int] | None = None,
    ) -> None:
        """Range and activity of every configuration, checked on their vectors at once."""
        for wrong, problem in self._encoding_problems(raw):
            if wrong.any():
                row, column = (int(i) for i in np.argwhere(wrong)[0])
                name = self.names[column]
                said = problem.format(value=configs[row].get(name))
                position = row if positions is None else positions[row]
                raise SpaceError(self.name, f"cannot encode configuration {position}, "
                                 f"{dict(configs[row])}: {name!r} {said}")

    def _encoding_problems(self, raw: np.ndarray) -> tuple[tuple[np.ndarray, str], ...]:
        """(where (n, d), problem) for each reason :meth:`encode` refuses a value of the
        ConfigSpace vectors ``raw``: out of range, inactive, or missing though active."""
        scaled = raw / self._index_spread
        present = ~np.isnan(raw)
        active = ~np.isnan(deactivate(self.configspace, np.where(present, raw, 0.0)))
        outside = present & ((scaled < -1e-9) | (scaled > 1 + 1e-9))
        return (
            (outside, "{value!r} is out of its range"),
            (present & ~active, "has a value ({value!r}) but is not active in it"),
            (active & ~present, "is active in it but has no value"),
        )

    def valid_rows(self, configs: Sequence[Mapping[str, Any]]) -> np.ndarray:
        """Which of ``configs`` are valid as they are: names of the space, values of the
        right kind that their hyperparameters take, in range, exactly the active ones,
        no forbidden combination. :meth:`is_valid` says the same but first snaps stepped
        values onto their grid (a step beyond its bound onto the bound), which
        :meth:`encode` does not; and it builds a ConfigSpace ``Configuration`` for each,
        0.2-0.5 ms, too slow for the thousands of trials of a stored study."""
        valid = np.array([self._plain_values(config) for config in configs], dtype=bool)
        try:
            raw = self.vectors(configs)
        except SpaceError:  # a value a hyperparameter does not take: found row by row
            raw = np.full((len(configs), self.dimension), np.nan)
            for row, config in enumerate(configs):
                try:
                    raw[row] = self.vectors([config])[0]
                except SpaceError:
                    valid[row] = False
        for wrong, _ in self._encoding_problems(raw):
            valid &= ~wrong.any(axis=1)
        return valid & ~self._forbidden_rows(raw)

    def _plain_values(self, config: Mapping[str, Any]) -> bool:
        """Whether ``config`` names only hyperparameters of the space, each with a value
        of the right kind (no boolean for a number, no fraction for an integer)."""
        space = self.configspace
        return all(
            name in space and wrong_kind_of_number(space[name], whole(space[name], value)) is None
            for name, value in config.items()
        )

    def _batch(self, raw: np.ndarray) -> EncodedBatch:
        """EncodedBatch of ConfigSpace vectors (categoricals as index, NaN inactive)."""
        values, active = self.layout.expand(raw / self._index_spread)
        return EncodedBatch(
            values=values, active=active, signature=activity_signature(~np.isnan(raw))
        )

    # --- ConfigSpace vectors ----------------------------------------------------------
    # ConfigSpace's own vector form (one column per name, NaN where inactive, categorical
    # and ordinal values as their index) lets acquisition optimizers sample, mutate and
    # score thousands of configurations without building a dict for each.

    def vectors(self, configs: Sequence[Mapping[str, Any]]) -> np.ndarray:
        """ConfigSpace vectors (n, d) of configurations; NaN marks inactive values."""
        raw = np.full((len(configs), self.dimension), np.nan)
        for row, config in enumerate(configs):
            for column, (name, hp) in enumerate(
                zip(self.names, self._hyperparameters, strict=False)
            ):
                if name in config:
                    raw[row, column] = self._vector_value(hp, config[name])
        return raw

    def _vector_value(self, hp: Any, value: Any) -> float:
        try:
            return float(hp.to_vector(value))
        except (KeyError, ValueError, TypeError) as error:  # e.g. a category it lacks
            raise SpaceError(f"{self.name}: {hp.name}", f"{value!r} is not a value it "
                             "takes") from error

    def sample_vectors(self, n: int, seed: int | np.random.Generator | None = None) -> np.ndarray:
        """ConfigSpace vectors (n, d) of valid configurations drawn from the prior."""
        if n <= 0:
            return np.empty((0, self.dimension))
        if self._quantized:
            return self.vectors(self.sample(n, seed))
        rng = np.random.default_rng(seed)
        self.configspace.seed(int(rng.integers(2**31 - 1)))
        drawn = self._draw(n)
        return np.array([c.get_array() for c in drawn], dtype=float).reshape(n, self.dimension)

    def encode_vectors(self, raw: np.ndarray) -> EncodedBatch:
        """Encode ConfigSpace vectors (n, d) exactly as :meth:`encode` encodes configs."""
        return self._batch(np.asarray(raw, dtype=float).reshape(-1, self.dimension))

    def from_vectors(self, raw: np.ndarray) -> list[dict[str, Any]]:
        """Configurations from ConfigSpace vectors; values of inactive hyperparameters are
        dropped; raises :class:`SpaceError` when an active value is missing or invalid."""
        given = np.atleast_2d(np.asarray(raw, dtype=float))
        # Snapped first: a snapped parent may activate or deactivate children.
        snapped = snap_vectors(self._hyperparameters, given) if self._quantized else given
        configs = []
        for row, vector in zip(given, snapped, strict=True):
            try:
                configuration = Configuration(
                    self.configspace, vector=deactivate(self.configspace, vector[None])[0]
                )
                configuration.check_valid_configuration()
            except Exception as error:  # ConfigSpace raises several types for bad vectors
                raise SpaceError(
                    self.name, f"invalid configuration vector {row.tolist()}: {error}"
                ) from error
            config = self._to_dict(configuration)
            if self._quantized:
                config = self._snapped(config)
                if config is None:
                    raise SpaceError(
                        self.name, f"configuration vector {row.tolist()} is invalid once quantized"
                    )
            configs.append(config)
        return configs

    def decode(self, values: np.ndarray) -> list[dict[str, Any]]:
        """Configurations from encoded rows; inactive columns are ignored."""
        index = self.layout.collapse(np.atleast_2d(np.asarray(values, dtype=float)))
        index = np.clip(np.nan_to_num(index, nan=0.5), 0.0, 1.0)
        vectors = np.empty_like(index)
        for column, hp in enumerate(self._hyperparameters):
            if isinstance(hp, Constant):
                vectors[:, column] = float(hp.to_vector(hp.value))
            elif isinstance(hp, CategoricalHyperparameter | OrdinalHyperparameter):
                vectors[:, column] = np.minimum(
                    np.round(index[:, column] * self._index_spread[column]), hp.size - 1
                )
            else:  # onto the value grid (integers, quantization) so conditions see true values
                vectors[:, column] = hp.to_vector(quantize_array(hp, hp.to_value(index[:, column])))
        raw = deactivate(self.configspace, vectors)
        self._refuse_forbidden(raw)
        return [self._to_dict(Configuration(self.configspace, vector=row)) for row in raw]

    def _refuse_forbidden(self, raw: np.ndarray) -> None:
        """A SpaceError naming the first forbidden row of ``raw`` (n, d) and its clause:
        a proposer must not evaluate a configuration the author forbade."""
        for clause in self.configspace._dag.fast_forbidden_checks:
            rows = np.flatnonzero(clause.is_forbidden_vector_array(raw.T))
            if len(rows):
                config = self._to_dict(Configuration(self.configspace, vector=raw[rows[0]]))
                raise SpaceError(self.name, f"decoded row {int(rows[0])}, {config}, is "
                                 f"forbidden by the clause {clause}")
