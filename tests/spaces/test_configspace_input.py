"""A ConfigSpace ``ConfigurationSpace`` handed to ensembo directly (audit): every
construct a CASH user may pass is either searched as written or refused up front,
naming the hyperparameter or clause and what to write instead."""

from __future__ import annotations

import enum
import json
import re

import ConfigSpace as CS
import numpy as np
import pytest
from ConfigSpace import Configuration

import ensembo
from ensembo import spaces
from ensembo.errors import SpaceError


def _space(*items) -> CS.ConfigurationSpace:
    configspace = CS.ConfigurationSpace(seed=1)
    configspace.add(*items)
    return configspace


def _cash() -> CS.ConfigurationSpace:
    """Every supported construct at once: each hyperparameter kind, non-string choices,
    weights, nested and conjoined conditions, forbidden clauses and relations."""
    clf = CS.CategoricalHyperparameter("clf", ["svm", "rf", "knn"], weights=[2, 1, 1],
                                       default_value="rf")
    c = CS.NormalFloatHyperparameter("svm:C", mu=1, sigma=5, lower=1e-3, upper=1e3, log=True,
                                     default_value=1.0)
    kernel = CS.CategoricalHyperparameter("svm:kernel", ["rbf", "poly"])
    degree = CS.BetaIntegerHyperparameter("svm:degree", alpha=2, beta=5, lower=2, upper=6)
    trees = CS.UniformIntegerHyperparameter("rf:n", 10, 500, log=True, default_value=100)
    features = CS.CategoricalHyperparameter("rf:max_features", [None, "sqrt", 0.5])
    bootstrap = CS.CategoricalHyperparameter("rf:bootstrap", [True, False])
    samples = CS.UniformFloatHyperparameter("rf:max_samples", 0.1, 1.0)
    k = CS.OrdinalHyperparameter("knn:k", [1, 3, 5, 9], default_value=5)
    weights = CS.Constant("knn:weights", "distance")
    configspace = _space([clf, c, kernel, degree, trees, features, bootstrap, samples, k, weights])
    configspace.add(
        CS.EqualsCondition(c, clf, "svm"), CS.EqualsCondition(kernel, clf, "svm"),
        CS.EqualsCondition(degree, kernel, "poly"), CS.EqualsCondition(trees, clf, "rf"),
        CS.InCondition(features, clf, ["rf"]), CS.NotEqualsCondition(bootstrap, clf, "svm"),
        CS.AndConjunction(CS.EqualsCondition(samples, bootstrap, True),
                          CS.EqualsCondition(samples, clf, "rf")),
        CS.OrConjunction(CS.EqualsCondition(k, clf, "knn"), CS.GreaterThanCondition(k, trees, 400)),
        CS.EqualsCondition(weights, clf, "knn"),
    )
    configspace.add(
        CS.ForbiddenAndConjunction(CS.ForbiddenEqualsClause(kernel, "poly"),
                                   CS.ForbiddenGreaterThanClause(c, 100.0)),
        CS.ForbiddenAndConjunction(CS.ForbiddenEqualsClause(features, None),
                                   CS.ForbiddenInClause(bootstrap, [False])),
        CS.ForbiddenLessThanRelation(trees, degree),
    )
    return configspace


def _as_given(configspace, config) -> bool:
    """Whether ``config`` is valid in ``configspace`` with each value of its declared type
    (an int for an integer, the very choice for a categorical: None stays None)."""
    Configuration(configspace, values=config).check_valid_configuration()
    for name, value in config.items():
        hp = configspace[name]
        values = getattr(hp, "choices", getattr(hp, "sequence", None))
        if values is not None and not any(type(v) is type(value) and v == value for v in values):
            return False
        if isinstance(hp, CS.hyperparameters.IntegerHyperparameter) and type(value) is not int:
            return False
    return True


@pytest.mark.parametrize("surrogate", [None, "tpe", "rf", "gp"])
def test_every_supported_construct_is_searched_as_written(surrogate):
    configspace = _cash()
    seen = []
    study = ensembo.Study(configspace, surrogate=surrogate, n_initial=5, seed=0)
    study.optimize(lambda config: seen.append(config) or float(len(seen) % 3), n_trials=9)
    assert len(seen) == 9
    assert all(_as_given(configspace, config) for config in seen)


