"""EnsemboClassifier / EnsemboRegressor: parameters, fitted attributes, storage."""

from __future__ import annotations

import re
import subprocess
import sys
import time

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification, make_regression
from sklearn.exceptions import NotFittedError

from ensembo.errors import ExperimentError
from ensembo.ml import FittedEnsemble
from ensembo.sklearn import EnsemboClassifier, EnsemboRegressor


def test_clone_get_params_set_params_round_trip(tree_space):
    estimator = EnsemboClassifier(
        tree_space, n_trials=4, cv=3, surrogate=None, seed=7, ensemble="best"
    )
    params = estimator.get_params()
    assert params["n_trials"] == 4 and params["seed"] == 7 and params["space"] is tree_space
    copy = clone(estimator)
    assert copy is not estimator
    assert {k: v for k, v in copy.get_params().items() if k != "space"} == {
        k: v for k, v in params.items() if k != "space"
    }
    copy.set_params(n_trials=9, cv=0.25)
    assert copy.get_params()["n_trials"] == 9 and copy.n_trials == 9
    assert estimator.n_trials == 4
    assert EnsemboClassifier(**params).get_params() == params


def test_classifier_fitted_attributes(tree_space):
    X, y = make_classification(n_samples=150, n_features=5, random_state=1)
    labels = np.where(y == 1, "yes", "no")
    model = EnsemboClassifier(tree_space, n_trials=5, cv=3, surrogate=None).fit(X, labels)
    assert list(model.classes_) == ["no", "yes"]
    assert isinstance(model.ensemble_, FittedEnsemble)
    assert len(model.study_.trials) == 5
    assert set(model.cv_results_) >= {"number", "params", "state", "loss", "param_max_depth"}
    assert model.best_score_ == pytest.approx(np.nanmin(model.cv_results_["loss"]))
    assert model.best_params_ == model.cv_results_["params"][model.best_index_]
    results = model.cv_results_  # GridSearchCV's names: higher score, rank 1 is best
    np.testing.assert_array_equal(results["mean_test_score"], -results["loss"])
    assert results["rank_test_score"][model.best_index_] == 1
    assert set(model.predict(X)) <= {"no", "yes"}
    np.testing.assert_allclose(model.predict_proba(X).sum(axis=1), 1.0)
    assert model.score(X, labels) > 0.8
    assert model.best_estimator_.predict(X[:3]).dtype.kind in "OU"


def test_regressor_with_storage_keeps_models_on_disk(tmp_path, tree_regression_space):
    X, y = make_regression(n_samples=120, n_features=4, noise=1.0, random_state=0)
    path = tmp_path / "reg.db"
    model = EnsemboRegressor(
        tree_regression_space, n_trials=4, cv=0.3, surrogate=None, storage=path
    )
    model.fit(X, y)
    assert path.is_file()
    assert len(list((tmp_path / "reg.models").glob("trial-*.joblib"))) == 4
    assert model.predict(X).shape == (len(y),)
    # refitting with the same storage resumes the stored study instead of starting over
    again = clone(model).fit(X, y)
    assert len(again.study_.trials) == 4
    np.testing.assert_allclose(again.predict(X), model.predict(X))


def test_the_storage_is_released_when_fit_returns(tmp_path, tree_regression_space):
    """The fitted estimator kept the file's writer lock for as long as it lived: another
    process could not load or resume the finished study, and was told to wait for it."""
    X, y = make_regression(n_samples=60, n_features=3, noise=1.0, random_state=0)
    path = tmp_path / "reg.db"
    model = EnsemboRegressor(
        tree_regression_space, n_trials=3, cv=0.3, surrogate=None, storage=path
    ).fit(X, y)
    load = f"from ensembo import Study; print(len(Study.load({str(path)!r}).history))"
    other = subprocess.run(
        [sys.executable, "-c", load], capture_output=True, text=True, timeout=120
    )
    assert other.returncode == 0, other.stderr
    assert other.stdout.split() == ["3"]
    assert len(model.study_.history) == 3  # still readable


