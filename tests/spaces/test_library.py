"""Every built-in library space: loads by name, validates, round-trips through
ConfigSpace and ``definition()``, samples 1,000 valid configurations that encode and
decode losslessly; executable spaces build an estimator for every sample and a subset
fits on a tiny dataset (all of them under ``-m slow``)."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
from ConfigSpace import ConfigurationSpace

from ensembo import spaces
from ensembo.registry import registry
from ensembo.spaces._hooks import LIBRARY

LIBRARY_NAMES = sorted(p.stem for p in LIBRARY.glob("*.yaml"))
REQUIRED = {
    "svm",
    "random-forest",
    "cash-levesque",
    "cash-classification",
    "gradient-boosting-classifier",
    "svr",
    "gradient-boosting-regressor",
    "mlp",
    "svm-kernels",
    "cash-regression",
    "decision-tree-regressor",
    "mlp-regressor",
}
N_SAMPLES = 1000
N_FIT_CASH = 30  # CASH spaces: many learners, so a larger subset
N_FIT = 6
N_ROUND_TRIP = N_SAMPLES


def is_regression(name: str) -> bool:
    return name in ("svr", "cash-regression", "elastic-net") or name.endswith("regressor")


@pytest.fixture(scope="module", params=LIBRARY_NAMES)
def library_space(request):
    return spaces.load(request.param)


@pytest.fixture(scope="module")
def samples(library_space):
    return library_space.sample(N_SAMPLES, seed=7)


def test_required_spaces_are_in_the_library_and_registered():
    assert REQUIRED <= set(LIBRARY_NAMES)
    assert set(LIBRARY_NAMES) <= set(registry().names("space"))


@pytest.mark.parametrize("name", LIBRARY_NAMES)
def test_library_file_validates_without_problems(name):
    assert spaces.problems_in(LIBRARY / f"{name}.yaml") == []


def test_round_trip_through_configspace(library_space):
    configspace = library_space.to_configspace()
    serialized = configspace.to_serialized_dict()
    restored = ConfigurationSpace.from_serialized_dict(json.loads(json.dumps(serialized)))
    assert restored == configspace
    imported = spaces.load(restored)
    assert imported.to_configspace() == configspace
    for name in library_space.names:  # imputation rules travel in the ConfigSpace meta
        assert imported.imputation_rule(name) == library_space.imputation_rule(name)


def test_definition_round_trips_through_json(library_space):
    definition = library_space.definition()
    stored = json.loads(json.dumps(definition, sort_keys=True))  # as the SQLite storage does
    assert stored == definition
    restored = spaces.load(stored)
    assert restored.definition() == definition
    assert restored.to_configspace() == library_space.to_configspace()
    assert restored.is_executable == library_space.is_executable


def test_samples_are_valid_and_distinct(library_space, samples):
    assert len(samples) == N_SAMPLES
    for config in samples:
        assert library_space.validate(config) == config
    if library_space.dimension > 1:
        assert len({json.dumps(c, sort_keys=True) for c in samples}) > N_SAMPLES // 2


def _same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return a == b


@pytest.mark.parametrize("encoding", ["index", "onehot"])
def test_encode_decode_is_lossless_on_active_values(library_space, samples, encoding):
    space = library_space.with_encoding(encoding)
    batch = space.encode(samples[:N_ROUND_TRIP])
    assert batch.values.shape == (N_ROUND_TRIP, space.encoded_dimension)
    assert np.all((batch.values >= 0) & (batch.values <= 1))
    decoded = space.decode(batch.values)
    for original, back in zip(samples[:N_ROUND_TRIP], decoded, strict=False):
        assert original.keys() == back.keys()
        assert all(_same(original[k], back[k]) for k in original)


def test_every_sampled_configuration_of_an_executable_space_builds(library_space, samples):
    from sklearn.base import BaseEstimator

    if not library_space.is_executable:
        pytest.skip("not executable")
    for config in samples:
        assert isinstance(library_space.build(config), BaseEstimator)


def _fit_all(space, configs, data):
    X, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for config in configs:
            model = space.build(config, random_state=0)
            model.fit(X, y)
            assert model.predict(X).shape == (len(y),)


def test_a_subset_of_sampled_configurations_fits(
    library_space, samples, tiny_classification, tiny_regression
):
    data = tiny_regression if is_regression(library_space.name) else tiny_classification
    n_fit = N_FIT_CASH if library_space.name.startswith("cash") else N_FIT
    _fit_all(library_space, samples[:n_fit], data)


@pytest.mark.slow
def test_every_sampled_configuration_fits(
    library_space, samples, tiny_classification, tiny_regression
):
    data = tiny_regression if is_regression(library_space.name) else tiny_classification
    _fit_all(library_space, samples, data)


@pytest.mark.parametrize("name", [n for n in LIBRARY_NAMES if n.startswith("cash")])
def test_cash_spaces_fit_mixed_numeric_categorical_data_with_missing_values(
    name, tiny_classification, tiny_regression
):
    X, y = tiny_regression if is_regression(name) else tiny_classification
    X = X.copy()
    rng = np.random.default_rng(3)
    X[:, 3] = rng.integers(0, 4, size=len(X)).astype(float)  # a categorical column, coded
    X[::9, 3] = np.nan
    space = spaces.load(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for config in space.sample(12, seed=5):
            model = space.build(config, categorical_features=[False, False, False, True, False])
            model.fit(X, y)
            assert model.predict(X).shape == (len(y),)


def _calls_in_comments(name: str) -> list[str]:
    """The ``ensembo.spaces.load(...)`` calls (with any chained method) a library file's
    comments tell the reader to make."""
    import re

    lines = (LIBRARY / f"{name}.yaml").read_text(encoding="utf-8").splitlines()
    comments = " ".join(line.split("#", 1)[1].strip() for line in lines if "#" in line)
    return re.findall(r"ensembo\.spaces\.load\([^)]*\)(?:\.\w+\([^)]*\))*", comments)


def test_calls_written_in_library_comments_run():
    """svm-kernels.yaml said to load with ``spaces.load("svm-kernels", impute=...)`` to
    run without imputation; that call is refused (``impute`` takes a mapping)."""
    import ensembo

    calls = {name: _calls_in_comments(name) for name in LIBRARY_NAMES}
    assert calls["svm-kernels"], "svm-kernels.yaml says how to load it without imputation"
    for name, written in calls.items():
        for call in written:
            space = eval(call, {"ensembo": ensembo})  # our own library file
            assert space.name == name, call
    unimputed = eval(calls["svm-kernels"][0], {"ensembo": ensembo})
    assert {unimputed.imputation_rule(n) for n in ("gamma", "coef0", "kernel:poly:degree")} == {
        "none"
    }


def test_svm_kernels_caps_libsvm_iterations():
    """Unbounded (scikit-learn's max_iter=-1), a poly configuration of this space fitted
    one iris column for over 300 s, and a fit cannot be interrupted (library audit)."""
    space = spaces.load("svm-kernels")
    config = {"C": 7506.4, "kernel": "poly", "coef0": 57.77, "kernel:poly:degree": 8}
    svc = space.build(config).steps[-1][1]
    assert 0 < svc.max_iter <= 10**7
