"""Vectorized activity: which hyperparameters of many ConfigSpace vectors are active.

``deactivate_inactive_hyperparameters`` from ConfigSpace rebuilds a Configuration per
inactive child, which dominates decoding thousands of acquisition candidates. This
applies the space's conditions to a whole (n, d) array at once, parents before
children, exactly as ConfigSpace's own sampler does (it reads ConfigSpace's condition
DAG, a private attribute, pinned by tests/spaces/test_activity.py).
"""

from __future__ import annotations

import numpy as np
from ConfigSpace import ConfigurationSpace


def deactivate(configspace: ConfigurationSpace, vectors: np.ndarray) -> np.ndarray:
    """Copy of ``vectors`` (n, d) with NaN wherever a hyperparameter is inactive."""
    matrix = np.array(vectors, dtype=float).T  # ConfigSpace works hyperparameter-major
    if matrix.size == 0:
        return matrix.T
    for node in configspace._dag.minimum_conditions:
        satisfied = node.condition.satisfied_by_vector_array(matrix)
        matrix[np.ix_(node.children_indices, ~satisfied)] = np.nan
    return matrix.T
