"""Validation schemes: stratification, reshuffling per iteration, reproducibility."""

from __future__ import annotations

import numpy as np
import pytest

from ensembo.errors import ExperimentError
from ensembo.ml import CrossValidation, Holdout, validation_scheme

Y = np.repeat([0, 1, 2], [50, 30, 20])


def _rows(scheme, iteration, seed=0):
    return [
        tuple(s.validation)
        for s in scheme.splits(Y, classification=True, seed=seed, iteration=iteration)
    ]


@pytest.mark.parametrize("scheme", [Holdout(ratio=0.3), CrossValidation(folds=5)])
def test_without_reshuffle_every_iteration_sees_the_same_splits(scheme):
    assert _rows(scheme, 0) == _rows(scheme, 7)


@pytest.mark.parametrize(
    "scheme", [Holdout(ratio=0.3, reshuffle=True), CrossValidation(folds=5, reshuffle=True)]
)
def test_reshuffle_draws_new_splits_each_iteration_reproducibly(scheme):
    per_iteration = [_rows(scheme, i) for i in range(5)]
    assert len(set(map(tuple, per_iteration))) == 5
    assert per_iteration == [_rows(scheme, i) for i in range(5)]
    assert _rows(scheme, 3, seed=1) != _rows(scheme, 3, seed=0)


def test_holdout_is_stratified():
    (split,) = Holdout(ratio=0.3).splits(Y, classification=True, seed=0, iteration=0)
    assert np.bincount(Y[split.validation]).tolist() == [15, 9, 6]
    assert sorted([*split.train, *split.validation]) == list(range(len(Y)))


def test_kfold_validates_every_row_once_per_repeat():
    splits = CrossValidation(folds=4, repeats=3).splits(Y, classification=True, seed=0, iteration=0)
    counts = np.zeros(len(Y))
    for split in splits:
        counts[split.validation] += 1
        assert np.bincount(Y[split.validation], minlength=3).min() >= 5  # stratified
    assert np.all(counts == 3)


def test_reshuffled_holdout_has_no_fixed_validation_set():
    assert not Holdout(reshuffle=True).fixed_validation
    assert CrossValidation(reshuffle=True).fixed_validation


def test_specs():
    assert validation_scheme(5) == CrossValidation(folds=5)
    assert validation_scheme(0.2) == Holdout(ratio=0.2)
    assert validation_scheme({"scheme": "kfold", "folds": 3, "reshuffle": True}) == CrossValidation(
        folds=3, reshuffle=True
    )
    with pytest.raises(ExperimentError, match="unknown scheme 'loo'; valid: holdout, kfold"):
        validation_scheme({"scheme": "loo"})
    with pytest.raises(ExperimentError, match="validation.ratio: a fraction between 0 and 1"):
        validation_scheme({"scheme": "holdout", "ratio": 1.5})


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (1, r"k-fold cross-validation needs at least 2 folds, got 1"),
        (1.5, r"a holdout ratio must be between 0 and 1 \(exclusive\), got 1.5"),
        ({"scheme": ["kfold"]}, r"unknown scheme \['kfold'\]"),
    ],
)
def test_out_of_range_shorthands_are_experiment_errors(spec, message):
    with pytest.raises(ExperimentError, match=message):
        validation_scheme(spec)


def test_numpy_integers_and_any_mapping_are_accepted():
    """``np.int64(3)`` (from a grid or a config file) and read-only mappings were refused."""
    from types import MappingProxyType

    assert validation_scheme(np.int64(3)) == CrossValidation(folds=3)
    assert validation_scheme(np.float32(0.25)) == Holdout(ratio=float(np.float32(0.25)))
    assert validation_scheme(MappingProxyType({"scheme": "kfold", "folds": 4})) == CrossValidation(
        folds=4
    )
    with pytest.raises(ExperimentError, match="needs at least 2 folds, got 1"):
        validation_scheme(np.int64(1))
    with pytest.raises(ExperimentError, match="expected a number of folds"):
        validation_scheme(np.True_)


def _validation_rows(splits):
    return [s.validation.tolist() for s in splits]


def test_a_cv_splitter_gives_its_own_splits_on_every_trial():
    from sklearn.model_selection import StratifiedKFold

    splitter = StratifiedKFold(3, shuffle=True, random_state=0)
    scheme = validation_scheme(splitter)
    assert scheme.covers_all_rows and scheme.fixed_validation
    expected = [v.tolist() for _, v in splitter.split(np.zeros((len(Y), 1)), Y)]
    for iteration, seed in [(0, 0), (5, 0), (2, 9)]:
        splits = scheme.splits(Y, classification=True, seed=seed, iteration=iteration)
        assert _validation_rows(splits) == expected


