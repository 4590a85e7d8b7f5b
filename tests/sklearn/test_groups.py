"""``fit(X, y, groups=...)``: group splitters get the groups, other schemes refuse them.

The spy trees below remember the rows they were trained on (column 0 of X is the row
number), so the tests read the folds the search really used from the fitted models.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification, make_regression
from sklearn.model_selection import GroupKFold, KFold, LeaveOneGroupOut
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from ensembo.errors import ExperimentError, StorageError
from ensembo.ml import validation_scheme
from ensembo.sklearn import EnsemboClassifier, EnsemboRegressor

TreeDepthSpace = sys.modules["tree_spaces"].TreeDepthSpace  # imported by conftest.py

N_GROUPS = 9
GROUPS = np.repeat(np.arange(N_GROUPS) * 10, 10)  # 9 groups of 10 rows, labels 0, 10, .., 80


def _remember_rows(model, X):
    model.rows_seen_ = np.asarray(X)[:, 0].astype(int)


class _SpyClassifier(DecisionTreeClassifier):
    def fit(self, X, y, sample_weight=None, check_input=True):
        _remember_rows(self, X)
        return super().fit(X, y, sample_weight=sample_weight, check_input=check_input)


class _SpyRegressor(DecisionTreeRegressor):
    def fit(self, X, y, sample_weight=None, check_input=True):
        _remember_rows(self, X)
        return super().fit(X, y, sample_weight=sample_weight, check_input=check_input)


class _SpySpace(TreeDepthSpace):
    def build(self, config, categorical_features=None, random_state=None):
        tree = _SpyRegressor if self.regression else _SpyClassifier
        return tree(max_depth=config["max_depth"], random_state=0)


def _data(regression=False):
    """90 rows whose column 0 is the row number."""
    if regression:
        X, y = make_regression(n_samples=90, n_features=3, noise=1.0, random_state=0)
    else:
        X, y = make_classification(n_samples=90, n_features=3, n_redundant=0, random_state=0)
    return np.column_stack([np.arange(len(y)), X]), y


def _search(regression=False, **params):
    defaults = {"n_trials": 3, "surrogate": None, "ensemble": "best"}
    estimator = EnsemboRegressor if regression else EnsemboClassifier
    return estimator(_SpySpace(regression=regression), **{**defaults, **params})


def _validation_rows_per_fold(model):
    """The rows each fold model of the selected trial did not train on."""
    rows = np.arange(len(GROUPS))
    return [np.setdiff1d(rows, fold.rows_seen_) for fold in model.best_estimator_.members]


def _refused_before_any_trial(model, X, y, groups, message):
    with pytest.raises(ExperimentError, match=message):
        model.fit(X, y, groups=groups)
    assert not hasattr(model, "study_")  # no study was opened, so no trial ran


# --- group splitters ----------------------------------------------------------------


@pytest.mark.parametrize("regression", [False, True])
def test_group_k_fold_validates_whole_groups_and_every_row(regression):
    X, y = _data(regression)
    model = _search(regression, cv=GroupKFold(3)).fit(X, y, groups=GROUPS)
    folds = _validation_rows_per_fold(model)
    assert len(folds) == 3
    for validation in folds:
        trained = np.setdiff1d(np.arange(len(y)), validation)
        assert not set(GROUPS[validation]) & set(GROUPS[trained])  # no group on both sides
    np.testing.assert_array_equal(np.sort(np.concatenate(folds)), np.arange(len(y)))
    assert model.predict(X).shape == (len(y),)


def test_leave_one_group_out_validates_each_group_once():
    X, y = _data()
    model = _search(cv=LeaveOneGroupOut()).fit(X, y, groups=GROUPS)
    held_out = sorted(np.unique(GROUPS[rows]).tolist() for rows in _validation_rows_per_fold(model))
    assert held_out == [[group] for group in np.unique(GROUPS)]
    assert np.isfinite(model.best_score_)


def test_a_selection_split_holds_out_whole_groups():
    X, y = _data()
    model = _search(cv=GroupKFold(3), selection_split=0.3).fit(X, y, groups=GROUPS)
    searched = np.unique(np.concatenate([f.rows_seen_ for f in model.best_estimator_.members]))
    selection = np.setdiff1d(np.arange(len(y)), searched)
    assert len(selection) > 0
    assert not set(GROUPS[selection]) & set(GROUPS[searched])
    assert "selection_loss" in model.cv_results_


def test_a_splitter_declaring_nothing_is_given_the_groups():
    """A splitter not derived from scikit-learn's cannot say whether it uses groups."""

    class ByGroup:
        def get_n_splits(self, X=None, y=None, groups=None):
            return 3

        def split(self, X, y=None, groups=None):
            for fold in np.array_split(np.unique(groups), 3):
                held_out = np.isin(groups, fold)
                yield np.flatnonzero(~held_out), np.flatnonzero(held_out)

    Y = np.arange(len(GROUPS)) % 2
    splits = validation_scheme(ByGroup()).splits(
        Y, groups=GROUPS, classification=True, seed=0, iteration=0
    )
    assert [sorted(set(GROUPS[s.validation])) for s in splits] == [
        [0, 10, 20], [30, 40, 50], [60, 70, 80]
    ]


