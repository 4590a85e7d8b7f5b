"""Prior draws from a ConfigSpace ``ConfigurationSpace`` that give up instead of hanging.

ConfigSpace's ``sample_configuration`` redraws until enough candidates pass the
forbidden clauses, so clauses that allow (almost) nothing make it loop forever. This is
the same loop, draw for draw on the space's own random state (seeded studies and
published benchmarks reproduce), with a bound on the candidates it may draw. It reads
ConfigSpace's condition DAG and vector distributions, private attributes pinned by
tests/spaces/test_sampling.py.
"""

from __future__ import annotations

import numpy as np
from ConfigSpace import ConfigurationSpace

MAX_CANDIDATES = 20_000
"""Candidates drawn before giving up, plus :data:`CANDIDATES_PER_CONFIG` per one asked."""
CANDIDATES_PER_CONFIG = 200


def prior_vectors(configspace: ConfigurationSpace, n: int) -> np.ndarray | None:
    """``n`` allowed ConfigSpace vectors (n, d), as ``sample_configuration(n)`` draws them;
    ``None`` when the bound on candidates is reached first."""
    dimension = len(configspace)
    if dimension == 0:
        return np.empty((n, 0))
    growth = _batch_growth(configspace)
    budget = MAX_CANDIDATES + CANDIDATES_PER_CONFIG * n
    accepted: list[np.ndarray] = []
    found = drawn = 0
    batch_size = n
    while found < n:
        if drawn >= budget:
            return None
        batch_size = max(int(growth * batch_size), 5)
        drawn += batch_size
        allowed = _allowed(configspace, _candidates(configspace, batch_size))
        accepted.append(allowed)
        found += allowed.shape[1]
        batch_size = n - found
    return np.concatenate(accepted, axis=1)[:, :n].T


def _batch_growth(configspace: ConfigurationSpace) -> float:
    """ConfigSpace's over-sampling factor: more candidates where more may be rejected."""
    rejecting = len(configspace.forbidden_clauses) + len(configspace.conditional_hyperparameters)
    return (rejecting / len(configspace)) ** 2


def _candidates(configspace: ConfigurationSpace, size: int) -> np.ndarray:
    """(d, size) prior draws, hyperparameter-major, in ConfigSpace's order of draws."""
    matrix = np.empty((len(configspace), size), dtype=np.float64)
    for row, hp in enumerate(configspace.values()):
        matrix[row] = hp._vector_dist.sample_vector(n=size, seed=configspace.random)
    return matrix


def _allowed(configspace: ConfigurationSpace, matrix: np.ndarray) -> np.ndarray:
    """The columns of ``matrix`` no forbidden clause rejects, inactive values as NaN."""
    dag = configspace._dag
    forbidden = np.zeros(matrix.shape[1], dtype=bool)
    for clause in dag.unconditional_forbiddens:
        forbidden |= clause.is_forbidden_vector_array(matrix)
    kept = matrix[:, ~forbidden]
    for node in dag.minimum_conditions:
        satisfied = node.condition.satisfied_by_vector_array(kept)
        kept[np.ix_(node.children_indices, ~satisfied)] = np.nan
    forbidden = np.zeros(kept.shape[1], dtype=bool)
    for clause in dag.conditional_forbiddens:
        forbidden |= clause.is_forbidden_vector_array(kept)
    return kept[:, ~forbidden]
