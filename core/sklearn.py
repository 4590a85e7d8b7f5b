"""scikit-learn estimators that run an ensembo search in ``fit`` and predict with what it built.

``EnsemboClassifier(space="cash-classification", n_trials=30).fit(X, y)`` tunes the
executable space on ``(X, y)`` with the validation scheme ``cv``, keeps every trained
model, builds the ensemble chosen by the ``ensemble`` strategy, and predicts with it.
Constructors only store their arguments (scikit-learn's rule); ``fit`` validates them.
``n_jobs`` evaluates trials in parallel; ``threads`` caps the BLAS and OpenMP threads of
each model fit (default 1, ``0`` for the learners' own defaults; see ``ensembo.threads``).

Fitted attributes: ``best_estimator_`` (the selected configuration's model),
``ensemble_`` (a :class:`~ensembo.ml.FittedEnsemble` of the strategy's members and
weights), ``study_`` (the :class:`ensembo.Study`), ``cv_results_`` (one row per trial),
``best_params_``, ``best_score_`` (validation loss of the selected trial, lower is better).
A pickled estimator keeps its fitted models but not ``study_`` (reopen it from
``storage`` with :meth:`ensembo.Study.load`).
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ensembo import checks, defaults, spaces
from ensembo.errors import ExperimentError
from ensembo.ml.artifacts import artifact_store_for
from ensembo.ml.final import finalize
from ensembo.ml.loop import finished_count, run_task
from ensembo.ml.task import Task
from ensembo.study import Study
from ensembo.trials import TrialState


def _categorical_mask(categorical_features: Any, n_features: int) -> np.ndarray | None:
    """A boolean mask from a mask or a list of column indices."""
    if categorical_features is None:
        return None
    given = np.asarray(categorical_features)
    if given.dtype == bool:
        if given.shape != (n_features,):
            raise ExperimentError(
                "categorical_features", f"mask of length {len(given)} for {n_features} features"
            )
        return given
    mask = np.zeros(n_features, dtype=bool)
    if given.size and (given.min() < 0 or given.max() >= n_features):
        raise ExperimentError(
            "categorical_features", f"column indices {given.tolist()} outside 0..{n_features - 1}"
        )
    mask[given.astype(int)] = True
    return mask


def cv_results(study: Study) -> dict[str, Any]:
    """One row per trial, as arrays: number, params, state, loss, duration, error, and
    ``param_<name>`` columns (``None`` where the hyperparameter is inactive)."""
    trials = list(study.history)
    names = study.space.names
    results: dict[str, Any] = {
        "number": np.array([t.number for t in trials], dtype=int),
        "params": [dict(t.config) for t in trials],
        "state": np.array([t.state.value for t in trials], dtype=object),
        "loss": np.array([np.nan if t.loss is None else t.loss for t in trials], dtype=float),
        "duration": np.array(
            [np.nan if t.duration is None else t.duration for t in trials], dtype=float
        ),
        "error": np.array([t.error for t in trials], dtype=object),
    }
    for name in names:
        results[f"param_{name}"] = np.array([t.config.get(name) for t in trials], dtype=object)
    return results


class _EnsemboSearch(BaseEstimator):
    _task_type = ""

    def __init__(
        self,
        space: Any = "",
        *,
        ensemble: Any = "posthoc",
        n_trials: int = 30,
        cv: Any = 5,
        surrogate: Any = defaults.AUTO,
        selection: str = "argmin",
        refit: bool = False,
        loss: Any = None,
        categorical_features: Any = None,
        seed: int = 0,
        n_jobs: int | None = None,
        threads: int = 1,
        storage: Any = None,
    ):
        self.space = space
        self.ensemble = ensemble
        self.n_trials = n_trials
        self.cv = cv
        self.surrogate = surrogate
        self.selection = selection
        self.refit = refit
        self.loss = loss
        self.categorical_features = categorical_features
        self.seed = seed
        self.n_jobs = n_jobs
        self.threads = threads
        self.storage = storage

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.non_deterministic = False
        return tags

    def _check_params(self) -> None:
        if (
            not isinstance(self.n_trials, int | np.integer)
            or isinstance(self.n_trials, bool)
            or self.n_trials < 1
        ):
            raise ExperimentError("n_trials", f"must be a positive integer, got {self.n_trials!r}")
        checks.whole_number("seed", self.seed, 0)
        if not isinstance(self.refit, bool | np.bool_):
            raise ExperimentError("refit", f"must be True or False, got {self.refit!r}")
        n_jobs = self.n_jobs
        if n_jobs is not None and (
            not isinstance(n_jobs, int | np.integer) or isinstance(n_jobs, bool) or n_jobs == 0
        ):
            raise ExperimentError(
                "n_jobs", f"must be None or a non-zero integer as joblib reads it (-1: one per "
                f"CPU), got {n_jobs!r}"
            )

    def fit(self, X: Any, y: Any) -> _EnsemboSearch:
        self._check_params()
        X, y = validate_data(
            self, X, y, ensure_all_finite="allow-nan", y_numeric=self._task_type == "regression"
        )
        if self._task_type == "classification":
            check_classification_targets(y)
            self.classes_ = np.unique(y)
        space = spaces.load(copy.deepcopy(self.space))  # sampling reseeds it; keep ours intact
        task = Task(
            X,
            y,
            task=self._task_type,
            space=space,
            validation=self.cv,
            loss=self.loss,
            categorical_features=_categorical_mask(self.categorical_features, X.shape[1]),
            seed=int(self.seed),
            threads=self.threads,
        )
        study = Study(
            space,
            surrogate=self.surrogate,
            ensemble=self.ensemble,
            loss=task.loss_spec if isinstance(task.loss_spec, str) else None,
            validation_targets=task.validation_targets(),
            task=self._task_type,
            budget=int(self.n_trials),
            seed=int(self.seed),
            storage=self.storage,
        )
        store = artifact_store_for(self.storage)
        remaining = max(int(self.n_trials) - finished_count(study), 0)
        run_task(study, task, remaining, store=store, n_jobs=self.n_jobs)
        final = finalize(study, task, store, selection=self.selection, refit=self.refit)
        self.study_ = study
        self.best_estimator_ = final.best_estimator
        self.ensemble_ = final.ensemble_estimator
        self.best_params_ = dict(final.best_trial.config)
        self.best_score_ = float(final.best_trial.loss)
        self.best_index_ = final.best_trial.number
        self.cv_results_ = cv_results(study)
        self.n_failed_ = len(study.history.in_state(TrialState.FAILED))
        return self

    def __getstate__(self) -> dict[str, Any]:
        """Pickle the fitted models, not the live study (its storage file keeps it)."""
        state = super().__getstate__()
        if "study_" in state:
            state["study_"] = None
        return state

    def predict(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "ensemble_")
        X = validate_data(self, X, ensure_all_finite="allow-nan", reset=False)
        return self.ensemble_.predict(X)


class EnsemboClassifier(ClassifierMixin, _EnsemboSearch):
    """Tunes a classification space and predicts with the resulting ensemble."""

    _task_type = "classification"

    def __init__(
        self,
        space: Any = "cash-classification",
        *,
        ensemble: Any = "posthoc",
        n_trials: int = 30,
        cv: Any = 5,
        surrogate: Any = defaults.AUTO,
        selection: str = "argmin",
        refit: bool = False,
        loss: Any = None,
        categorical_features: Any = None,
        seed: int = 0,
        n_jobs: int | None = None,
        threads: int = 1,
        storage: Any = None,
    ):
        super().__init__(
            space,
            ensemble=ensemble,
            n_trials=n_trials,
            cv=cv,
            surrogate=surrogate,
            selection=selection,
            refit=refit,
            loss=loss,
            categorical_features=categorical_features,
            seed=seed,
            n_jobs=n_jobs,
            threads=threads,
            storage=storage,
        )

    def predict_proba(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "ensemble_")
        X = validate_data(self, X, ensure_all_finite="allow-nan", reset=False)
        return self.ensemble_.predict_proba(X)


class EnsemboRegressor(RegressorMixin, _EnsemboSearch):
    """Tunes a regression space and predicts with the resulting ensemble."""

    _task_type = "regression"

    def __init__(
        self,
        space: Any = "cash-regression",
        *,
        ensemble: Any = "posthoc",
        n_trials: int = 30,
        cv: Any = 5,
        surrogate: Any = defaults.AUTO,
        selection: str = "argmin",
        refit: bool = False,
        loss: Any = None,
        categorical_features: Any = None,
        seed: int = 0,
        n_jobs: int | None = None,
        threads: int = 1,
        storage: Any = None,
    ):
        super().__init__(
            space,
            ensemble=ensemble,
            n_trials=n_trials,
            cv=cv,
            surrogate=surrogate,
            selection=selection,
            refit=refit,
            loss=loss,
            categorical_features=categorical_features,
            seed=seed,
            n_jobs=n_jobs,
            threads=threads,
            storage=storage,
        )


__all__ = ["EnsemboClassifier", "EnsemboRegressor", "cv_results"]
