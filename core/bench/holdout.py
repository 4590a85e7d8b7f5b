"""A tuning problem on a real dataset: fit on a fixed training split, score on a fixed
validation split (the loss the optimizer sees) and on a test split (recorded only).

The splits are stratified and drawn once per dataset (``split_seed``), so every
optimizer and seed tunes against the same validation rows; only the optimizer's seed
varies between runs.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from ensembo.bench.problem import Outcome

VALIDATION_FRACTION = 0.25
TEST_FRACTION = 0.25
FAILED_FIT_LOSS = 1.0


def stratified_splits(y: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Train / validation / test row indices (50/25/25), stratified on ``y``."""
    from sklearn.model_selection import train_test_split

    rows = np.arange(len(y))
    rest, test = train_test_split(rows, test_size=TEST_FRACTION, random_state=seed, stratify=y)
    train, validation = train_test_split(
        rest,
        test_size=VALIDATION_FRACTION / (1 - TEST_FRACTION),
        random_state=seed,
        stratify=y[rest],
    )
    return train, validation, test


class HoldoutObjective:
    """Zero-one error of ``space.build(config)``; data are loaded on first use so that
    listing a suite's problems stays cheap.

    A configuration whose fit raises scores the worst error (1.0) on both splits, as a
    user of any of the compared libraries would record it.
    """

    def __init__(self, space_name: str, dataset: str, split_seed: int = 0):
        self.space_name = space_name
        self.dataset = dataset
        self.split_seed = split_seed
        self._prepared: tuple[Any, ...] | None = None

    def _prepare(self):
        if self._prepared is None:
            from ensembo import spaces
            from ensembo.datasets import load_dataset

            data = load_dataset(f"keel:{self.dataset}")
            y = np.asarray(data.y)
            train, validation, test = stratified_splits(y, self.split_seed)
            self._prepared = (spaces.load(self.space_name), data, y, train, validation, test)
        return self._prepared

    def __call__(self, config: Mapping[str, Any]) -> Outcome:
        space, data, y, train, validation, test = self._prepare()
        model = space.build(
            dict(config), categorical_features=data.categorical_features, random_state=0
        )
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.fit(data.X[train], y[train])
                validation_error = float(
                    np.mean(model.predict(data.X[validation]) != y[validation])
                )
                test_error = float(np.mean(model.predict(data.X[test]) != y[test]))
        except (ValueError, ArithmeticError, np.linalg.LinAlgError):
            return Outcome(loss=FAILED_FIT_LOSS, test_loss=FAILED_FIT_LOSS)
        return Outcome(loss=validation_error, test_loss=test_error)
