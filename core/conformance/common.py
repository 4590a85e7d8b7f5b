"""What every conformance check shares: the run that collects failures, the error, and
the synthetic problems components are called on."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import numpy as np

from ensembo import components, spaces
from ensembo.errors import PluginContractError
from ensembo.registry import Registry

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


class ConformanceError(PluginContractError):
    """A component broke its contract in use; ``failures`` holds (check, what happened)."""

    def __init__(self, component: str, failures: list[tuple[str, str]]):
        self.component, self.failures = component, failures
        listing = "\n".join(f"- {check}: {problem}" for check, problem in failures)
        super().__init__(f"{component} failed {len(failures)} conformance check(s):\n{listing}")


class CheckRun:
    """Runs named checks, keeping every failure instead of stopping at the first."""

    def __init__(self, kind: str, spec: Any, registry: Registry | None):
        self.kind, self.spec, self.registry = kind, spec, registry
        self.passed: list[str] = []
        self.failures: list[tuple[str, str]] = []

    def fresh(self) -> Any:
        if isinstance(self.spec, str | Mapping):
            return components.build(self.kind, self.spec, self.registry)
        if not callable(self.spec):
            raise TypeError(
                f"give a registered name, a spec or a zero-argument factory, not {self.spec!r}"
            )
        return self.spec()

    @contextmanager
    def check(self, name: str) -> Iterator[None]:
        try:
            yield
        except Exception as error:  # the component's failure is the finding
            self.failures.append((name, f"{type(error).__name__}: {error}"))
        else:
            self.passed.append(name)

    def done(self) -> list[str]:
        if self.failures:
            spec = components.split_spec(self.kind, self.spec)
            label = repr(spec[0]) if spec else getattr(self.spec, "__qualname__", repr(self.spec))
            raise ConformanceError(f"{self.kind.replace('_', ' ')} {label}", self.failures)
        return self.passed


def require(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(message)


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
