"""Task: failures become failed trials, cached predictions are the scored ones,
k-fold predictions are out-of-fold over every row."""

from __future__ import annotations

import time

import numpy as np
import pytest

from ensembo import Study, TrialState
from ensembo.errors import ExperimentError
from ensembo.ml import CrossValidation, Holdout, MemoryArtifactStore, Task, run_task
from ensembo.plugins.losses.classification import ZeroOneLoss


def _study(space, task, **options):
    return Study(
        space,
        surrogate=None,
        validation_targets=task.validation_targets(),
        loss="zero-one",
        task="classification",
        seed=options.pop("seed", 0),
        **options,
    )


def test_failing_configurations_are_recorded_and_the_run_goes_on(flaky_space, classification_data):
    X, y = classification_data
    task = Task(X, y, task="classification", space=flaky_space, validation=Holdout(ratio=0.3))
    study = _study(flaky_space, task)
    store = MemoryArtifactStore()
    run_task(study, task, 24, store=store)
    failed = {t.config["behaviour"]: t.error for t in study.trials if t.state is TrialState.FAILED}
    complete = [t for t in study.trials if t.state is TrialState.COMPLETE]
    assert set(failed) == {"raise", "nan", "garbage"}
    assert "always fails" in failed["raise"]
    assert "non-finite" in failed["nan"]
    assert "not among the training classes" in failed["garbage"]
    assert complete and all(t.config["behaviour"] == "fit" for t in complete)
    assert all(t.number in store for t in complete)
    assert not any(t.number in store for t in study.trials if t.state is TrialState.FAILED)
    assert len(study.trials) == 24


def test_cached_predictions_are_exactly_those_scored(tree_only_space, classification_data):
    X, y = classification_data
    task = Task(X, y, task="classification", space=tree_only_space, validation=0.3)
    study = _study(tree_only_space, task)
    run_task(study, task, 4)
    targets = study.context.y_true
    rows = task.splits(0)[0].validation
    classes = np.unique(y)
    np.testing.assert_array_equal(classes[targets], y[rows])
    for trial in study.trials:
        assert trial.predictions.shape == (len(rows), 3)
        recomputed = ZeroOneLoss()(targets, trial.predictions).mean()
        assert trial.loss == pytest.approx(recomputed)
        model = study.models[trial.number]
        np.testing.assert_allclose(trial.predictions, model.predict_proba(X[rows]))


def test_kfold_predictions_are_out_of_fold_over_every_row(tree_only_space, classification_data):
    X, y = classification_data
    task = Task(
        X, y, task="classification", space=tree_only_space, validation=CrossValidation(folds=4)
    )
    evaluation = task.evaluate({"behaviour": "fit", "depth": 8}, iteration=0)
    assert evaluation.predictions.shape == (len(y), 3)
    assert len(evaluation.model.members) == 4
    expected = np.zeros((len(y), 3))
    for model, split in zip(evaluation.model.members, task.splits(0), strict=True):
        assert set(split.train).isdisjoint(split.validation)
        expected[split.validation] = model.predict_proba(X[split.validation])
    np.testing.assert_allclose(evaluation.predictions, expected)
    # a depth-8 tree fits its own training rows: out-of-fold error is not training error
    assert evaluation.loss > 0


def test_repeated_kfold_averages_each_rows_predictions(tree_only_space, classification_data):
    X, y = classification_data
    task = Task(
        X,
        y,
        task="classification",
        space=tree_only_space,
        validation=CrossValidation(folds=3, repeats=2),
    )
    evaluation = task.evaluate({"behaviour": "fit", "depth": 3})
    assert len(task.splits(0)) == 6
    np.testing.assert_allclose(evaluation.predictions.sum(axis=1), 1.0)


def test_selection_split_is_held_out_and_scored(tree_only_space, classification_data):
    X, y = classification_data
    task = Task(
        X,
        y,
        task="classification",
        space=tree_only_space,
        validation=0.3,
        selection_split=0.25,
        X_test=X[:10],
        y_test=y[:10],
    )
    assert len(task.selection_rows) == 30
    assert set(task.selection_rows).isdisjoint(task.optimize_rows)
    evaluation = task.evaluate({"behaviour": "fit", "depth": 2})
    assert 0 <= evaluation.info["selection_loss"] <= 1
    assert 0 <= evaluation.info["test_loss"] <= 1


def test_a_scheme_that_cannot_split_fails_at_construction(tree_only_space):
    with pytest.raises(ExperimentError, match="n_samples=3"):
        Task(
            np.zeros((3, 2)),
            ["a", "b", "a"],
            task="classification",
            space=tree_only_space,
            validation=CrossValidation(folds=5),
        )


def test_a_space_without_build_is_refused(classification_data, flat_space):
    from ensembo.spaces import Space

    X, y = classification_data
    with pytest.raises(ExperimentError, match="not executable"):
        Task(X, y, task="classification", space=Space(flat_space))


