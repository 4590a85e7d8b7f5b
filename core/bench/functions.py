"""Synthetic test functions with known minima (definitions as in Surjanovic & Bingham's
virtual library of simulation experiments). Each takes a 1-D array in its own domain.

Ackley's usual box [-32.768, 32.768]^d puts the minimum at the centre, which is also
the default configuration and the first point of several initial designs; we use the
asymmetric box [-15, 30]^5 so no optimizer gets it for free."""

from __future__ import annotations

import math

import attrs
import numpy as np

BRANIN_MINIMUM = 0.39788735772974
HARTMANN3_MINIMUM = -3.86277978733266
HARTMANN6_MINIMUM = -3.32236801141551

_HARTMANN3_A = np.array([[3.0, 10, 30], [0.1, 10, 35], [3.0, 10, 30], [0.1, 10, 35]])
_HARTMANN3_P = 1e-4 * np.array(
    [[3689, 1170, 2673], [4699, 4387, 7470], [1091, 8732, 5547], [381, 5743, 8828]]
)
_HARTMANN6_A = np.array(
    [
        [10, 3, 17, 3.5, 1.7, 8],
        [0.05, 10, 17, 0.1, 8, 14],
        [3, 3.5, 1.7, 10, 17, 8],
        [17, 8, 0.05, 10, 0.1, 14],
    ]
)
_HARTMANN6_P = 1e-4 * np.array(
    [
        [1312, 1696, 5569, 124, 8283, 5886],
        [2329, 4135, 8307, 3736, 1004, 9991],
        [2348, 1451, 3522, 2883, 3047, 6650],
        [4047, 8828, 8732, 5743, 1091, 381],
    ]
)
_HARTMANN_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])


def branin(x: np.ndarray) -> float:
    x1, x2 = x
    b, c = 5.1 / (4 * math.pi**2), 5 / math.pi
    return float(
        (x2 - b * x1**2 + c * x1 - 6) ** 2 + 10 * (1 - 1 / (8 * math.pi)) * math.cos(x1) + 10
    )


def _hartmann(x: np.ndarray, a: np.ndarray, p: np.ndarray) -> float:
    inner = np.sum(a * (np.asarray(x) - p) ** 2, axis=1)
    return float(-np.sum(_HARTMANN_ALPHA * np.exp(-inner)))


def hartmann3(x: np.ndarray) -> float:
    return _hartmann(x, _HARTMANN3_A, _HARTMANN3_P)


def hartmann6(x: np.ndarray) -> float:
    return _hartmann(x, _HARTMANN6_A, _HARTMANN6_P)


def levy(x: np.ndarray) -> float:
    w = 1 + (np.asarray(x, dtype=float) - 1) / 4
    head = math.sin(math.pi * w[0]) ** 2
    body = np.sum((w[:-1] - 1) ** 2 * (1 + 10 * np.sin(math.pi * w[:-1] + 1) ** 2))
    tail = (w[-1] - 1) ** 2 * (1 + math.sin(2 * math.pi * w[-1]) ** 2)
    return float(head + body + tail)


def rosenbrock(x: np.ndarray) -> float:
    x = np.asarray(x, dtype=float)
    return float(np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (x[:-1] - 1) ** 2))


def ackley(x: np.ndarray) -> float:
    x = np.asarray(x, dtype=float)
    return float(
        -20 * math.exp(-0.2 * math.sqrt(np.mean(x**2)))
        - math.exp(np.mean(np.cos(2 * math.pi * x)))
        + 20
        + math.e
    )


@attrs.frozen(kw_only=True)
class TestFunction:
    """A function, its box and its minimum (value and one minimizer, for tests)."""

    name: str
    function: object = attrs.field(eq=False, repr=False)
    bounds: tuple[tuple[float, float], ...]
    minimum: float
    minimizer: tuple[float, ...]

    @property
    def dimension(self) -> int:
        return len(self.bounds)

    def from_unit(self, u: np.ndarray) -> np.ndarray:
        """Map a point of the unit cube into the function's box."""
        low, high = np.array(self.bounds).T
        return low + np.asarray(u, dtype=float) * (high - low)

    def __call__(self, x: np.ndarray) -> float:
        return self.function(x)


TEST_FUNCTIONS = {
    f.name: f
    for f in (
        TestFunction(
            name="branin",
            function=branin,
            bounds=((-5.0, 10.0), (0.0, 15.0)),
            minimum=BRANIN_MINIMUM,
            minimizer=(math.pi, 2.275),
        ),
        TestFunction(
            name="hartmann3",
            function=hartmann3,
            bounds=((0.0, 1.0),) * 3,
            minimum=HARTMANN3_MINIMUM,
            minimizer=(0.114614, 0.555649, 0.852547),
        ),
        TestFunction(
            name="hartmann6",
            function=hartmann6,
            bounds=((0.0, 1.0),) * 6,
            minimum=HARTMANN6_MINIMUM,
            minimizer=(0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573),
        ),
        TestFunction(
            name="levy5",
            function=levy,
            bounds=((-10.0, 10.0),) * 5,
            minimum=0.0,
            minimizer=(1.0,) * 5,
        ),
        TestFunction(
            name="rosenbrock4",
            function=rosenbrock,
            bounds=((-5.0, 10.0),) * 4,
            minimum=0.0,
            minimizer=(1.0,) * 4,
        ),
        TestFunction(
            name="ackley5",
            function=ackley,
            bounds=((-15.0, 30.0),) * 5,
            minimum=0.0,
            minimizer=(0.0,) * 5,
        ),
    )
}
