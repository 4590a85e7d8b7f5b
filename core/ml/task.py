"""The supervised-learning objective: data, an executable space and a validation scheme.

:class:`Task` scores one configuration of an executable space (``space.build(config)``
returns an unfitted sklearn estimator) on the training data: it fits a model per split
of its validation scheme, gathers the per-example validation predictions (out-of-fold
under k-fold), computes the loss from exactly those predictions, and returns them with
the fitted model(s) in an :class:`ensembo.Evaluation`.

Models are fitted on the original labels. For scoring, labels are encoded as class
indices ``0..k-1`` (positions in ``classes``), so trial predictions, the study's
validation targets and every loss agree on the meaning of a probability column
whatever the original label type.

An optional **selection split** (Lévesque ch. 3, ``-sel``) is carved once from the data
and never shown to the optimizer; every trial is also scored on it (``info``), and so is
an optional test set, so overfitting of the validation loss can be watched per trial.

Optional ``groups`` (one label per row: a patient, a site) go with the targets to the
validation scheme, which then keeps each group on one side of a split; the selection
split holds out whole groups too.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import joblib
import numpy as np
from sklearn.base import is_classifier, is_regressor
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GroupShuffleSplit, train_test_split

from ensembo import components, interrupts
from ensembo.errors import ExperimentError
from ensembo.loss_fit import DEFAULT_LOSS, check_loss_fits_task
from ensembo.ml.fitted_ensemble import FittedEnsemble
from ensembo.ml.learner_exit import exit_fails_the_trial
from ensembo.ml.predictions import InvalidPredictionError, predict_examples
from ensembo.ml.validation import (
    CrossValidation,
    Holdout,
    Split,
    ValidationScheme,
    can_stratify_folds,
    can_stratify_holdout,
    classes_rarer_than,
    holdout_sizes,
    validation_scheme,
)
from ensembo.threads import limited_threads
from ensembo.trials import Evaluation

logger = logging.getLogger(__name__)

TASK_TYPES = ("classification", "regression")


def _as_matrix(X: Any) -> np.ndarray:
    matrix = np.asarray(X, dtype=float)
    if matrix.ndim != 2:
        raise ExperimentError("data.X", f"features must be a 2-D array, got shape {matrix.shape}")
    return matrix


def _is_missing(label: Any) -> bool:
    try:
        return label is None or bool(label != label)  # NaN is the one value unequal to itself
    except TypeError:  # pandas.NA: its comparisons are NA too
        return True


def _missing(labels: np.ndarray) -> np.ndarray:
    """Which labels are NaN or None (only float and object arrays can hold them)."""
    if labels.dtype.kind == "f":
        return np.isnan(labels)
    if labels.dtype.kind == "O":
        return np.array([_is_missing(label) for label in labels], dtype=bool)
    return np.zeros(len(labels), dtype=bool)


def _as_groups(groups: Any, n_rows: int) -> np.ndarray | None:
    """One group label per row, or ``None``; a missing label would put its row in a
    group of its own (NaN never equals NaN) or fail deep inside the splitter."""
    if groups is None:
        return None
    labels = np.asarray(groups)
    if labels.ndim != 1:
        raise ExperimentError(
            "groups", f"must be 1-D, one group label per row, got shape {labels.shape}"
        )
    if len(labels) != n_rows:
        raise ExperimentError("groups", f"{n_rows} rows of features but {len(labels)} groups")
    missing = _missing(labels)
    if missing.any():
        row = int(np.argmax(missing))
        raise ExperimentError("groups", f"row {row} has no group (NaN or None); each row needs one")
    return labels


def _builder(
    space: Any, categorical_features: np.ndarray | None, seed: int, task: str
) -> Callable[[dict[str, Any]], Any]:
    """``config -> unfitted estimator`` through the executable space's
    ``build(config, *, categorical_features, random_state)``.

    The default configuration is built once, so a space that cannot build, or that
    builds the other kind of estimator (a regressor for a classification task), is
    refused before the first trial instead of failing every one."""
    build = getattr(space, "build", None)
    name = getattr(space, "name", space)
    try:
        if build is None:
            raise TypeError("it has no build(config)")
        default = build(space.default())
    except Exception as error:  # whatever the space raises, the user must hear which space
        raise ExperimentError("space", f"space {name!r} is not executable: {error}") from error
    other_kind = is_regressor if task == "classification" else is_classifier
    if other_kind(default):
        final = default.steps[-1][1] if hasattr(default, "steps") else default  # a Pipeline
        raise ExperimentError(
            "space", f"space {name!r} builds a {type(final).__name__}, not a model for {task}"
        )
    mask = (
        None
        if categorical_features is None or not np.any(categorical_features)
        else categorical_features
    )
    return lambda config: build(config, categorical_features=mask, random_state=seed)


class Task:
    """Scores configurations of ``space`` on ``(X, y)``; call :meth:`evaluate`.

    ``loss`` is a registered loss (default ``zero-one`` / ``mse``), applied per example
    to (encoded targets, predictions) and averaged. ``selection_split`` is the fraction
    of rows held out as the selection split. ``groups`` labels each row's group for a
    validation scheme that splits by groups. ``n_jobs`` fits the folds in parallel.
    ``threads`` caps the BLAS and OpenMP pools of each fit and prediction (default one
    thread: a search trains many small models, often beside other work; ``0`` leaves the
    learners' own defaults), see :mod:`ensembo.threads`.
    """

    def __init__(
        self,
        X: Any,
        y: Any,
        *,
        task: str,
        space: Any,
        validation: ValidationScheme | int | float | dict = 0.33,
        loss: Any = None,
        categorical_features: Sequence[bool] | None = None,
        selection_split: float | None = None,
        X_test: Any = None,
        y_test: Any = None,
        groups: Any = None,
        seed: int = 0,
        n_jobs: int | None = None,
        threads: int = 1,
    ):
        if task not in TASK_TYPES:
            raise ExperimentError("task", f"unknown task {task!r}; valid: {', '.join(TASK_TYPES)}")
        self.task = task
        self.space = space
        self.validation = validation_scheme(validation)
        self.loss_spec = loss or DEFAULT_LOSS[task]
        self.loss = components.build("loss", self.loss_spec)
        self._one_hot_warned: set[str] = set()
        self.categorical_features = (
            None if categorical_features is None else np.asarray(categorical_features, dtype=bool)
        )
        self.seed = int(seed)
        self.n_jobs = n_jobs
        if isinstance(threads, bool) or not isinstance(threads, int | np.integer) or threads < 0:
            raise ExperimentError(
                "threads", f"must be a non-negative integer (0: no limit), got {threads!r}"
            )
        self.threads = int(threads)
        self.build = _builder(space, self.categorical_features, self.seed, task)
        X, y = _as_matrix(X), np.asarray(y)
        if len(X) != len(y):
            raise ExperimentError("data.y", f"{len(X)} rows of features but {len(y)} targets")
        self.groups_all = _as_groups(groups, len(X))
        self.classes = np.unique(y) if self.is_classification else None
        targets = self._encode(y)
        if len(targets):
            n_classes = 0 if self.classes is None else len(self.classes)
            check_loss_fits_task(self.loss, self.loss_spec, task, targets, n_classes)
        if selection_split:
            self.optimize_rows, self.selection_rows = self._hold_out(targets, selection_split)
        else:
            self.optimize_rows, self.selection_rows = np.arange(len(y)), None
        # y: labels the models are fitted on; targets: what losses compare against.
        self.X_all, self.y_all, self.targets_all = X, y, targets
        self.X, self.y = X[self.optimize_rows], y[self.optimize_rows]
        self.targets = targets[self.optimize_rows]
        self.groups = None if self.groups_all is None else self.groups_all[self.optimize_rows]
        self.X_test = None if X_test is None else _as_matrix(X_test)
        self.targets_test = None if y_test is None else self._encode(np.asarray(y_test))
        self.splits(0)  # a scheme that cannot split these rows fails here, not per trial
        self._warn_if_validation_unstratified()

    # --- targets ------------------------------------------------------------------------

    @property
    def is_classification(self) -> bool:
        return self.task == "classification"

    def _encode(self, y: np.ndarray) -> np.ndarray:
        if not self.is_classification:
            return y.astype(float)
        positions = np.searchsorted(self.classes, y)
        clipped = np.minimum(positions, len(self.classes) - 1)
        unknown = self.classes[clipped] != y
        if np.any(unknown):
            raise ExperimentError(
                "data.y_test",
                f"labels {sorted(set(y[unknown].tolist()))[:5]} never seen in training",
            )
        return clipped

    def _stratify_selection(self, targets: np.ndarray, fraction: float) -> bool:
        """Stratify the selection split when scikit-learn can; otherwise hold out rows
        unstratified, as for the validation holdout, and say why."""
        if not self.is_classification:
            return False
        shortfall = self._holdout_shortfall(targets, fraction, "selection")
        if shortfall:
            logger.warning("selection_split=%g is not stratified: %s", fraction, shortfall)
        return shortfall is None

    # --- stratification ------------------------------------------------------------------

    def _label(self, code: int) -> str:
        """An encoded class as the user's label, for a message: ``'a'``, ``3``."""
        return repr(self.classes[code : code + 1].tolist()[0])

    def _classes_have(self, counts: dict[Any, int], *, with_counts: bool = True) -> str:
        """``class 'a' (4 rows) has`` / ``classes 'a' (4 rows), 'b' (1 row) have``."""

        def named(code: Any, count: int) -> str:
            rows = f" ({count} row{'s' if count > 1 else ''})" if with_counts else ""
            return f"{self._label(code)}{rows}"

        listed = ", ".join(named(code, count) for code, count in counts.items())
        return f"class {listed} has" if len(counts) == 1 else f"classes {listed} have"

    def _holdout_shortfall(self, targets: np.ndarray, ratio: float, side: str) -> str | None:
        """Why a holdout of ``ratio`` of these rows cannot be stratified, and what to do;
        ``None`` when it can, or with a single class (nothing to stratify)."""
        n_classes = len(np.unique(targets))
        if n_classes < 2 or can_stratify_holdout(targets, ratio):
            return None
        single = classes_rarer_than(targets, 2)
        if single:
            return (
                f"{self._classes_have(single, with_counts=False)} a single row, which "
                f"cannot be on both sides of a split, so the {side} rows are drawn "
                "unstratified (merge or drop such classes to stratify)"
            )
        n_rows = len(targets)
        kept, held_out = holdout_sizes(n_rows, ratio)
        if 2 * n_classes > n_rows:
            advice = f"{n_rows} rows are too few to stratify {n_classes} classes; use k-fold"
        else:
            advice = (
                f"a fraction from {n_classes / n_rows:.3g} to {1 - n_classes / n_rows:.3g} "
                "is stratified"
            )
        return (
            f"its {n_rows} rows split into {kept} kept and {held_out} {side} rows, and "
            f"stratifying needs a row of each of the {n_classes} classes on both sides; the "
            f"{side} rows are drawn unstratified, so one side may lack some classes ({advice})"
        )

    def _warn_if_validation_unstratified(self) -> None:
        """Say once, naming the classes, when the validation scheme asked to stratify
        cannot fully do it (the splits are drawn per trial, the warning is not)."""
        if not self.is_classification or not getattr(self.validation, "stratify", False):
            return
        if isinstance(self.validation, Holdout):
            shortfall = self._holdout_shortfall(self.targets, self.validation.ratio, "validation")
            if shortfall:
                logger.warning(
                    "validation (cv) holdout ratio %g is not stratified: %s",
                    self.validation.ratio, shortfall,
                )
        elif isinstance(self.validation, CrossValidation):
            self._warn_of_classes_rarer_than_folds(self.validation.folds)

    def _warn_of_classes_rarer_than_folds(self, folds: int) -> None:
        """A class with fewer rows than folds is missing from some validation folds. As
        in ``StratifiedKFold``, the other classes stay stratified, and the rare class's
        rows go to different folds (each fold's model trains on the rest of them)."""
        rare = classes_rarer_than(self.targets, folds)
        if not rare or len(np.unique(self.targets)) < 2:
            return
        fewest = min(rare.values())
        if fewest >= 2:
            advice = f"use at most {fewest} folds (cv={fewest} / validation: {fewest}), or merge"
        else:
            advice = "merge or drop"
        done = (
            "the other classes stay stratified"
            if can_stratify_folds(self.targets, folds)
            else "no class fills every fold, so the folds are not stratified"
        )
        logger.warning(
            "validation (cv) %d-fold: %s fewer rows than the %d folds, so some validation "
            "folds lack them; %s. To stratify every class, %s the rare classes",
            folds, self._classes_have(rare), folds, done, advice,
        )

    def _hold_out(self, targets: np.ndarray, fraction: float) -> tuple[np.ndarray, np.ndarray]:
        """The rows searched on and the selection rows. With groups, whole groups are
        held out: a selection row whose group the models trained on would flatter them."""
        rows = np.arange(len(targets))
        if self.groups_all is None:
            stratify = targets if self._stratify_selection(targets, fraction) else None
            searched, held_out = train_test_split(
                rows, test_size=fraction, random_state=self.seed, stratify=stratify
            )
        else:
            splitter = GroupShuffleSplit(n_splits=1, test_size=fraction, random_state=self.seed)
            try:
                searched, held_out = next(splitter.split(rows, groups=self.groups_all))
            except ValueError as error:
                raise ExperimentError(
                    "selection_split", f"cannot hold out whole groups: {error}"
                ) from error
        return np.sort(searched), np.sort(held_out)

    # --- what the study needs ----------------------------------------------------------

    def splits(self, iteration: int) -> tuple[Split, ...]:
        return self.validation.splits(
            self.targets,
            groups=self.groups,
            classification=self.is_classification,
            seed=self.seed,
            iteration=iteration,
        )

    def validation_targets(self) -> np.ndarray | None:
        """The targets every trial's predictions refer to, or ``None`` when the
        validation set changes per trial (reshuffled holdout)."""
        if self.validation.covers_all_rows:
            return self.targets
        if not self.validation.fixed_validation:
            return None
        return self.targets[self.splits(0)[0].validation]

    def encoded_classes(self) -> np.ndarray | None:
        """The classes as the targets encode them (``0..k-1``), all of them even when
        a holdout's validation rows lack one, or ``None`` for regression."""
        return None if self.classes is None else np.arange(len(self.classes))

    def score(self, y_true: np.ndarray, predictions: np.ndarray) -> float:
        """Mean per-example loss of ``predictions`` against encoded ``y_true``."""
        losses = np.asarray(self.loss(y_true, predictions), dtype=float)
        loss = float(np.mean(losses))
        if not np.isfinite(loss):
            raise InvalidPredictionError(
                f"loss {self.loss_spec!r} is not finite ({loss}) on these predictions"
            )
        return loss

    def loss_of(self, model: Any, X: Any, y: Any) -> float:
        """Loss of a fitted model on labelled data ``(X, y)`` (original labels)."""
        return self.score(self._encode(np.asarray(y)), self.predict(model, _as_matrix(X)))

    # --- one configuration ------------------------------------------------------------

    def _fit_split(self, config: dict[str, Any], split: Split) -> tuple[Any, list[str]]:
        return self._fit_quietly(config, self.X[split.train], self.y[split.train])

    def _fit_quietly(
        self, config: dict[str, Any], X: np.ndarray, y: np.ndarray
    ) -> tuple[Any, list[str]]:
        """Fit, keeping the learner's convergence warnings out of the terminal: many
        configurations of a search stop early by design; they are kept in the trial.
        A Ctrl-C the learner swallowed is raised after its fit, so the trial (or the
        final refit) is interrupted rather than kept with a half-trained model."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            model = self.build(config)
            with (
                limited_threads(self.threads),
                interrupts.interrupt_not_swallowed(),
                exit_fails_the_trial(model, "fit"),
            ):
                model.fit(X, y)
        for warning in caught:
            if not issubclass(warning.category, ConvergenceWarning):
                warnings.warn_explicit(
                    warning.message, warning.category, warning.filename, warning.lineno
                )
        return model, sorted(
            {
                str(w.message).splitlines()[0]
                for w in caught
                if issubclass(w.category, ConvergenceWarning)
            }
        )

    def fit(
        self, config: dict[str, Any], X: np.ndarray | None = None, y: np.ndarray | None = None
    ) -> Any:
        """A fresh model of ``config`` fitted on ``(X, y)`` (default: every row, the
        selection split included)."""
        model, _ = self._fit_quietly(
            config, self.X_all if X is None else X, self.y_all if y is None else y
        )
        return model

    def evaluate(self, config: dict[str, Any], iteration: int = 0) -> Evaluation:
        """Fit and score ``config``; ``iteration`` (the trial number) drives reshuffling.

        Raises whatever the estimator raises (:class:`~ensembo.ml.learner_exit.LearnerExit`
        for its ``sys.exit()``), or :class:`InvalidPredictionError` for unusable
        predictions: the caller records the trial as failed.
        """
        splits = self.splits(iteration)
        fitted = joblib.Parallel(n_jobs=self.n_jobs)(
            joblib.delayed(self._fit_split)(config, split) for split in splits
        )
        models = [model for model, _ in fitted]
        self._warn_if_one_hot(models[0])
        convergence = sorted({message for _, messages in fitted for message in messages})
        predictions = self._validation_predictions(models, splits)
        rows = np.arange(len(self.y)) if self.validation.covers_all_rows else splits[0].validation
        loss = self.score(self.targets[rows], predictions)
        model = (
            models[0]
            if len(models) == 1
            else FittedEnsemble(members=models, weights=[1.0] * len(models), classes=self.classes)
        )
        info: dict[str, Any] = {"convergence_warnings": convergence} if convergence else {}
        if self.selection_rows is not None:
            info["selection_loss"] = self.score(
                self.targets_all[self.selection_rows],
                self.predict(model, self.X_all[self.selection_rows]),
            )
        if self.X_test is not None:
            info["test_loss"] = self.score(self.targets_test, self.predict(model, self.X_test))
        return Evaluation(loss=loss, predictions=predictions, model=model, info=info)

    def _warn_if_one_hot(self, model: Any) -> None:
        """A loss that scores probabilities (log-loss) on a model without
        ``predict_proba`` (an ``SVC`` without ``probability=True``) sees one-hot
        predictions: every error costs -log(eps), so the search ranks error counts
        scaled by 34.5. Said once per estimator class."""
        if (
            self.classes is None
            or not getattr(self.loss, "scores_probabilities", False)
            or hasattr(model, "predict_proba")
        ):
            return
        name = type(model).__name__
        if name not in self._one_hot_warned:
            self._one_hot_warned.add(name)
            logger.warning(
                "loss %r scores class probabilities, but %s has no predict_proba: its "
                "predictions are one-hot, so the loss only counts errors, each at -log(eps)",
                self.loss_spec, name,
            )

    def predict(self, model: Any, X: np.ndarray) -> np.ndarray:
        """Per-example predictions of a fitted model, in the trial format."""
        with limited_threads(self.threads), exit_fails_the_trial(model, "predict"):
            return predict_examples(model, X, self.classes)

    def _validation_predictions(self, models: list[Any], splits: tuple[Split, ...]) -> np.ndarray:
        if not self.validation.covers_all_rows:
            return self.predict(models[0], self.X[splits[0].validation])
        shape = (len(self.y),) if self.classes is None else (len(self.y), len(self.classes))
        total, counts = np.zeros(shape), np.zeros(len(self.y))
        for model, split in zip(models, splits, strict=True):
            total[split.validation] += self.predict(model, self.X[split.validation])
            counts[split.validation] += 1
        return total / (counts if total.ndim == 1 else counts[:, None])
