"""Fixtures for the estimator tests.

The test spaces live in ``tree_spaces.py``, imported through ``sys.path`` so that
estimators holding them can be pickled, and unpickled in joblib worker processes.
"""

from __future__ import annotations

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import tree_spaces  # noqa: E402


@pytest.fixture
def tree_space():
    return tree_spaces.TreeDepthSpace()


@pytest.fixture
def tree_regression_space():
    return tree_spaces.TreeDepthSpace(regression=True)