def test_a_refused_fit_leaves_no_half_fitted_estimator(tree_space):
    """It kept the old ensemble behind the new fit's feature count and classes, so every
    predict failed on either shape of X."""
    X, y = make_classification(n_samples=60, n_features=4, random_state=0)
    model = EnsemboClassifier(tree_space, n_trials=2, cv=0.3, surrogate=None).fit(X, y)
    with pytest.raises(ExperimentError, match="at least 2 classes"):
        model.fit(X[:, :2], np.zeros(len(y)))
    with pytest.raises(NotFittedError):
        model.predict(X)
    assert not hasattr(model, "classes_")


def test_invalid_parameters_are_reported_at_fit(tree_space):
    X, y = make_classification(n_samples=40, random_state=0)
    with pytest.raises(ValueError, match="n_trials: must be a positive integer, got 0"):
        EnsemboClassifier(tree_space, n_trials=0).fit(X, y)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"seed": -1}, "seed: must be an integer >= 0, got -1"),
        ({"n_jobs": 0}, "n_jobs: must be None or a non-zero integer"),
        ({"cv": 1}, "cv: k-fold cross-validation needs at least 2 folds, got 1"),
        ({"cv": 1.5}, "cv: a holdout ratio must be between 0 and 1 (exclusive), got 1.5"),
        ({"cv": {"scheme": "loo"}}, "cv.scheme: unknown scheme 'loo'"),
        ({"cv": 50}, "cv.folds: 50 folds need at least 50 rows, got n_samples=40"),
        ({"refit": "maybe"}, "refit: must be True or False, got 'maybe'"),
        ({"timeout": 0}, "timeout: must be a finite positive number of seconds, got 0"),
        (
            {"trial_timeout": -1},
            "trial_timeout: must be a finite positive number of seconds, got -1",
        ),
        ({"memory_limit": "lots"}, "memory_limit: expected a positive number of bytes"),
    ],
)
def test_out_of_range_parameters_name_themselves(tree_space, params, message):
    X, y = make_classification(n_samples=40, random_state=0)
    with pytest.raises(ExperimentError, match=re.escape(message)):
        EnsemboClassifier(tree_space, n_trials=2, **params).fit(X, y)


def test_a_space_of_the_other_task_is_refused_before_any_trial():
    X, y = make_classification(n_samples=40, random_state=0)
    with pytest.raises(ExperimentError, match="'cash-regression' builds a .*Regressor, not a "
                                              "model for classification"):
        EnsemboClassifier(space="cash-regression", n_trials=2).fit(X, y)
    with pytest.raises(ExperimentError, match="not a model for regression"):
        EnsemboRegressor(space="cash-classification", n_trials=2).fit(X, y.astype(float))


def test_n_jobs_evaluates_trials_in_parallel_batches(tree_space):
    X, y = make_classification(n_samples=120, n_features=5, random_state=2)
    model = EnsemboClassifier(tree_space, n_trials=4, cv=3, surrogate=None, n_jobs=2).fit(X, y)
    assert list(model.cv_results_["state"]) == ["complete"] * 4
    assert model.cv_results_["number"].tolist() == [0, 1, 2, 3]
    assert model.predict(X).shape == (120,)


def test_a_timeout_stops_the_search_after_the_running_trials(tree_space):
    X, y = make_classification(n_samples=60, n_features=4, random_state=1)
    # the budget is spent at once: only the first trial runs, and the model still predicts
    model = EnsemboClassifier(tree_space, n_trials=50, cv=3, timeout=1e-9).fit(X, y)
    assert len(model.study_.trials) == 1 and model.predict(X).shape == (60,)


def test_a_trial_over_its_time_limit_fails_and_the_search_goes_on():
    """Without ``trial_timeout`` one slow fit (an SVC with a huge C) held fit() for hours."""
    import tree_spaces

    X, y = make_classification(n_samples=80, n_features=4, random_state=3)
    model = EnsemboClassifier(
        tree_spaces.HangingTreeSpace(), n_trials=6, cv=3, surrogate=None, trial_timeout=2
    )
    started = time.monotonic()
    model.fit(X, y)
    assert time.monotonic() - started < 45
    results = model.cv_results_
    pairs = list(zip(results["param_max_depth"], results["state"], strict=True))
    assert {state for depth, state in pairs if depth > 3} == {"failed"}
    assert {state for depth, state in pairs if depth <= 3} == {"complete"}
    assert model.n_failed_ == sum(depth > 3 for depth in model.cv_results_["param_max_depth"])
    assert model.predict(X).shape == (80,)


