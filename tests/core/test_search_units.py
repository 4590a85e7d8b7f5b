"""A search proposes the same configurations whatever the unit of the losses, even
when every loss is astronomically large or small: losses near 1e-300 or above 1e150
made the GP's and the forest's variances under- or overflow (or all losses one
clipped value), and their proposals stopped depending on the results."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from ensembo import Study
from ensembo.proposal import in_search_units

SPACE = {"params": {"x": {"type": "float", "low": -5.0, "high": 5.0},
                    "y": {"type": "float", "low": -5.0, "high": 5.0}}}


def _configurations(surrogate: str, unit: float, acquisition="ei") -> list[tuple[float, ...]]:
    study = Study(SPACE, surrogate=surrogate, acquisition=acquisition, seed=0, n_initial=5)
    for _ in range(12):
        trial = study.ask()
        x, y = trial.config["x"], trial.config["y"]
        study.tell(trial, unit * (1.0 + (x - 1.0) ** 2 + (y + 2.0) ** 2))
    return [tuple(t.config.values()) for t in study.trials]


@pytest.mark.parametrize("surrogate", ["gp", "rf"])
@pytest.mark.parametrize("unit", [2.0**-1000, 2.0**510])
def test_a_power_of_two_unit_changes_no_proposal(surrogate, unit):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # the acquisition overflowed
        assert _configurations(surrogate, unit) == _configurations(surrogate, 1.0)


def test_ordinary_targets_are_left_as_they_are():
    """One huge penalty among ordinary losses is the surrogate's clipping to handle."""
    targets = np.array([0.3, 1e300, np.inf, np.nan, 2.0, 0.0])
    assert in_search_units(targets) is targets
    assert in_search_units(np.array([0.0, 0.0])).tolist() == [0.0, 0.0]


def test_extreme_targets_are_scaled_exactly_and_failures_kept():
    targets = np.array([3e-300, 5e-300, np.inf, np.nan])
    scaled = in_search_units(targets)
    assert 0.5 <= np.median(scaled[:2]) < 4.0
    assert scaled[0] / scaled[1] == targets[0] / targets[1]
    assert scaled[2] == np.inf and np.isnan(scaled[3])


@pytest.mark.parametrize("name", ["ei", "pi"])
def test_xi_keeps_its_meaning_in_target_units(name):
    """xi is a required improvement in target units: it was left unscaled beside the
    scaled targets (5 of 12 proposals moved)."""
    unit = 2.0**-400
    scaled = _configurations("gp", unit, {"name": name, "xi": 0.5 * unit})
    assert scaled == _configurations("gp", 1.0, {"name": name, "xi": 0.5})


def test_targets_spanning_more_than_the_float_range_do_not_overflow():
    """The best trial, at -1e10 among losses near 1e-300, was scaled to -inf: the
    surrogate counts an infinite target as failed, the worst."""
    targets = np.array([3e-300, 5e-300, 7e-300, -1e10])
    scaled = in_search_units(targets)
    assert np.all(np.isfinite(scaled)) and np.argmin(scaled) == 3


class _FrozenXiPI:
    """A plugin acquisition whose xi cannot be set: copying it and setting xi failed
    every ask once the losses were rescaled (FrozenInstanceError, naming nothing)."""

    def __init__(self, xi: float):
        self._xi = xi

    @property
    def xi(self) -> float:
        return self._xi

    def __call__(self, mean, variance, best):
        from scipy.special import ndtr

        return ndtr((best - self.xi - mean) / np.sqrt(np.maximum(variance, 1e-300)))

    def gradient(self, mean, variance, best):
        return np.zeros_like(mean), np.zeros_like(variance)


@pytest.mark.parametrize("frozen", ["attrs", "property"])
def test_an_acquisition_whose_xi_cannot_be_set_still_searches(frozen, caplog):
    """Copying it and setting xi failed every ask (FrozenInstanceError, naming nothing);
    then falling back to unscaled targets made the search blind: two optima gave the
    same proposals."""
    import attrs

    @attrs.frozen
    class AttrsPI:
        xi: float

        def __call__(self, mean, variance, best):
            return _FrozenXiPI(self.xi)(mean, variance, best)

        def gradient(self, mean, variance, best):
            return np.zeros_like(mean), np.zeros_like(variance)

    def proposals(centre):
        acquisition = AttrsPI(xi=1e-302) if frozen == "attrs" else _FrozenXiPI(1e-302)
        study = Study(SPACE, surrogate="gp", acquisition=acquisition, seed=0, n_initial=4)
        for _ in range(10):
            trial = study.ask()
            x, y = trial.config["x"], trial.config["y"]
            study.tell(trial, 2.0**-1000 * (1.0 + (x - centre[0]) ** 2 + (y - centre[1]) ** 2))
        assert acquisition.xi == 1e-302
        return [tuple(t.config.values()) for t in study.trials[4:]]

    with caplog.at_level("WARNING", logger="ensembo.proposal"):
        assert proposals((1.0, -2.0)) != proposals((-3.0, 3.0))
    said = [r for r in caplog.records if "xi cannot be scaled" in r.getMessage()]
    assert len(said) == (1 if frozen == "property" else 0)


def test_an_xi_that_raises_is_not_read_at_ordinary_scales():
    class RaisingXi(_FrozenXiPI):
        @property
        def xi(self):
            raise ValueError("not configured")

        def __call__(self, mean, variance, best):
            return _FrozenXiPI(0.0)(mean, variance, best)

    study = Study(SPACE, surrogate="gp", acquisition=RaisingXi(0.0), seed=0, n_initial=2)
    study.optimize(lambda c: c["x"] ** 2 + c["y"] ** 2, n_trials=4)
    assert len(study.trials) == 4


def test_the_incumbent_stays_within_what_the_surrogate_models():
    """Losses near 1e-300 and a best of -1e10: the incumbent was scaled to -6e300 beside
    predictions clipped at -1e150, EI was infinite everywhere and the proposal arbitrary."""
    seen = {}

    class Grid:
        def maximize(self, surface, space, history, n, rng):
            configs = [{"x": float(x)} for x in np.linspace(-5, 5, 41)]
            scores = surface.score(space.encode(configs))
            seen["best"], seen["scores"] = surface.best, scores
            return [configs[int(np.argmax(scores))]]

    study = Study({"params": {"x": {"type": "float", "low": -5.0, "high": 5.0}}},
                  surrogate="gp", acquisition_optimizer=Grid(), seed=0, n_initial=1)
    for x, loss in [(-4, 3e-300), (-2, 5e-300), (0, 7e-300), (1, 2e-300), (2, -1e10)]:
        study.add({"x": float(x)}, loss)
    proposed = study.ask().config["x"]
    assert np.isfinite(seen["best"]) and np.all(np.isfinite(seen["scores"]))
    assert abs(proposed - 2.0) < 1.0