def test_parallel_batches_record_failures_like_the_serial_loop(flaky_space, classification_data):
    X, y = classification_data
    task = Task(X, y, task="classification", space=flaky_space, validation=0.3)
    serial, parallel = _study(flaky_space, task), _study(flaky_space, task)
    run_task(serial, task, 4)
    run_task(parallel, task, 4, n_jobs=2)
    assert [t.state for t in parallel.trials].count(TrialState.FAILED) == sum(
        t.config["behaviour"] != "fit" for t in parallel.trials
    )
    assert all(t.error for t in parallel.trials if t.state is TrialState.FAILED)
    # random search draws the same configurations whatever the batch size
    assert [t.config for t in parallel.trials] == [t.config for t in serial.trials]


def test_log_loss_on_a_model_without_predict_proba_warns_once(classification_data, caplog):
    """An SVC without probability=True gave one-hot predictions: log-loss then counted
    errors at 34.5 each, silently."""
    from ensembo import spaces

    X, y = classification_data
    space = spaces.load({"name": "svc", "estimator": "sklearn.svm.SVC",
                         "params": {"C": {"type": "float", "low": 0.1, "high": 10.0}}})
    task = Task(X, y, task="classification", space=space, validation=0.3, loss="log-loss")
    for number, config in enumerate(space.sample(2, 0)):
        task.evaluate(config, number)
    warned = [r.getMessage() for r in caplog.records if "no predict_proba" in r.getMessage()]
    assert warned == [("loss 'log-loss' scores class probabilities, but SVC has no "
                      "predict_proba: its predictions are one-hot, so the loss only counts "
                      "errors, each at -log(eps)")]


def test_a_trial_over_its_time_limit_fails_and_the_search_goes_on(classification_data):
    """Without a limit one hanging fit (an SVC with a huge C) held the search for hours."""
    from flaky_spaces import FlakySpace

    from ensembo.execution import TrialLimits

    space = FlakySpace(behaviours=("fit", "hang"))
    X, y = classification_data
    task = Task(X, y, task="classification", space=space, validation=0.3)
    study = _study(space, task)
    started = time.monotonic()
    run_task(study, task, 6, limits=TrialLimits(wall_time=2))
    assert time.monotonic() - started < 45
    hung = [t for t in study.trials if t.config["behaviour"] == "hang"]
    assert hung and all(t.state is TrialState.FAILED and "timeout" in t.error for t in hung)
    assert any(t.state is TrialState.COMPLETE for t in study.trials)


def _warnings(caplog):
    return [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]


def test_a_class_rarer_than_the_folds_is_named_once_and_the_rest_stay_stratified(
    tree_only_space, caplog
):
    """StratifiedKFold keeps stratifying when one class is rarer than the folds, and
    says so; the task says it once (not per trial), in the user's labels and options."""
    y = np.repeat(np.array(["common", "middle", "rare"], dtype=object), [60, 36, 4])
    X = np.random.default_rng(0).normal(size=(len(y), 3))
    task = Task(X, y, task="classification", space=tree_only_space, validation=5)
    for number in range(3):
        task.evaluate({"behaviour": "fit", "depth": 2}, number)
    assert _warnings(caplog) == [(
        "validation (cv) 5-fold: class 'rare' (4 rows) has fewer rows than the 5 folds, so "
        "some validation folds lack them; the other classes stay stratified. To stratify "
        "every class, use at most 4 folds (cv=4 / validation: 4), or merge the rare classes"
    )]
    per_fold = [np.bincount(task.targets[s.validation], minlength=3) for s in task.splits(0)]
    assert [counts[0] for counts in per_fold] == [12] * 5


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"validation": 0.2}, "validation (cv) holdout ratio 0.2 is not stratified"),
        ({"validation": 3, "selection_split": 0.2}, "selection_split=0.2 is not stratified"),
    ],
)
def test_a_holdout_smaller_than_the_classes_is_drawn_unstratified_with_a_warning(
    tree_only_space, caplog, options, named
):
    """40 rows of 10 classes, 8 held out: scikit-learn's "test_size = 8 should be
    greater or equal to the number of classes = 10" reached the user naming neither
    cv nor selection_split, though an unstratified split works (as for a one-row class)."""
    y = np.repeat(np.arange(10), 4)
    X = np.random.default_rng(0).normal(size=(40, 3))
    task = Task(X, y, task="classification", space=tree_only_space, **options)
    evaluation = task.evaluate({"behaviour": "fit", "depth": 2})
    assert np.isfinite(evaluation.loss)
    side = "selection" if "selection_split" in options else "validation"
    assert [m for m in _warnings(caplog) if "is not stratified" in m] == [(
        f"{named}: its 40 rows split into 32 kept and 8 {side} rows, and stratifying needs a "
        f"row of each of the 10 classes on both sides; the {side} rows are drawn unstratified, "
        "so one side may lack some classes (a fraction from 0.25 to 0.75 is stratified)"
    )]


def test_a_one_row_class_holdout_says_why_it_is_unstratified(tree_only_space, caplog):
    """This fallback was silent; it now says why, as the fallback for small holdouts."""
    y = np.repeat(np.array(["a", "b", "solo"], dtype=object), [30, 29, 1])
    X = np.random.default_rng(0).normal(size=(60, 3))
    Task(X, y, task="classification", space=tree_only_space, validation=0.3)
    assert _warnings(caplog) == [(
        "validation (cv) holdout ratio 0.3 is not stratified: class 'solo' has a single row, "
        "which cannot be on both sides of a split, so the validation rows are drawn "
        "unstratified (merge or drop such classes to stratify)"
    )]
