"""Whether the targets let a split be stratified, and which classes stop it.

The validation schemes ask before they stratify, and the task asks too, to warn once
naming the classes that prevent it: both must count the rows as scikit-learn does, or
scikit-learn refuses the split (or warns on every trial) where ensembo expected none.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def holdout_sizes(n_rows: int, ratio: float) -> tuple[int, int]:
    """(training, held-out) rows of a split holding out ``ratio`` of ``n_rows``, counted
    as scikit-learn's shuffle splits and ``train_test_split`` count them."""
    held_out = math.ceil(ratio * n_rows)
    return n_rows - held_out, held_out


def can_stratify_holdout(y: np.ndarray, ratio: float) -> bool:
    """Whether a holdout of ``ratio`` can be stratified: every class needs a row on each
    side, and each side a row of every class, or scikit-learn refuses the split.
    Otherwise the split is drawn unstratified (the task warns once, naming why)."""
    _, counts = np.unique(y, return_counts=True)
    return (
        counts.size > 1
        and counts.min() >= 2
        and min(holdout_sizes(len(y), ratio)) >= counts.size
    )


def can_stratify_folds(y: np.ndarray, n_splits: int) -> bool:
    """Whether k-fold can be stratified: as scikit-learn's ``StratifiedKFold``, once one
    class fills every fold. A rarer class is still spread over as many folds as it has
    rows (the task warns once, naming it); stratification is kept for the others."""
    _, counts = np.unique(y, return_counts=True)
    return counts.size > 1 and counts.max() >= n_splits


def classes_rarer_than(y: np.ndarray, n_rows: int) -> dict[Any, int]:
    """The classes of ``y`` with fewer than ``n_rows`` rows, and their counts."""
    labels, counts = np.unique(y, return_counts=True)
    return {label: int(count) for label, count in zip(labels, counts, strict=True)
            if count < n_rows}
