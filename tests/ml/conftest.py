"""Fixtures for the task-layer tests."""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest
from sklearn.datasets import make_classification

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from flaky_spaces import FlakySpace  # noqa: E402


@pytest.fixture
def flaky_space() -> FlakySpace:
    return FlakySpace()


@pytest.fixture
def tree_only_space() -> FlakySpace:
    return FlakySpace(behaviours=("fit",))


@pytest.fixture
def classification_data():
    X, y = make_classification(
        n_samples=120, n_features=6, n_informative=3, n_classes=3, random_state=0
    )
    labels = np.array(["a", "b", "c"], dtype=object)[y]
    return X, labels