def test_predictions_the_study_refuses_fail_their_trial_and_the_search_goes_on():
    """The study's tell refuses a malformed result and keeps the trial running, for the
    caller to tell again; the search loop must fail it instead, as an objective's error."""
    import tree_spaces

    X, y = make_classification(n_samples=80, n_features=4, random_state=3)
    model = EnsemboClassifier(
        tree_spaces.DoubledProbabilitySpace(), n_trials=6, cv=3, surrogate=None,
        ensemble="posthoc",
    )
    model.fit(X, y)
    pairs = list(zip(model.cv_results_["param_max_depth"], model.cv_results_["state"],
                     strict=True))
    assert {state for depth, state in pairs if depth > 3} == {"failed"}
    assert {state for depth, state in pairs if depth <= 3} == {"complete"}
    failed = model.study_.history.in_state("failed")
    assert failed and all("must sum to 1" in trial.error for trial in failed)


def test_a_class_the_holdout_lacks_does_not_fail_every_trial(tree_space):
    """A class with one example cannot be stratified; when the holdout rows lack it,
    the predictions still have its column, which the study must expect."""
    X, y = make_classification(n_samples=60, n_features=4, n_informative=3, n_redundant=0,
                               random_state=0)
    y[-1] = 2
    model = EnsemboClassifier(tree_space, n_trials=3, cv=0.3, ensemble="posthoc", seed=1)
    model.fit(X, y)
    assert 2 not in model.study_.context.y_true  # the case at hand: class 2 trains only
    assert list(model.cv_results_["state"]) == ["complete"] * 3
    assert model.predict_proba(X).shape == (60, 3)


@pytest.mark.parametrize("options", [{"cv": 0.2}, {"cv": 3, "selection_split": 0.2}])
def test_a_holdout_smaller_than_the_classes_fits_unstratified(tree_space, options):
    """40 rows of 10 classes, 8 held out: fit raised scikit-learn's "test_size = 8 should
    be greater or equal to the number of classes = 10", naming neither cv nor
    selection_split; as for a one-row class, the rows are held out unstratified."""
    X = np.random.default_rng(0).normal(size=(40, 3))
    y = np.repeat(np.arange(10), 4)
    model = EnsemboClassifier(tree_space, n_trials=3, surrogate=None, ensemble="best",
                              **options).fit(X, y)
    assert list(model.cv_results_["state"]) == ["complete"] * 3
    assert model.predict_proba(X).shape == (40, 10)


SLOW_ON_ALL_ROWS = """\
import time
from sklearn.tree import DecisionTreeClassifier


class SlowOnAllRows(DecisionTreeClassifier):
    def fit(self, X, y, **kwargs):
        if len(X) > 100:  # the refit on all 150 rows; a trial's folds have 100
            time.sleep(30)
        return super().fit(X, y, **kwargs)
"""


def test_a_refit_past_the_trial_timeout_is_listed_in_not_refitted(tmp_path, monkeypatch):
    """The fit fell back to the searched model with a warning only: nothing on the
    estimator said which members were trained on fewer rows."""
    (tmp_path / "slow_on_all_rows.py").write_text(SLOW_ON_ALL_ROWS)
    monkeypatch.syspath_prepend(str(tmp_path))
    space = {"estimator": "slow_on_all_rows.SlowOnAllRows",
             "params": {"max_depth": {"type": "int", "low": 1, "high": 4}}}
    X, y = make_classification(n_samples=150, n_features=5, random_state=1)
    model = EnsemboClassifier(space, n_trials=2, cv=3, surrogate=None, ensemble="best",
                              refit=True, trial_timeout=2.0).fit(X, y)
    assert model.not_refitted_ == [model.best_index_]
    assert model.predict(X[:3]).shape == (3,)
    assert EnsemboClassifier(space, n_trials=2, cv=3, surrogate=None).fit(X, y).not_refitted_ == []


