"""Edge cases of the space DSL: stepped sampling, renames and packs onto existing names,
forbidden decodes, show(), bool switches, grids, int bounds, names and messages."""

from __future__ import annotations

import numpy as np
import pytest

from ensembo import spaces
from ensembo.errors import SpaceError


def test_children_activated_by_a_snapped_parent_are_drawn_from_their_prior():
    """Snapping used to activate children drawn inactive, which then took their default."""
    space = spaces.load({"params": {
        "n": {"type": "int", "low": 0, "high": 10, "q": 5},
        "x": {"type": "float", "low": 0, "high": 1, "default": 0.25, "when": {"n": {"gt": 5}}},
    }})
    configs = space.sample(2000, seed=0)
    xs = [c["x"] for c in configs if "x" in c]
    assert 500 < len(xs) < 850  # n == 10 in a third of the draws
    assert sum(x == 0.25 for x in xs) <= 1
    assert all(("x" in c) == (c["n"] == 10) for c in configs)


def test_stepped_sampling_uses_the_full_candidate_budget_and_names_the_clauses():
    """Stepped spaces gave up after 100 candidates, with a message naming no clause."""
    rare = spaces.load({
        "params": {f"n{i}": {"type": "int", "low": 0, "high": 10, "q": 5, "default": 5}
                   for i in range(5)},
        "forbidden": [{f"n{i}": [0, 10]} for i in range(5)],
    })
    for seed in range(10):
        assert rare.sample(1, seed=seed) == [{f"n{i}": 5 for i in range(5)}]
    nothing = spaces.load({
        "name": "nothing",
        "params": {"a": {"type": "float", "low": 0, "high": 1},
                   "b": {"type": "float", "low": 0, "high": 1},
                   "s": {"type": "int", "low": 0, "high": 10, "q": 5}},
        "forbidden": [{"relation": "a < b"}, {"relation": "a > b"}],
    })
    with pytest.raises(SpaceError, match=r"nothing.*gave up.*a < b"):
        nothing.sample(3, seed=0)


def _problems(document) -> str:
    with pytest.raises(SpaceError) as caught:
        spaces.load(document)
    return str(caught.value)


def test_a_rename_onto_another_hyperparameter_is_refused():
    """``rename: {tau: gamma}`` next to a searched ``gamma`` overwrote it silently."""
    params = {"gamma": {"type": "float", "low": 0.001, "high": 1, "default": 0.01},
              "tau": {"type": "float", "low": 2, "high": 3, "default": 2.5}}
    problems = _problems({"params": params, "estimator": "sklearn.svm.SVC",
                          "rename": {"tau": "gamma"}})
    assert "rename.tau: 'gamma' is already a hyperparameter here" in problems
    both = {"params": {**params, "C": {"type": "float", "low": 1, "high": 2}},
            "estimator": "sklearn.svm.SVC", "rename": {"tau": "coef0", "C": "coef0"}}
    assert "'tau' is renamed to 'coef0' too" in _problems(both)
    swapped = {"params": params, "estimator": "sklearn.svm.SVC",
               "rename": {"tau": "gamma", "gamma": "coef0"}}
    assert spaces.load(swapped).plan(spaces.load(swapped).default()).steps[0][1].arguments == (
        ("coef0", 0.01), ("gamma", 2.5))


def test_a_pack_onto_another_hyperparameter_is_refused():
    """``pack: {alpha: [a, b]}`` next to a searched ``alpha`` dropped it silently."""
    problems = _problems({
        "params": {"alpha": {"type": "float", "low": 0.1, "high": 10, "default": 1.0},
                   "a": {"type": "int", "low": 1, "high": 5},
                   "b": {"type": "int", "low": 1, "high": 5}},
        "estimator": "sklearn.neural_network.MLPClassifier", "pack": {"alpha": ["a", "b"]}})
    assert "pack.alpha: 'alpha' is already a hyperparameter here" in problems


def test_decode_refuses_a_forbidden_configuration_naming_the_clause():
    """``decode`` handed out configurations that ``from_vectors`` and ``is_valid`` refuse."""
    space = spaces.load({"params": {
        "k": {"type": "categorical", "choices": ["a", "b"], "default": "a"},
        "m": {"type": "categorical", "choices": ["x", "y"], "default": "x"}},
        "forbidden": [{"k": "b", "m": "y"}]})
    assert space.decode(np.array([[1.0, 0.0]])) == [{"k": "b", "m": "x"}]
    with pytest.raises(SpaceError, match=r"row 1, \{'k': 'b', 'm': 'y'\}.*forbidden.*k == 'b'"):
        space.decode(np.array([[0.0, 1.0], [1.0, 1.0]]))


