"""Margin losses of a majority vote (Lévesque thesis §4.3): ``squared-margin`` and
``sigmoid-margin``.

Both reward diversity where the zero-one loss is flat: swapping a bad member for a
good one moves the margin even when it does not flip the vote (Tables 4.1/4.2).
"""

from __future__ import annotations

import functools

import numpy as np
from scipy.optimize import brentq

from ensembo.plugins.losses.votes import VoteLoss
from ensembo.plugins.option_checks import fraction, positive


class SquaredMarginLoss(VoteLoss):
    """(1 − M)²/4 (Eq. 4.8); its mean is (1 − μ₁ − disagreement)/2 (Eq. 4.20)."""

    def per_example(self, v_true, v_wrong, size):
        margin = (2.0 * v_true - size) / size
        return (1.0 - margin) ** 2 / 4.0


def _sigmoid(x: np.ndarray | float, a: float):
    return 1.0 / (1.0 + np.exp(-a * np.asarray(x, dtype=float)))


@functools.lru_cache(maxsize=256)
def sigmoid_scale(size: int, epsilon: float = 1e-3) -> float:
    """The scale ``a`` > 1 for which one vote at the top margin moves the loss by ``epsilon``.

    Solves d(a) = s(1, a) − s(1 − 2/m, a) = ε for its root above 1 (thesis L1032–1042):
    d rises from 0 then decays to 0 as a grows, so the root lies past d's maximum.
    For m < 3 the equation has no root above 1 and the value for m = 3 is used.
    """
    m = max(int(size), 3)
    gap = lambda a: _sigmoid(1.0, a) - _sigmoid(1.0 - 2.0 / m, a) - epsilon  # noqa: E731
    grid = np.geomspace(1.0, 1e4, 400)
    values = np.array([gap(a) for a in grid])
    peak = int(np.argmax(values))
    above = np.flatnonzero(values[peak:] < 0)
    if values[peak] <= 0 or not above.size:
        raise ValueError(f"no sigmoid scale above 1 gives a gap of {epsilon} for m={m}")
    high = peak + int(above[0])
    return float(brentq(gap, grid[high - 1], grid[high]))


class SigmoidMarginLoss(VoteLoss):
    """1 − s((v* − v_max)/|E|, a), a smooth zero-one loss of the vote.

    For two classes (v* − v_max)/|E| is the margin M and this is Eq. 4.23; for more
    classes it is the thesis's sigmoid of v* − v_max (Eq. 4.25–4.26), normalized by
    |E| so one scale fits both. ``a=None`` solves the scale for each ensemble size
    (:func:`sigmoid_scale`); a number fixes it.
    """

    def __init__(self, a: float | None = None, epsilon: float = 1e-3):
        # a <= 0 flattened or inverted the loss (a right vote scored near 1).
        self.a = None if a is None else positive("sigmoid-margin", "a", a)
        self.epsilon = fraction("sigmoid-margin", "epsilon", epsilon)

    def scale(self, size: float) -> float:
        return self.a if self.a is not None else sigmoid_scale(int(round(size)), self.epsilon)

    def per_example(self, v_true, v_wrong, size):
        size = np.asarray(size, dtype=float)
        unique = np.unique(size)
        scales = np.empty_like(size)
        for value in unique:
            scales[size == value] = self.scale(value)
        return 1.0 - _sigmoid((v_true - v_wrong) / size * scales, 1.0)