@pytest.mark.parametrize("selection", ["selection-split", "posterior-mean"])
def test_ensemble_best_predicts_with_the_selected_model(tree_space, selection):
    """``ensemble="best"`` is the selected model: predict, predict_proba and score used
    the argmin trial's model, whatever ``selection`` chose as ``best_estimator_``."""
    X, y = make_classification(n_samples=150, n_features=5, flip_y=0.1, random_state=1)
    model = EnsemboClassifier(
        tree_space, n_trials=6, cv=3, surrogate=None, ensemble="best", selection=selection,
        selection_split=0.3, seed=5,
    ).fit(X, y)
    argmin = int(np.nanargmin(model.cv_results_["loss"]))
    # the case at hand: the rule chose another configuration than the argmin's
    assert model.best_params_ != model.cv_results_["params"][argmin]
    (member,) = model.ensemble_.members
    assert member is model.best_estimator_
    np.testing.assert_array_equal(model.predict_proba(X), model.best_estimator_.predict_proba(X))
    np.testing.assert_array_equal(model.predict(X), model.best_estimator_.predict(X))
    assert model.score(X, y) == model.best_estimator_.score(X, y)


def test_pickling_or_copying_keeps_the_study_of_the_fitted_estimator(tree_space):
    """__getstate__ set study_ to None in the live __dict__: pickling a model to save it
    (or deep-copying it) wiped study_ from the estimator still in use."""
    import copy
    import pickle

    X, y = make_classification(n_samples=80, n_features=4, random_state=0)
    model = EnsemboClassifier(tree_space, n_trials=3, cv=3, surrogate=None).fit(X, y)
    study = model.study_
    restored = pickle.loads(pickle.dumps(model))
    copied = copy.deepcopy(model)
    assert model.study_ is study and model.study_.best_trial is not None
    assert restored.study_ is None and copied.study_ is None  # the copies leave it out
    for other in (restored, copied):
        np.testing.assert_array_equal(other.predict_proba(X), model.predict_proba(X))


def test_a_loss_given_as_a_mapping_builds_the_ensemble_its_name_builds(tree_space):
    """The study was given the loss only as a name: with a mapping the strategy selected
    by zero-one and voted, while the trials were scored by log-loss."""
    X, y = make_classification(n_samples=120, n_features=6, n_informative=4, n_classes=3,
                               random_state=0)

    def ensemble(loss):
        model = EnsemboClassifier(tree_space, ensemble="posthoc", loss=loss, n_trials=8, cv=3,
                                  surrogate=None, seed=0)
        return model.fit(X, y).study_.ensemble

    by_name = ensemble("log-loss")
    assert by_name.combination == "average"
    assert ensemble({"name": "log-loss"}) == by_name


def test_a_regression_loss_given_as_a_mapping_selects_the_ensemble(tree_regression_space):
    X, y = make_regression(n_samples=120, n_features=6, random_state=0)

    def study(loss):
        model = EnsemboRegressor(tree_regression_space, ensemble="posthoc", loss=loss,
                                 n_trials=8, cv=3, surrogate=None, seed=0)
        return model.fit(X, y).study_

    by_mapping = study({"name": "mae"})
    assert by_mapping.ensemble == study("mae").ensemble  # was selected by mse
    assert by_mapping.context.loss == {"name": "mae"}


@pytest.mark.filterwarnings("ignore:.*slots with a budget:UserWarning")  # 6 trials on purpose
def test_an_ensemble_object_serves_a_second_fit(tree_space):
    """The eo object kept the first fit's slots: the second fit's ensemble named trials
    it did not have, and the error blamed the plugin (PluginContractError)."""
    from ensembo.plugins.ensembles.eo import EnsembleOptimization

    X, y = make_classification(n_samples=90, n_features=5, random_state=0)

    def fitted(model, seed):
        return model.set_params(seed=seed).fit(X, y).study_.ensemble

    def estimator(strategy):
        return EnsemboClassifier(tree_space, ensemble=strategy, n_trials=6, cv=0.3,
                                 surrogate=None)

    reused = estimator(EnsembleOptimization(size=3))
    fitted(reused, seed=0)
    assert fitted(reused, seed=1) == fitted(estimator(EnsembleOptimization(size=3)), seed=1)