# --- refusals -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cv", "scheme"),
    [
        (3, "3-fold cross-validation"),
        (0.3, r"a holdout \(ratio 0.3\)"),
        ({"scheme": "kfold", "folds": 4}, "4-fold cross-validation"),
        (KFold(3), r"KFold\(.*\)"),
    ],
)
def test_groups_with_a_cv_that_ignores_them_are_refused_before_any_trial(cv, scheme):
    X, y = _data()
    _refused_before_any_trial(
        _search(cv=cv), X, y, GROUPS,
        rf"cv: {scheme} does not keep groups together, .* such as GroupKFold\(5\)",
    )


def test_a_group_splitter_without_groups_is_refused_before_any_trial():
    X, y = _data()
    _refused_before_any_trial(
        _search(cv=GroupKFold(3)), X, y, None,
        r"cv: GroupKFold\(.*\) splits by groups, and no groups were given: .*"
        r"fit\(X, y, groups=\.\.\.\)",
    )


@pytest.mark.parametrize(
    ("groups", "message"),
    [
        (GROUPS[:-1], "groups: 90 rows of features but 89 groups"),
        (GROUPS.reshape(-1, 1), r"groups: must be 1-D, .* got shape \(90, 1\)"),
        (np.where(GROUPS == 20, np.nan, GROUPS), r"groups: row 20 has no group \(NaN or None\)"),
        (np.array([*GROUPS[:-1], None], dtype=object), "groups: row 89 has no group"),
    ],
)
def test_unusable_groups_are_named_before_any_trial(groups, message):
    X, y = _data()
    _refused_before_any_trial(_search(cv=GroupKFold(3)), X, y, groups, message)


# --- stored searches ----------------------------------------------------------------


def test_a_stored_search_resumes_with_the_same_groups_only(tmp_path, tree_space):
    X, y = _data()
    path = tmp_path / "groups.db"
    first = EnsemboClassifier(tree_space, n_trials=2, cv=GroupKFold(3), surrogate=None,
                              storage=path).fit(X, y, groups=GROUPS)
    again = clone(first).set_params(n_trials=3).fit(X, y, groups=list(GROUPS))
    assert len(again.study_.trials) == 3
    regrouped = np.arange(len(y)) % N_GROUPS  # same rows, other groups
    with pytest.raises(StorageError, match="X, y or groups differ"):
        clone(first).set_params(n_trials=4).fit(X, y, groups=regrouped)
    assert len(clone(first).fit(X, y, groups=GROUPS).study_.trials) == 3  # left as it was


def test_the_same_groups_in_another_container_resume_the_stored_search(tmp_path):
    """A list of strings and a pandas Series of them hashed differently, so the refit
    was refused as "different data"."""
    pandas = pytest.importorskip("pandas")
    X, y = _data()
    labels = [f"patient-{g}" for g in GROUPS]
    storage = tmp_path / "search.db"
    _search(cv=GroupKFold(3), storage=storage).fit(X, y, groups=labels)
    again = _search(cv=GroupKFold(3), storage=storage, n_trials=4)
    again.fit(X, y, groups=pandas.Series(labels))
    assert len(again.study_.trials) == 4
