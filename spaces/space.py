"""The :class:`Space`: one search space, whatever it was declared in.

A Space wraps a ConfigSpace ``ConfigurationSpace`` (which does sampling, validity
checks and neighbourhoods) and adds what ensembo needs on top: an encoder for
surrogates with imputation of inactive hyperparameters, and plain-dict configurations
holding only active values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from ConfigSpace import Configuration, ConfigurationSpace
from ConfigSpace.hyperparameters import (
    CategoricalHyperparameter,
    Constant,
    OrdinalHyperparameter,
)
from ConfigSpace.util import deactivate_inactive_hyperparameters

from ensembo.errors import SpaceError
from ensembo.spaces.encoding import EncodedBatch, activity_signature

_MIDPOINT = 0.5


def _plain(value: Any) -> Any:
    """Numpy scalars -> Python scalars, so configs serialize and compare cleanly."""
    return value.item() if isinstance(value, np.generic) else value


class Space:
    """A search space over which ensembo optimizes.

    ``impute`` gives, per hyperparameter name, the encoded value in [0, 1] used when the
    hyperparameter is inactive (default: the midpoint of its normalized range).
    """

    def __init__(
        self,
        configspace: ConfigurationSpace,
        *,
        name: str | None = None,
        impute: Mapping[str, float] | None = None,
    ):
        self.configspace = configspace
        self.name = name or configspace.name or "space"
        self.names: tuple[str, ...] = tuple(configspace.keys())
        self._hyperparameters = [configspace[n] for n in self.names]
        self._index_spread = np.array(
            [self._spread(hp) for hp in self._hyperparameters], dtype=float
        )
        impute = dict(impute or {})
        unknown = set(impute) - set(self.names)
        if unknown:
            raise SpaceError(self.name, f"imputation given for unknown hyperparameters {sorted(unknown)}")
        self._impute = np.array([impute.get(n, _MIDPOINT) for n in self.names], dtype=float)

    # --- construction -----------------------------------------------------------------

    @classmethod
    def from_configspace(cls, configspace: ConfigurationSpace, **kwargs: Any) -> Space:
        return cls(configspace, **kwargs)

    def to_configspace(self) -> ConfigurationSpace:
        return self.configspace

    def definition(self) -> dict[str, Any]:
        """A JSON-serializable description that :func:`ensembo.spaces.load` turns back
        into an equal space; studies store it so they can be resumed."""
        names = self.names
        return {
            "name": self.name,
            "configspace": self.configspace.to_serialized_dict(),
            "impute": {n: float(v) for n, v in zip(names, self._impute)},
        }

    @classmethod
    def from_definition(cls, definition: Mapping[str, Any]) -> Space:
        configspace = ConfigurationSpace.from_serialized_dict(dict(definition["configspace"]))
        return cls(configspace, name=definition.get("name"), impute=definition.get("impute"))

    # --- shape ------------------------------------------------------------------------

    @property
    def dimension(self) -> int:
        return len(self.names)

    @property
    def is_conditional(self) -> bool:
        return bool(self.configspace.conditions)

    def hyperparameter(self, name: str):
        try:
            return self.configspace[name]
        except KeyError:
            raise SpaceError(self.name, f"no hyperparameter named {name!r}") from None

    @staticmethod
    def _spread(hp) -> float:
        """Divisor mapping an index vector value onto [0, 1] (1 for numeric ones)."""
        if isinstance(hp, CategoricalHyperparameter | OrdinalHyperparameter):
            return float(max(hp.size - 1, 1))
        return 1.0

    # --- configurations ---------------------------------------------------------------

    def sample(self, n: int, seed: int | np.random.Generator | None = None) -> list[dict[str, Any]]:
        """``n`` valid configurations drawn from the space's prior distributions."""
        rng = np.random.default_rng(seed)
        if n <= 0:
            return []
        self.configspace.seed(int(rng.integers(2**31 - 1)))
        drawn = self.configspace.sample_configuration() if n == 1 else self.configspace.sample_configuration(n)
        drawn = [drawn] if isinstance(drawn, Configuration) else drawn
        return [self._to_dict(c) for c in drawn]

    def default(self) -> dict[str, Any]:
        return self._to_dict(self.configspace.get_default_configuration())

    def configuration(self, config: Mapping[str, Any]) -> Configuration:
        """Check ``config`` and return it as a ConfigSpace ``Configuration``."""
        unknown = set(config) - set(self.names)
        if unknown:
            raise SpaceError(self.name, f"unknown hyperparameters {sorted(unknown)}")
        try:
            return Configuration(self.configspace, values=dict(config))
        except Exception as error:  # ConfigSpace raises several types for bad values
            raise SpaceError(self.name, f"invalid configuration {dict(config)}: {error}") from error

    def validate(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """Return ``config`` normalized to plain values, or raise :class:`SpaceError`."""
        return self._to_dict(self.configuration(config))

    def is_valid(self, config: Mapping[str, Any]) -> bool:
        try:
            self.configuration(config)
        except SpaceError:
            return False
        return True

    @staticmethod
    def _to_dict(configuration: Configuration) -> dict[str, Any]:
        return {k: _plain(v) for k, v in dict(configuration).items()}

    # --- encoding ---------------------------------------------------------------------

    def encode(self, configs: Sequence[Mapping[str, Any]]) -> EncodedBatch:
        """Encode configurations into a batch for surrogates (inactive dims imputed)."""
        return self._batch(self.vectors(configs))

    # --- ConfigSpace vectors ----------------------------------------------------------
    # ConfigSpace's own vector form (one column per name, NaN where inactive, categorical
    # and ordinal values as their index) lets acquisition optimizers sample, mutate and
    # score thousands of configurations without building a dict for each.

    def vectors(self, configs: Sequence[Mapping[str, Any]]) -> np.ndarray:
        """ConfigSpace vectors (n, d) of configurations; NaN marks inactive values."""
        n, d = len(configs), self.dimension
        raw = np.full((n, d), np.nan)
        for row, config in enumerate(configs):
            for column, (name, hp) in enumerate(zip(self.names, self._hyperparameters)):
                if name in config:
                    raw[row, column] = float(hp.to_vector(config[name]))
        return raw

    def sample_vectors(self, n: int, seed: int | np.random.Generator | None = None) -> np.ndarray:
        """ConfigSpace vectors (n, d) of valid configurations drawn from the prior."""
        rng = np.random.default_rng(seed)
        if n <= 0:
            return np.empty((0, self.dimension))
        self.configspace.seed(int(rng.integers(2**31 - 1)))
        drawn = self.configspace.sample_configuration(n)
        drawn = [drawn] if isinstance(drawn, Configuration) else drawn
        return np.array([c.get_array() for c in drawn], dtype=float).reshape(n, self.dimension)

    def encode_vectors(self, raw: np.ndarray) -> EncodedBatch:
        """Encode ConfigSpace vectors (n, d) exactly as :meth:`encode` encodes configs."""
        return self._batch(np.asarray(raw, dtype=float).reshape(-1, self.dimension))

    def from_vectors(self, raw: np.ndarray) -> list[dict[str, Any]]:
        """Configurations from ConfigSpace vectors; raises :class:`SpaceError` if invalid."""
        configs = []
        for row in np.atleast_2d(np.asarray(raw, dtype=float)):
            try:
                configuration = Configuration(self.configspace, vector=row)
                configuration.check_valid_configuration()
            except Exception as error:  # ConfigSpace raises several types for bad vectors
                raise SpaceError(self.name, f"invalid configuration vector {row.tolist()}: {error}") from error
            configs.append(self._to_dict(configuration))
        return configs

    def _batch(self, raw: np.ndarray) -> EncodedBatch:
        active = ~np.isnan(raw)
        values = np.where(active, raw / self._index_spread, self._impute)
        return EncodedBatch(values=values, active=active, signature=activity_signature(active))

    def decode(self, values: np.ndarray) -> list[dict[str, Any]]:
        """Configurations from encoded rows in [0, 1]; inactive columns are ignored."""
        values = np.atleast_2d(np.clip(np.asarray(values, dtype=float), 0.0, 1.0))
        configs = []
        for row in values:
            assignment = {}
            for value, name, hp, spread in zip(row, self.names, self._hyperparameters, self._index_spread):
                if isinstance(hp, Constant):
                    assignment[name] = hp.value
                else:
                    vector = np.round(value * spread) if spread != 1.0 else value
                    assignment[name] = _plain(hp.to_value(vector))
            configuration = deactivate_inactive_hyperparameters(assignment, self.configspace)
            configs.append(self._to_dict(configuration))
        return configs

    def __repr__(self) -> str:
        return f"Space(name={self.name!r}, dimension={self.dimension})"