def test_show_lists_children_of_non_categorical_parents_of_imported_spaces():
    """Only categorical choices are drawn as branches; others were never printed."""
    from ConfigSpace import (
        ConfigurationSpace,
        EqualsCondition,
        Float,
        Integer,
        OrdinalHyperparameter,
    )

    cs = ConfigurationSpace(name="imported")
    size, n = OrdinalHyperparameter("size", ["s", "m", "l"]), Integer("n", (1, 3))
    lr, x = Float("lr", (1e-4, 1), log=True), Float("x", (0, 1))
    cs.add([size, n, lr, x])
    cs.add([EqualsCondition(lr, size, "l"), EqualsCondition(x, n, 2)])
    text = spaces.load(cs).show()
    assert "  lr: float [0.0001, 1] log, default 0.01, impute midpoint, when size == 'l'" in text
    assert "  x: float [0, 1], default 0.5, impute midpoint, when n == 2" in text


@pytest.mark.parametrize("true, false", [("true", "false"), (True, False)])
def test_a_bool_switches_estimators_with_options_true_and_false(true, false):
    """Options were compared with Python's ``str(True)``, so ``true:`` was refused."""
    space = spaces.load({"params": {"fast": {"type": "bool"}}, "estimator": {
        "by": "fast", "options": {true: "sklearn.tree.DecisionTreeClassifier",
                                  false: "sklearn.naive_bayes.GaussianNB"}}})
    assert type(space.build({"fast": True})).__name__ == "DecisionTreeClassifier"
    assert type(space.build({"fast": False})).__name__ == "GaussianNB"


def test_a_wrong_switch_lists_the_values_as_written():
    problems = _problems({"params": {"fast": {"type": "bool"}}, "estimator": {
        "by": "fast", "options": {"yes": "sklearn.naive_bayes.GaussianNB"}}})
    expected = "options must cover exactly the values of 'fast': ['false', 'true']"
    assert f"estimator.options: {expected}" in problems


def test_high_off_the_grid_is_neither_offered_nor_snapped_to():
    """The off-grid message offered ``high`` (10 with ``q: 3``), which is refused."""
    space = spaces.load({"params": {"n": {"type": "int", "low": 0, "high": 10, "q": 3},
                                    "m": {"type": "int", "low": 0, "high": 10, "q": 6}}})
    with pytest.raises(SpaceError, match=r"n: 10 is not on the grid 0 \+ k \* 3; the nearest "
                                         r"grid value is 9$"):
        space.validate({"n": 10, "m": 0}, snap=False)
    with pytest.raises(SpaceError, match=r"m: 10 is not on the grid.*grid value is 6$"):
        space.validate({"n": 0, "m": 10}, snap=False)
    assert space.validate({"n": 10, "m": 10}) == {"n": 9, "m": 6}


@pytest.mark.parametrize("op, bound, active", [
    ("ge", 2.5, set(range(3, 11))), ("gt", 2.5, set(range(3, 11))),
    ("le", 2.5, {1, 2}), ("lt", 2.5, {1, 2}), ("ge", 0.5, set(range(1, 11))),
])
def test_a_fractional_bound_on_an_int_parent_means_the_integer_bound(op, bound, active):
    """ConfigSpace refused ``n >= 2.5`` on an int, saying 2.5 is not in [1, 10]."""
    space = spaces.load({"params": {
        "n": {"type": "int", "low": 1, "high": 10},
        "x": {"type": "float", "low": 0, "high": 1, "when": {"n": {op: bound}}}}})
    configs = space.sample(500, seed=0)
    assert {c["n"] for c in configs if "x" in c} == active
    assert all(("x" in c) == (c["n"] in active) for c in configs)


def test_a_fractional_value_in_an_int_membership_says_it_needs_whole_numbers():
    problems = _problems({"params": {
        "n": {"type": "int", "low": 1, "high": 10},
        "x": {"type": "float", "low": 0, "high": 1, "when": {"n": {"in": [2.5, 3]}}}}})
    assert "params.x.when.n.in: 'n' is an integer in [1, 10]: 'in' needs whole numbers" in problems


def test_imputation_given_through_the_api_gets_the_documents_help():
    """A mistyped rule became a fixed value, and a short name got no flat-name hint."""
    with pytest.raises(SpaceError, match=r"C: unknown rule 'Midpoint'.*did you mean 'midpoint'"):
        spaces.load("svm-kernels", impute={"C": "Midpoint"})
    with pytest.raises(SpaceError, match=r"unknown rule 'Lower'.*did you mean 'lower'"):
        spaces.load("svm-kernels").with_imputation("Lower")
    with pytest.raises(SpaceError, match=r"\['degree'\]; 'degree' may mean kernel:poly:degree"):
        spaces.load("svm-kernels", impute={"degree": "lower"})
    space = spaces.load("svm-kernels", impute={"kernel": "rbf"})
    assert space.imputation_rule("kernel") == {"value": "rbf"}


@pytest.mark.parametrize("name", ["any", "all"])
def test_any_and_all_cannot_name_a_hyperparameter(name):
    """``when`` reads them as junctions, so such a hyperparameter could not be referenced."""
    problems = _problems({"params": {name: {"type": "categorical", "choices": ["a", "b"]}}})
    assert f"params.{name}: {name!r} cannot name a hyperparameter" in problems


