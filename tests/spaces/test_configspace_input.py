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
    (CS.UniformFloatHyperparameter("x", 0, 1, meta="seconds"), "x.meta",
     "meta is a mapping or None, got 'seconds'"),
])
def test_a_step_or_meta_ensembo_cannot_use_is_refused_by_name(hyperparameter, path, message):
    """A step (``meta["q"]``) is checked as a space file's ``q``: 0 failed with a
    ZeroDivisionError deep in sampling, one on a categorical with an AttributeError,
    and 5 on [0, 1] left one value to search."""
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


@pytest.mark.parametrize(("make", "default"), [
    (lambda: CS.UniformIntegerHyperparameter("x", 0, 10, meta={"q": 2}), 4),  # implied: 5
    (lambda: CS.UniformIntegerHyperparameter("x", 0, 10, default_value=5, meta={"q": 3}), 6),
    (lambda: CS.UniformFloatHyperparameter("x", 1e-4, 0.1, log=True, meta={"q": 1e-4}), 0.0032),
    (lambda: CS.NormalIntegerHyperparameter("x", mu=5, sigma=2, lower=0, upper=10,
                                            meta={"q": 4}), 4),
])
def test_a_stepped_default_off_its_grid_is_moved_onto_it(make, default):
    """ConfigSpace implies a default (the midpoint, 5 here) that was refused as off the
    grid, so the natural stepped integer, and every study stored with one, could not be
    loaded; before that refusal the off-grid default was run as the first trial."""
    configspace = _space(make())
    space = spaces.load(configspace)
    assert space.default() == {"x": default}
    assert space.configspace["x"].default_value == default
    assert configspace["x"].default_value != default  # the object given is left as it was
    assert spaces.load(space.definition()).default() == {"x": default}
    study = ensembo.Study(configspace, initial_design="default", n_initial=2, seed=0)
    seen = []
    study.optimize(lambda config: seen.append(config["x"]) or 0.0, n_trials=1)
    assert seen == [default]


def test_a_stepped_default_a_forbidden_clause_refuses_on_the_grid_is_refused_by_name():
    x = CS.UniformIntegerHyperparameter("x", 0, 10, meta={"q": 2})
    with pytest.raises(SpaceError) as raised:
        spaces.load(_space(x, CS.ForbiddenEqualsClause(x, 4)))
    assert str(raised.value).startswith(
        "space: x.default_value: the default 5 is not on the grid 0 + k * 2; the nearest grid "
        "values are 4 and 6; moved onto it (4) it is refused by ConfigSpace: ")


def _step_sources(low, high, q, integer=False):
    """The same step given as a ConfigSpace ``meta["q"]`` and as a space file's ``q``."""
    make = CS.UniformIntegerHyperparameter if integer else CS.UniformFloatHyperparameter
    kind = "int" if integer else "float"
    return [_space(make("x", low, high, default_value=low, meta={"q": q})),
            {"name": "space", "params": {"x": {"type": kind, "low": low, "high": high, "q": q,
                                               "default": low}}}]


@pytest.mark.parametrize(("low", "high", "q", "values"), [
    (0.1, 0.3, 0.2, [0.1, 0.3]),  # 0.3 - 0.1 is 0.19999999999999998
    (0.1, 0.4, 0.3, [0.1, 0.4]),
    (0.0, 1.0, 1.0 + 5e-10, [0.0, 1.0]),  # beyond the width by less than the tolerance
])
def test_a_step_as_wide_as_the_range_up_to_rounding_is_taken_by_both(low, high, q, values):
    """Refused from a ConfigSpace object and a space file alike: "a step is a number in
    (0, 0.19999999999999998], got 0.2"; ``last_point`` counts the step as one."""
    for source in _step_sources(low, high, q):
        space = spaces.load(source)
        assert sorted({config["x"] for config in space.sample(60, seed=0)}) == values


def test_a_step_wider_than_the_range_is_refused_by_both_alike():
    messages = []
    for source in _step_sources(0.1, 0.3, 0.2001):
        with pytest.raises(SpaceError) as raised:
            spaces.load(source)
        messages.append(str(raised.value).split(": ", 2)[2])
    assert messages == ["a step is a number in (0, 0.2], got 0.2001"] * 2


def test_a_whole_float_step_on_an_integer_is_the_integer_for_both():
    """``meta={"q": 2.0}`` on an integer was refused ("a step is an integer in (0, 10],
    got 2.0"), as was ``q: 2.0`` in a space file ("'q' must be an integer")."""
    for source in _step_sources(0, 10, 2.0, integer=True):
        space = spaces.load(source)
        configs = space.sample(60, seed=0)
        assert sorted({config["x"] for config in configs}) == [0, 2, 4, 6, 8, 10]
        assert all(type(config["x"]) is int for config in configs)
        assert space.validate({"x": 5}) == {"x": 4}
    for source in _step_sources(0, 10, 2.5, integer=True):
        with pytest.raises(SpaceError,
                           match=r"x(\.meta)?\.q: a step is an integer in \(0, 10\], got 2\.5$"):
            spaces.load(source)


class _Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class _Name(enum.StrEnum):
    A = "a"
    B = "b"


def test_int_and_str_enum_choices_reach_the_objective_as_plain_values():
    """Kept (they are an int and a str), and sampled ones came out plain, but the
    default configuration, the ``default`` design's first trial, held the members."""
    configspace = _space(CS.CategoricalHyperparameter("level", list(_Level)),
                         CS.CategoricalHyperparameter("name", list(_Name)))
    seen = []
    study = ensembo.Study(configspace, initial_design="default", n_initial=2, seed=0)
    study.optimize(lambda config: seen.append(config) or 0.0, n_trials=3)
    assert seen[0] == {"level": 1, "name": "a"}
    assert {type(v) for config in seen for v in config.values()} == {int, str}
