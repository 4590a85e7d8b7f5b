"""The surrogate conformance checks as a plugin author meets them: the study check is
not emptied or observed by other installed plugins, a batch overwritten in ``fit`` is
caught, and a registered factory that cannot be built fails "build", not "protocol"."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from ensembo import hookimpl
from ensembo.conformance import ConformanceError, check_surrogate
from ensembo.registry import Registry

STUDY_CHECK = "in a study, conditional space"


class MeanSurrogate:
    """Predicts the mean of the targets, with a variance growing away from the data."""

    def fit(self, batch, y, rng):
        self.values = np.nan_to_num(batch.values, nan=0.5).copy()
        self.mean = float(np.mean(y))

    def predict(self, batch):
        values = np.nan_to_num(batch.values, nan=0.5)
        distance = np.sqrt(((values[:, None, :] - self.values[None]) ** 2).sum(-1)).min(1)
        return np.full(len(batch), self.mean), distance + 1e-3


class BrokenInAStudy(MeanSurrogate):
    """Fine on the synthetic fits; a study's acquisition optimizer scores many more
    candidates at once, and there it raises."""

    def predict(self, batch):
        if len(batch) > 100:
            raise RuntimeError("broken in a study")
        return super().predict(batch)


class OtherPlugin:
    """Another installed distribution's lifecycle hooks: one stopping every study at
    once (e.g. "stop when the target is reached"), and one recording study ends."""

    def __init__(self):
        self.finished = 0

    @hookimpl
    def ensembo_should_stop(self, study):
        return True

    @hookimpl
    def ensembo_study_finished(self, study):
        self.finished += 1


class RegistersSurrogates:
    @hookimpl
    def ensembo_add_surrogates(self):
        return {"broken": BrokenInAStudy, "mean": MeanSurrogate}


def _registry(*others) -> Registry:
    plugins = {"mine": RegistersSurrogates()}
    plugins.update({f"other-{i}": other for i, other in enumerate(others)})
    return Registry.from_plugins(plugins, builtins=True)


def _failures(surrogate, registry=None) -> dict[str, str]:
    with pytest.raises(ConformanceError) as caught:
        check_surrogate(surrogate, registry=registry)
    return dict(caught.value.failures)


@pytest.mark.parametrize("with_stopper", [False, True])
def test_another_plugin_stopping_studies_does_not_pass_a_broken_surrogate(with_stopper):
    """The study check asserted only that every trial ran completed: with a plugin's
    ``ensembo_should_stop`` returning True no trial ran, and the check passed."""
    registry = _registry(OtherPlugin()) if with_stopper else _registry()
    assert "broken in a study" in _failures("broken", registry)[STUDY_CHECK]


def test_the_checks_fire_no_installed_plugins_lifecycle_hooks():
    """``ensembo plugins NAME --check`` called every installed ensembo_study_finished."""
    other = OtherPlugin()
    passed = check_surrogate("mean", registry=_registry(other))
    assert STUDY_CHECK in passed
    assert other.finished == 0


class OverwritesTheBatch(MeanSurrogate):
    def fit(self, batch, y, rng):
        super().fit(batch, y, rng)
        batch.values[:] = 0.5


def test_a_batch_overwritten_in_fit_fails_inputs_left_unchanged():
    """The check reused a batch earlier checks had fit to, already overwritten, so
    the snapshot it took matched."""
    failures = _failures(OverwritesTheBatch)
    assert "modified the batch" in failures["inputs left unchanged, flat space"]
    assert "modified the batch" in failures["inputs left unchanged, conditional space"]


class NeedsScale(MeanSurrogate):
    def __init__(self, scale):
        self.scale = scale


class NotASurrogate:
    pass


class RegistersUnbuildable:
    @hookimpl
    def ensembo_add_surrogates(self):
        return {"needs-scale": NeedsScale, "misspelt": functools.partial(NeedsScale, scael=2),
                "not-a-surrogate": NotASurrogate}


@pytest.mark.parametrize("name", ["needs-scale", "misspelt"])
def test_a_registered_factory_that_cannot_be_built_fails_build(name):
    """docs/plugin-authoring.md §7: a factory raising while building fails "build"; a
    registered one refusing no options (one is required) was filed under "protocol"."""
    registry = Registry.from_plugins({"mine": RegistersUnbuildable()}, builtins=True)
    failures = _failures(name, registry)
    assert list(failures) == ["build"]
    assert "scale" in failures["build"] or "scael" in failures["build"]


def test_a_registered_factory_building_no_surrogate_still_fails_protocol():
    registry = Registry.from_plugins({"mine": RegistersUnbuildable()}, builtins=True)
    assert list(_failures("not-a-surrogate", registry)) == ["protocol"]