def test_a_single_split_splitter_is_a_holdout():
    from sklearn.model_selection import ShuffleSplit

    scheme = validation_scheme(ShuffleSplit(n_splits=1, test_size=0.2, random_state=0))
    assert not scheme.covers_all_rows and scheme.fixed_validation
    (split,) = scheme.splits(Y, classification=True, seed=0, iteration=3)
    assert len(split.validation) == 20


@pytest.mark.parametrize("random_state", [None, np.random.RandomState(0)])
def test_a_splitter_that_draws_other_rows_on_every_call_is_refused(random_state):
    from sklearn.model_selection import KFold

    with pytest.raises(ExperimentError, match="every trial would be scored on other rows.*int "
                                              "random_state"):
        validation_scheme(KFold(3, shuffle=True, random_state=random_state))
    validation_scheme(KFold(3, shuffle=False))  # no shuffling: always the same folds


def test_a_splitter_that_leaves_rows_unvalidated_or_needs_groups_is_refused():
    from sklearn.model_selection import GroupKFold, TimeSeriesSplit

    with pytest.raises(ExperimentError, match=r"never validates 25 rows \(e.g. rows \[0, 1, 2"):
        validation_scheme(TimeSeriesSplit(3)).splits(Y, classification=True, seed=0, iteration=0)
    with pytest.raises(ExperimentError, match="no groups"):
        validation_scheme(GroupKFold(3)).splits(Y, classification=True, seed=0, iteration=0)


def test_a_task_scores_on_a_splitters_folds(tree_only_space, classification_data):
    from sklearn.model_selection import KFold

    from ensembo.ml import Task

    X, y = classification_data
    task = Task(X, y, task="classification", space=tree_only_space, validation=KFold(4))
    assert len(task.validation_targets()) == len(y)
    evaluation = task.evaluate({"behaviour": "fit", "depth": 3})
    assert evaluation.predictions.shape == (len(y), 3) and 0 <= evaluation.loss <= 1


def test_an_unknown_scheme_option_is_named_with_the_valid_ones():
    """It said "Holdout.__init__() got an unexpected keyword argument 'kind'"."""
    with pytest.raises(ExperimentError, match=r"unknown holdout option\(s\) kind; valid: scheme, "
                       r"ratio, stratify, reshuffle"):
        validation_scheme({"kind": "kfold"})
    with pytest.raises(ExperimentError, match=r"unknown kfold option\(s\) repeat; "):
        validation_scheme({"scheme": "kfold", "repeat": 2})


def _class_counts_per_fold(y, scheme, seed):
    splits = scheme.splits(y, classification=True, seed=seed, iteration=0)
    return [np.bincount(y[s.validation], minlength=y.max() + 1).tolist() for s in splits]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kfold_stays_stratified_when_one_class_is_rarer_than_the_folds(seed):
    """One class of 4 rows under 5 folds turned stratification off for every class
    (class 1 ranged 3..10 rows per fold); as StratifiedKFold, the common classes stay
    balanced and each rare row is validated in a fold of its own."""
    y = np.repeat([0, 1, 2], [60, 36, 4])
    counts = np.array(_class_counts_per_fold(y, CrossValidation(folds=5), seed))
    assert counts[:, 0].tolist() == [12] * 5
    assert sorted(counts[:, 1].tolist()) == [7, 7, 7, 7, 8]
    assert sorted(counts[:, 2].tolist()) == [0, 1, 1, 1, 1]


def test_kfold_trains_every_fold_on_a_two_row_class():
    """Unstratified, both rows of a 2-row class could land in one validation fold
    (seeds 10 and 16 of these), whose model never saw the class; stratified, they are
    validated in two folds."""
    y = np.repeat([0, 1], [30, 2])
    for seed in range(20):
        splits = CrossValidation(folds=5).splits(y, classification=True, seed=seed, iteration=0)
        assert all((y[s.train] == 1).any() for s in splits), f"seed {seed}"


def test_a_holdout_too_small_to_stratify_falls_back_to_an_unstratified_split():
    """8 validation rows for 10 classes: scikit-learn refused to stratify with a
    ValueError naming neither cv nor selection_split; a one-row class already falls
    back to an unstratified split, and so does this."""
    y = np.repeat(np.arange(10), 4)
    (split,) = Holdout(ratio=0.2).splits(y, classification=True, seed=0, iteration=0)
    assert (len(split.train), len(split.validation)) == (32, 8)
    assert sorted([*split.train, *split.validation]) == list(range(40))