def _less_or_equal() -> CS.ConfigurationSpace:
    n = CS.UniformIntegerHyperparameter("n", 0, 10, default_value=5)
    x = CS.UniformFloatHyperparameter("x", 0.0, 1.0)
    return _space([n, x, CS.ForbiddenLessThanEqualsClause(n, 1)])


def test_a_less_or_equal_clause_is_kept_or_refused_naming_the_form_that_works():
    """ConfigSpace 1.2.0's vectorized ``n <= 1`` tests ``n >= 1``: sampling and every
    proposer let n = 0 through (19 of 20 proposals with ``rf``), and random search then
    failed mid-run on ConfigSpace's own check."""
    try:
        space = spaces.load(_less_or_equal())
    except SpaceError as error:
        assert str(error).startswith("space: n: Forbidden: n <= 1 is not applied as written")
        assert ("ForbiddenOrConjunction(ForbiddenLessThanClause(cs['n'], 1), "
                "ForbiddenEqualsClause(cs['n'], 1))") in str(error)
        return
    assert all(config["n"] > 1 for config in space.sample(300, seed=0))


def test_a_less_or_equal_clause_inside_a_conjunction_is_checked_too():
    configspace = _less_or_equal()
    clause = CS.ForbiddenAndConjunction(
        CS.ForbiddenLessThanEqualsClause(configspace["n"], 1),
        CS.ForbiddenGreaterThanClause(configspace["x"], 0.5),
    )
    configspace = _space([configspace["n"], configspace["x"], clause])
    try:
        space = spaces.load(configspace)
    except SpaceError as error:
        assert "Forbidden: n <= 1 is not applied as written" in str(error)
        return
    assert not any(c["n"] <= 1 and c["x"] > 0.5 for c in space.sample(300, seed=0))


def test_the_form_the_refusal_names_is_searched_as_written():
    n = CS.UniformIntegerHyperparameter("n", 0, 10, default_value=5)
    configspace = _space([n, CS.ForbiddenOrConjunction(CS.ForbiddenLessThanClause(n, 1),
                                                       CS.ForbiddenEqualsClause(n, 1))])
    seen = []
    ensembo.Study(configspace, surrogate="rf", n_initial=3, seed=0).optimize(
        lambda config: seen.append(config["n"]) or -config["n"], n_trials=8)
    assert min(seen) >= 2


@pytest.mark.parametrize("make", [CS.UniformIntegerHyperparameter,
                                  lambda name, low, high: CS.BetaIntegerHyperparameter(
                                      name, 2, 2, low, high)])
def test_an_integer_range_the_float_encoding_cannot_hold_is_refused_by_name(make):
    """Accepted from a ConfigSpace object (only a space file was checked): in
    [-2**53, 2**53] an enqueued 1 was encoded, and modelled, as 0."""
    with pytest.raises(SpaceError, match=r"^space: n\.high: 1\.153e\+18 is beyond ±2\*\*53"):
        spaces.load(_space(make("n", 0, 2**60)))
    with pytest.raises(SpaceError, match=r"^space: n: the range \[-9007199254740992, "
                                         r"9007199254740992\] is wider than 2\*\*53"):
        spaces.load(_space(make("n", -(2**53), 2**53)))
    assert spaces.load(_space(make("n", 0, 2**53))).configspace["n"].upper == 2**53


def test_a_configspace_object_with_an_infinite_bound_is_refused_by_name():
    configspace = CS.ConfigurationSpace()
    with np.errstate(over="ignore"):  # ConfigSpace's own rounding overflows
        configspace.add(CS.UniformFloatHyperparameter("scale", 0.0, 1e300, default_value=1.0))
    with pytest.raises(SpaceError, match=r"^space: scale: a bound is infinite \(0\.0, inf\)"):
        spaces.load(configspace)


class _Kind(enum.Enum):
    A = 1
    B = 2


