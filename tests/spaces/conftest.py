"""Fixtures for space tests: a tiny classification / regression dataset with NaNs."""

from __future__ import annotations

import numpy as np
import pytest


def _features(seed: int, n: int = 60, d: int = 5) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[rng.random(X.shape) < 0.08] = np.nan
    return X


@pytest.fixture(scope="session")
def tiny_classification() -> tuple[np.ndarray, np.ndarray]:
    X = _features(0)
    signal = np.nan_to_num(X[:, 0]) + 0.5 * np.nan_to_num(X[:, 1])
    y = np.digitize(signal, [-0.5, 0.5])  # three classes
    return X, y


@pytest.fixture(scope="session")
def tiny_regression() -> tuple[np.ndarray, np.ndarray]:
    X = _features(1)
    y = np.nan_to_num(X[:, 0]) - 2.0 * np.nan_to_num(X[:, 2]) + 0.1
    return X, y
