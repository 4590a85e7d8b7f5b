"""The small synthetic problems components are checked on: a flat and a conditional
space with a smooth target, and noisy predictions for a classification or regression
task."""

from __future__ import annotations

import numpy as np

from ensembo import spaces

FLAT_SPACE = {
    "name": "conformance-flat",
    "params": {
        "x": {"type": "float", "low": -5.0, "high": 5.0},
        "rate": {"type": "float", "low": 1e-4, "high": 1.0, "log": True},
        "depth": {"type": "int", "low": 1, "high": 8},
    },
}
CONDITIONAL_SPACE = "svm"  # a library space: a kernel choice with per-kernel parameters
CLASSES = 3
EXAMPLES = 24
TASKS = ("classification", "regression")



def synthetic_problem(space: spaces.Space, n: int, seed: int):
    """``n`` sampled configurations, their encoding and a smooth target over it."""
    rng = np.random.default_rng(seed)
    configs = space.sample(n, rng)
    batch = space.encode(configs)
    values = np.nan_to_num(batch.values, nan=0.5)
    return configs, batch, np.sum((values - 0.3) ** 2, axis=1) + 0.1 * values[:, 0]


def synthetic_predictions(task: str, rng: np.random.Generator, y: np.ndarray) -> np.ndarray:
    if task == "classification":
        noisy = rng.dirichlet(np.ones(CLASSES), size=len(y))
        return 0.5 * noisy + 0.5 * np.eye(CLASSES)[y] * rng.uniform(0.2, 1.0, (len(y), 1))
    return y + rng.normal(scale=rng.uniform(0.1, 1.0), size=len(y))