@pytest.mark.parametrize(("hyperparameter", "shown"), [
    (CS.CategoricalHyperparameter("c", [(10,), (50, 50)]), "value (10,) is a tuple"),
    (CS.OrdinalHyperparameter("c", [1, (2, 3)]), "value (2, 3) is a tuple"),
    (CS.CategoricalHyperparameter("c", [_Kind.A, _Kind.B]), "value <_Kind.A: 1> is a _Kind"),
    (CS.CategoricalHyperparameter("c", [int, float]), "value <class 'int'> is a type"),
    (CS.Constant("c", frozenset({1})), "value frozenset({1}) is a frozenset"),
])
def test_a_value_a_study_cannot_store_is_refused_by_name(hyperparameter, shown):
    """A tuple choice came back from a stored study as a list, which the resumed space
    refused ("[10] is not a value it takes"); an object failed the first trial's record."""
    with pytest.raises(SpaceError, match=f"^space: c: {re.escape(shown)}"):
        spaces.load(_space(hyperparameter))


def test_numpy_choices_reopen_a_stored_study(tmp_path):
    """Choices from ``np.arange`` were stored as numbers, then reopening the study with
    the same space failed in json: "Object of type int64 is not JSON serializable"."""
    def configspace():
        return _space(CS.CategoricalHyperparameter("c", np.arange(1, 5)),
                      CS.OrdinalHyperparameter("o", list(np.array([0.1, 1.0]))))

    json.dumps(spaces.load(configspace()).definition())
    path = tmp_path / "study.db"
    for _ in range(2):
        with ensembo.Study(configspace(), surrogate="rf", n_initial=2, storage=path) as study:
            study.optimize(lambda config: float(config["c"]), n_trials=2)
    values = [trial.config["c"] for trial in ensembo.Study.load(path).trials]
    assert len(values) == 4 and all(type(value) is int for value in values)


@pytest.mark.parametrize(("hyperparameter", "path", "message"), [
    (CS.UniformFloatHyperparameter("x", 0, 1, meta={"q": 0}), "x.meta.q",
     "a step is a number in (0, 1.0], got 0"),
    (CS.UniformFloatHyperparameter("x", 0, 1, meta={"q": 5}), "x.meta.q",
     "a step is a number in (0, 1.0], got 5"),
    (CS.UniformFloatHyperparameter("x", 0, 1, meta={"q": "a"}), "x.meta.q",
     "a step is a number in (0, 1.0], got 'a'"),
    (CS.UniformIntegerHyperparameter("x", 0, 10, meta={"q": 0.5}), "x.meta.q",
     "a step is an integer in (0, 10], got 0.5"),
    (CS.CategoricalHyperparameter("x", ["a", "b"], meta={"q": 2}), "x.meta.q",
     "a step applies to a float or an integer, not a CategoricalHyperparameter"),
    (CS.UniformIntegerHyperparameter("x", 0, 10, default_value=5, meta={"q": 3}),
     "x.default_value",
     "the default 5 is not on the grid 0 + k * 3; the nearest grid values are 3 and 6"),
    (CS.UniformFloatHyperparameter("x", 0, 1, meta="seconds"), "x.meta",
     "meta is a mapping or None, got 'seconds'"),
])
def test_a_step_or_meta_ensembo_cannot_use_is_refused_by_name(hyperparameter, path, message):
    """A step (``meta["q"]``) is checked as a space file's ``q``: 0 failed with a
    ZeroDivisionError deep in sampling, one on a categorical with an AttributeError,
    5 on [0, 1] left one value to search, and the default 5 off the grid was run."""
    with pytest.raises(SpaceError) as raised:
        spaces.load(_space(hyperparameter))
    assert str(raised.value).startswith(f"space: {path}: {message}")


def test_every_problem_is_reported_at_once():
    configspace = _space([CS.UniformIntegerHyperparameter("n", 0, 2**60),
                          CS.CategoricalHyperparameter("c", [(1,), (2,)]),
                          CS.UniformFloatHyperparameter("x", 0, 1, meta={"q": 0})])
    with pytest.raises(SpaceError) as raised:
        spaces.load(configspace)
    assert [line.split(":")[1].strip() for line in str(raised.value).splitlines()] == [
        "c", "n.high", "x.meta.q"]
