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
    nodes = configspace._dag.minimum_conditions
    inactive = np.isnan(matrix)
    while True:
        for node in nodes:
            satisfied = node.condition.satisfied_by_vector_array(matrix)
            matrix[np.ix_(node.children_indices, ~satisfied)] = np.nan
        if in_activation_order(nodes):
            return matrix.T
        now = np.isnan(matrix)
        if np.array_equal(now, inactive):
            return matrix.T
        inactive = now


def in_activation_order(nodes: list) -> bool:
    """Whether every condition comes after the conditions of the hyperparameters it reads.

    ConfigSpace orders them by depth in its DAG, which a conjunction does not respect:
    ``batch`` under ``clf == mlp and dropout == true``, with ``dropout`` inside a nested
    choice, was evaluated before ``dropout`` was deactivated, and stayed active when its
    branch was not chosen. Out of order, :func:`deactivate` repeats the pass until
    nothing changes.
    """
    decided_at = {child: i for i, node in enumerate(nodes) for child in node.children_indices}
    return all(
        decided_at.get(parent, -1) < i
        for i, node in enumerate(nodes)
        for parent in _parent_indices(node.condition)
    )


def _parent_indices(condition) -> list[int]:
    if hasattr(condition, "parent_vector_ids"):  # a conjunction
        return [int(i) for i in condition.parent_vector_ids]
    return [int(condition.parent_vector_id)]
