"""Cholesky factorization that does not give up.

Duplicated or nearly collinear points make a kernel matrix singular to working
precision. Jitter is added in escalating steps; if even the largest fails, the
matrix is shifted by its most negative eigenvalue, which always factorizes.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import LinAlgError, cholesky

_JITTERS = (0.0, 1e-10, 1e-8, 1e-6, 1e-4, 1e-2)  # relative to the mean diagonal


def robust_cholesky(matrix: np.ndarray) -> tuple[np.ndarray, float]:
    """Lower factor ``L`` and the absolute jitter that made ``L L^T = matrix + jitter I``."""
    scale = float(np.mean(np.diag(matrix))) if matrix.size else 1.0
    scale = scale if np.isfinite(scale) and scale > 0 else 1.0
    identity = np.eye(matrix.shape[0])
    for relative in _JITTERS:
        jitter = relative * scale
        try:
            return cholesky(matrix + jitter * identity, lower=True, check_finite=False), jitter
        except LinAlgError:
            continue
    smallest = float(np.linalg.eigvalsh(matrix)[0])
    jitter = max(-smallest, 0.0) + 1e-2 * scale
    return cholesky(matrix + jitter * identity, lower=True, check_finite=False), jitter