def test_messages_show_values_as_the_user_wrote_them():
    """A null default got no quoting hint; an inactive 0.1 showed as 0.10000000000000006."""
    problems = _problems({"params": {"c": {"type": "choice", "default": None,
                                           "options": {"null": {}, "a": {}}}}})
    assert ("params.c.default: default null is not one of ['null', 'a'] "
            '(the option null is named "null": quote it)') in problems
    with pytest.raises(SpaceError, match=r"'gamma' has a value \(0\.1\) but is not active"):
        spaces.load("svm-kernels").validate({"C": 1.0, "kernel": "linear", "gamma": 0.1})


def _ordinal_space(sequence, condition):
    return {"params": {"size": {"type": "ordinal", "sequence": sequence},
                       "x": {"type": "float", "low": 0, "high": 1, "when": {"size": condition}}}}


def test_an_ordinal_comparison_that_admits_nothing_is_never_active():
    """Comparisons on ordinals were not checked: ``size > 4`` on [1, 2, 4] never held."""
    problems = _problems(_ordinal_space([1, 2, 4], {"gt": 4}))
    assert "params.x: can never be active: its 'when' admits no value of 'size'" in problems


def test_string_ordinals_compare_by_position():
    """``{size: {gt: s}}`` was refused with "'gt' needs a number"; ConfigSpace orders them."""
    space = spaces.load(_ordinal_space(["s", "m", "l"], {"gt": "s"}))
    configs = space.sample(200, seed=0)
    assert {c["size"] for c in configs if "x" in c} == {"m", "l"}
    assert all(("x" in c) == (c["size"] != "s") for c in configs)


def test_a_forbidden_clause_that_when_makes_impossible_is_refused():
    """Only options were followed: a clause on ``kernel: linear`` and ``gamma``, active
    only under ``kernel: rbf``, was accepted and forbade nothing."""
    problems = _problems({"params": {
        "kernel": {"type": "categorical", "choices": ["linear", "rbf"]},
        "gamma": {"type": "float", "low": 0.1, "high": 1, "default": 0.5,
                  "when": {"kernel": "rbf"}}},
        "forbidden": [{"kernel": "linear", "gamma": 0.5}]})
    assert ("forbidden[0]: this combination can never occur: the clause asks kernel in "
            "['linear'], but gamma is active only when kernel is in ['rbf']") in problems


def test_a_clause_when_allows_is_kept():
    space = spaces.load({"params": {
        "kernel": {"type": "categorical", "choices": ["linear", "rbf"]},
        "gamma": {"type": "float", "low": 0.1, "high": 1, "default": 0.5,
                  "when": {"kernel": "rbf"}}},
        "forbidden": [{"kernel": "rbf", "gamma": 0.1}]})
    assert len(space.configspace.forbidden_clauses) == 1


@pytest.mark.parametrize("config, problem", [
    ({"C": 1e9, "kernel": "linear"}, "'C' 1000000000.0 is out of its range"),
    ({"C": 1.0, "kernel": "linear", "gamma": 0.1}, "'gamma' has a value (0.1) but is not active"),
    ({"C": 1.0, "kernel": "rbf"}, "'gamma' is active in it but has no value"),
])
def test_encode_refuses_what_it_cannot_encode_faithfully(config, problem):
    """``encode`` gave values outside [0, 1] and counted inactive values as active."""
    space = spaces.load("svm-kernels")
    with pytest.raises(SpaceError, match="cannot encode configuration 1") as caught:
        space.encode([space.default(), config])
    assert problem in str(caught.value)


def test_encode_still_takes_what_validate_gives():
    space = spaces.load("svm-kernels")
    configs = space.sample(50, seed=0)
    batch = space.encode(configs)
    assert np.nanmin(batch.values) >= 0 and np.nanmax(batch.values) <= 1


def test_from_vectors_reads_conditions_on_snapped_values():
    """A child activated only once its stepped parent snapped took its default (0.25),
    not the value in the vector; one deactivated by the snap made the vector invalid."""
    space = spaces.load({"params": {
        "n": {"type": "float", "low": 0, "high": 10, "q": 5},
        "x": {"type": "float", "low": 0, "high": 1, "default": 0.25, "when": {"n": {"gt": 8}}},
    }})
    to_vector = space.hyperparameter("n").to_vector
    assert space.from_vectors(np.array([[to_vector(7.6), 0.9]])) == [{"n": 10.0, "x": 0.9}]
    with pytest.raises(SpaceError, match="active but has no value"):
        space.from_vectors(np.array([[to_vector(7.6), np.nan]]))
    falls = spaces.load({"params": {
        "n": {"type": "int", "low": 0, "high": 10, "q": 5},
        "x": {"type": "float", "low": 0, "high": 1, "when": {"n": {"gt": 5}}},
    }})
    seven = falls.hyperparameter("n").to_vector(7)
    assert falls.from_vectors(np.array([[seven, np.nan], [seven, 0.5]])) == [{"n": 5}] * 2
