"""scikit-learn estimators that run an ensembo search in ``fit`` and predict with what it built.

``EnsemboClassifier(space="cash-classification", n_trials=30).fit(X, y)`` tunes the
executable space on ``(X, y)`` with the validation scheme ``cv``, keeps every trained
model, builds the ensemble chosen by the ``ensemble`` strategy, and predicts with it.
Constructors only store their arguments (scikit-learn's rule); ``fit`` validates them.
``timeout`` (seconds) stops starting trials once it has passed, for a time budget in
place of (or on top of) ``n_trials``; the trials running then finish and are used.
``trial_timeout`` (seconds) and ``memory_limit`` (bytes or ``"2GB"``) bound each trial:
its fits run in a child process killed at the limit, and the trial fails (one SVC with
a huge ``C`` can otherwise hold a search for hours).
``n_jobs`` evaluates trials in parallel; ``threads`` caps the BLAS and OpenMP threads of
each model fit (default 1, ``0`` for the learners' own defaults; see ``ensembo.threads``).
``fit(X, y, groups=g)`` passes the rows' groups to a ``cv`` splitter that splits by them
(``GroupKFold(5)``), as ``GridSearchCV.fit`` does; a ``cv`` that would ignore them is
refused (its loss would leak across groups), see :mod:`ensembo.ml.validation`.

Fitted attributes: ``best_estimator_`` (the selected configuration's model),
``ensemble_`` (a :class:`~ensembo.ml.FittedEnsemble` of the strategy's members and
weights; with ``ensemble="best"``, ``best_estimator_`` alone, the ``selection`` rule's
choice), ``study_`` (the :class:`ensembo.Study`), ``cv_results_`` (one row per trial),
``best_params_``, ``best_score_`` (validation loss of the selected trial, lower is better).
A fit that raises leaves the estimator unfitted, also one fitted before (only
``study_`` stays, when trials ran in it, for their errors).
A pickled estimator keeps its fitted models but not ``study_`` (reopen it from
``storage`` with :meth:`ensembo.Study.load`).

With ``storage``, fitting again on the same data resumes the stored search; fitting on
other data or groups is refused (its trials were scored on other rows), see
:func:`ensembo.ml.stored_search.check_same_data`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import rankdata
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ensembo import checks, defaults, execution, spaces
from ensembo.errors import ExperimentError, StorageError
from ensembo.loss_fit import DEFAULT_LOSS
from ensembo.ml.artifacts import artifact_store_for
from ensembo.ml.categorical_columns import categorical_mask
from ensembo.ml.estimator_refusals import (
    check_fixed_validation,
    check_selection,
    single_class_error,
)
from ensembo.ml.final import finalize
from ensembo.ml.loop import finished_count, run_task
from ensembo.ml.stored_search import (
    DATA_KEY,
    check_same_data,
    data_fingerprint,
    described,
    holds_question_mark_cells,
    stored_scoring,
)
from ensembo.ml.task import Task
from ensembo.ml.text_columns import TextColumns
from ensembo.storage import study_file_path
from ensembo.stored_study import SCORING, discard_if_nothing_ran
from ensembo.study import Study
from ensembo.trials import TrialState

# a study holding a trial in one of these states has something to read after a failed fit
_RAN = (TrialState.RUNNING, TrialState.COMPLETE, TrialState.FAILED, TrialState.INTERRUPTED)


def _new_study_file(storage: Any) -> Path | None:
    """The path of the study file a fit is about to create, as the study opens it
    (``~``, ``sqlite:///``), or ``None``: in memory, a storage object, a path the study
    will refuse, or a file that exists already (it is never deleted)."""
    try:
        path = study_file_path(storage)
    except StorageError:  # the study refuses it, naming it, before any file is made
        return None
    return None if path is None or path.exists() else path


def _task(X: np.ndarray, y: np.ndarray, task_type: str, space: Any, params: dict) -> Task:
    """The :class:`Task` of a fit; validation errors name the estimator's ``cv``
    parameter, not the task's ``validation`` argument it is passed as."""
    try:
        return Task(X, y, task=task_type, space=space, **params)
    except ExperimentError as error:
        if error.path.split(".")[0] != "validation":
            raise
        raise ExperimentError("cv" + error.path[len("validation"):], error.message) from error


def cv_results(study: Study) -> dict[str, Any]:
    """One row per trial, as arrays: number, params, state, loss, duration, error,
    ``mean_test_score`` (minus the loss) and ``rank_test_score`` as scikit-learn's searches
    name them, ``selection_loss`` (with a selection split) and ``param_<name>`` columns
    (``None`` where the hyperparameter is inactive)."""
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
    # scikit-learn's SearchCV names (higher is better): code written for GridSearchCV
    # sorts and plots these; failed trials rank last
    results["mean_test_score"] = -results["loss"]
    results["rank_test_score"] = rankdata(
        np.nan_to_num(results["loss"], nan=np.inf), method="min"
    ).astype(int)
    if any("selection_loss" in t.info for t in trials):
        results["selection_loss"] = np.array(
            [t.info.get("selection_loss", np.nan) for t in trials], dtype=float
        )
    for name in names:
        results[f"param_{name}"] = np.array([t.config.get(name) for t in trials], dtype=object)
    return results


def _fresh(parameter: str, spec: Any) -> Any:
    """A component object as a fresh copy for this fit's study, as scikit-learn clones
    parameters: the object keeps the state of the study it serves, so one given to
    ``fit`` twice would carry the first fit's trials into the second."""
    if spec is None or isinstance(spec, str | Mapping):
        return spec
    try:
        return copy.deepcopy(spec)
    except Exception as error:  # a lock, an open file, a __deepcopy__ that raises
        raise ValueError(
            f"{parameter}: the object given cannot be copied for this fit "
            f"({type(error).__name__}: {error}); make it copyable or pass its registry name"
        ) from error


class _EnsemboSearch(BaseEstimator):
    _task_type = ""

    def __init__(
        self,
        space: Any = "",
        *,
        ensemble: Any = "posthoc",
        n_trials: int = 30,
        timeout: float | None = None,
        trial_timeout: float | None = None,
        memory_limit: int | str | None = None,
        cv: Any = 5,
        surrogate: Any = defaults.AUTO,
        selection: str = "argmin",
        selection_split: float | None = None,
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
        self.timeout = timeout
        self.trial_timeout = trial_timeout
        self.memory_limit = memory_limit
        self.cv = cv
        self.surrogate = surrogate
        self.selection = selection
        self.selection_split = selection_split
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
        checks.learner_seed("seed", self.seed, "for an estimator")
        if self.timeout is not None:
            checks.positive_seconds("timeout", self.timeout)
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
        check_selection(self.selection, self.selection_split)

    def _scoring(self, categorical: np.ndarray | None) -> dict[str, Any]:
        """How trials are scored, kept with the study: a refit with another ``cv``,
        ``loss``, categorical handling or selection split on the same storage is refused
        rather than mixing losses. The last two are recorded only when set, so that a
        study stored before they were recorded still resumes."""
        record = {"cv": described(self.cv), "loss": self._loss_record()}
        columns = [] if categorical is None else np.flatnonzero(categorical).tolist()
        if columns:
            record["categorical_features"] = columns
        if self.selection_split is not None:
            record["selection_split"] = float(self.selection_split)
        return record

    def _loss_record(self) -> Any:
        """The loss as recorded; the task's default, unset or given by name, in the
        spelling the stored study already has, since they score alike."""
        loss = described(self.loss)
        default = (None, DEFAULT_LOSS[self._task_type])
        stored = stored_scoring(self.storage, "loss")
        return stored if loss in default and stored in default else loss

    def __sklearn_is_fitted__(self) -> bool:
        """Fitted once there is an ensemble to predict with (what ``predict`` needs), so
        that ``check_is_fitted`` on the estimator or a Pipeline agrees with ``predict``."""
        return hasattr(self, "ensemble_")

    def fit(self, X: Any, y: Any, groups: Any = None) -> _EnsemboSearch:
        """Search on ``(X, y)``; ``groups`` (one label per row) go to a ``cv`` splitter
        that splits by groups, such as ``GroupKFold(5)``. A fit that raises leaves the
        estimator unfitted, an earlier fit's models dropped too (never half new, half
        old); only ``study_`` stays, when trials ran, for their errors to be read."""
        self._forget_fit()
        try:
            return self._search(X, y, groups)
        except BaseException:
            self._forget_refused_fit()
            raise

    def _search(self, X: Any, y: Any, groups: Any) -> _EnsemboSearch:
        """The body of ``fit``: it sets the fitted attributes as it goes."""
        self._check_params()
        limits = execution.trial_limits(self.trial_timeout, self.memory_limit)
        self.text_columns_ = TextColumns.learn(X)
        question_marks = holds_question_mark_cells(X, self.text_columns_)
        X, y = validate_data(
            self, self._encoded(X), y, ensure_all_finite="allow-nan",
            y_numeric=self._task_type == "regression",
        )
        if self._task_type == "classification":
            check_classification_targets(y)
            classes = np.unique(y)
            if len(classes) < 2:
                raise single_class_error(classes)
            self.classes_ = classes
        space = spaces.load(copy.deepcopy(self.space))  # sampling reseeds it; keep ours intact
        task = self._build_task(X, y, groups, space)
        fingerprint = data_fingerprint(X, y, task.groups_all)
        check_same_data(self.storage, (X, y, task.groups_all), task.validation_targets(),
                        question_mark_cells=question_marks)
        check_fixed_validation(self.ensemble, task.validation_targets())
        created = _new_study_file(self.storage)
        study = Study(
            space,
            surrogate=_fresh("surrogate", self.surrogate),
            ensemble=_fresh("ensemble", self.ensemble),
            loss=task.loss_spec,  # the strategy selects and combines by the trials' loss
            validation_targets=task.validation_targets(),
            classes=task.encoded_classes(),
            task=self._task_type,
            budget=int(self.n_trials),
            seed=int(self.seed),
            storage=self.storage,
            metadata={DATA_KEY: fingerprint, SCORING: self._scoring(task.categorical_features)},
        )
        # Set before the search: if no trial completes, the failed trials' errors are
        # in ``study_`` (and in the error message) for the user to look at.
        self.study_ = study
        try:
            # before any trial: a models folder another study file owns refuses this one
            # (after the study took the file's lock, so that the store's clean-up of
            # half-written models never touches another process's folder in use)
            store = artifact_store_for(self.storage)
            remaining = max(int(self.n_trials) - finished_count(study), 0)
            run_task(
                study, task, remaining, store=store, timeout=self.timeout, n_jobs=self.n_jobs,
                limits=limits,
            )
            final = finalize(
                study, task, store, selection=self.selection, refit=self.refit, limits=limits
            )
        except BaseException:
            if created is not None:  # a file holding no trial would refuse the corrected fit
                discard_if_nothing_ran(study, created)
            raise
        finally:  # the search is over: let another process load or resume the file
            study.close()
        self.best_estimator_ = final.best_estimator
        self.ensemble_ = final.ensemble_estimator
        self.best_params_ = dict(final.best_trial.config)
        self.best_score_ = float(final.best_trial.loss)
        self.best_index_ = final.best_trial.number
        self.cv_results_ = cv_results(study)
        self.n_failed_ = len(study.history.in_state(TrialState.FAILED))
        self.not_refitted_ = list(final.not_refitted)  # refits past trial_timeout/memory_limit
        return self

    def _forget_fit(self) -> None:
        """Drop what an earlier fit learned, so that a refused or failed fit leaves an
        unfitted estimator, not the old ensemble behind new feature counts and classes."""
        for name in [n for n in vars(self) if n.endswith("_") and not n.startswith("_")]:
            delattr(self, name)

    def _forget_refused_fit(self) -> None:
        """Forget what a fit that raised set, keeping ``study_`` only when trials ran in
        it (its failed trials' errors are the reason to look); a study with none is closed
        and holds nothing to read."""
        study = vars(self).get("study_")
        self._forget_fit()
        if study is not None and study.history.in_state(*_RAN):
            self.study_ = study

    def _build_task(self, X: np.ndarray, y: np.ndarray, groups: Any, space: Any) -> Task:
        """The task of this fit; column names in ``categorical_features`` are those of
        the DataFrame ``fit`` was given (``feature_names_in_``)."""
        categorical = categorical_mask(
            self.categorical_features, X.shape[1], getattr(self, "feature_names_in_", None)
        )
        if self.text_columns_ is not None:  # text columns are categorical, given or not
            text = self.text_columns_.mask(X.shape[1])
            categorical = text if categorical is None else categorical | text
        held_out = self.selection_split
        options = {
            "validation": self.cv,
            "loss": self.loss,
            "categorical_features": categorical,
            "selection_split": None if held_out is None else float(held_out),
            "groups": groups,
            "seed": int(self.seed),
            "threads": self.threads,
        }
        return _task(X, y, self._task_type, space, options)

    def __getstate__(self) -> dict[str, Any]:
        """Pickle the fitted models, not the live study (its storage file keeps it).
        The state is a copy: ``object.__getstate__`` hands back the live ``__dict__``,
        and editing it would drop ``study_`` from the estimator being pickled."""
        state = dict(super().__getstate__())
        if "study_" in state:
            state["study_"] = None
        return state

    def _encoded(self, X: Any) -> Any:
        """``X`` with the text columns of the fit as codes (see :mod:`.ml.text_columns`)."""
        text = getattr(self, "text_columns_", None)
        return X if text is None else text.encode(X)

    def _checked(self, X: Any) -> Any:
        """``X`` at predict: encoded as in ``fit``, then checked against it."""
        check_is_fitted(self, "ensemble_")
        return validate_data(self, self._encoded(X), ensure_all_finite="allow-nan", reset=False)

    def predict(self, X: Any) -> np.ndarray:
        X = self._checked(X)  # first: an unfitted estimator raises NotFittedError
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
        timeout: float | None = None,
        trial_timeout: float | None = None,
        memory_limit: int | str | None = None,
        cv: Any = 5,
        surrogate: Any = defaults.AUTO,
        selection: str = "argmin",
        selection_split: float | None = None,
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
            timeout=timeout,
            trial_timeout=trial_timeout,
            memory_limit=memory_limit,
            cv=cv,
            surrogate=surrogate,
            selection=selection,
            selection_split=selection_split,
            refit=refit,
            loss=loss,
            categorical_features=categorical_features,
            seed=seed,
            n_jobs=n_jobs,
            threads=threads,
            storage=storage,
        )

    def predict_proba(self, X: Any) -> np.ndarray:
        X = self._checked(X)
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
        timeout: float | None = None,
        trial_timeout: float | None = None,
        memory_limit: int | str | None = None,
        cv: Any = 5,
        surrogate: Any = defaults.AUTO,
        selection: str = "argmin",
        selection_split: float | None = None,
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
            timeout=timeout,
            trial_timeout=trial_timeout,
            memory_limit=memory_limit,
            cv=cv,
            surrogate=surrogate,
            selection=selection,
            selection_split=selection_split,
            refit=refit,
            loss=loss,
            categorical_features=categorical_features,
            seed=seed,
            n_jobs=n_jobs,
            threads=threads,
            storage=storage,
        )


__all__ = ["EnsemboClassifier", "EnsemboRegressor", "cv_results"]
