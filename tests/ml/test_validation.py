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
    with pytest.raises(ExperimentError, match="invalid holdout options"):
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
