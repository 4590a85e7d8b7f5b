"""A stored search belongs to one training set: the estimators' guard against resuming it
on other data.

``EnsemboClassifier(storage=...)`` fitted again on the same data resumes its search. A
cloned estimator in ``cross_val_score`` or a re-run notebook cell keeps the same
``storage`` with other rows, whose stored trials were scored elsewhere and must not be
reused: the data's digest is stored with the study and compared before any trial.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

import joblib
import numpy as np

from ensembo.datasets import is_missing_value
from ensembo.errors import StorageError
from ensembo.storage import Storage, open_existing_storage, study_file_path
from ensembo.stored_study import SCORING

#: Study metadata key of the training data's digest (see :func:`check_same_data`).
DATA_KEY = "sklearn_data"


def data_fingerprint(X: np.ndarray, y: np.ndarray, groups: np.ndarray | None = None) -> str:
    """A digest of the training data. Stored with the study, it tells a refit on the
    same data (resume the search) from a fit on other data, whose stored trials were
    scored on other rows and must not be reused (a cloned estimator in
    ``cross_val_score`` or a re-run notebook cell keeps the same ``storage``).

    ``y`` counts by its values, not its dtype: labels as a NumPy string array or a
    pandas Series of objects, or as int32 and int64, are the same targets. Other groups
    give other splits, so they count when given, as the partition they make (codes of
    their sorted labels). Left out without them, so that a study stored before
    ``groups`` existed still resumes."""
    targets = _same_values(y)
    if groups is None:
        return joblib.hash((X, targets))
    return joblib.hash((X, targets, _partition(groups)))


def _same_values(y: np.ndarray) -> Any:
    """``y`` in a form that equal values share, whatever their dtype."""
    y = np.asarray(y)
    if y.dtype.kind in "biuf":
        return y.astype(np.float64)
    return [str(label) for label in y.tolist()]


def _partition(groups: Any) -> np.ndarray:
    return np.unique(np.asarray(groups), return_inverse=True)[1].ravel()


def _legacy_fingerprint(X: np.ndarray, y: np.ndarray, groups: np.ndarray | None) -> str:
    """The digest studies stored before 28 Nov 2026 kept (``y`` with its dtype)."""
    if groups is None:
        return joblib.hash((X, y))
    return joblib.hash((X, y, _partition(groups)))


def _stored_meta(storage: Any) -> dict[str, Any] | None:
    """The study metadata already kept in ``storage``, or ``None`` for a new study.

    Reads without creating or altering a file; a file that holds no study is left to
    :class:`~ensembo.Study` to open (and report) as before."""
    if isinstance(storage, Storage):
        return storage.read_meta()
    try:  # the file the study opens: from "~/run.db" the check read "./~/run.db", none
        path = study_file_path(storage)
    except StorageError:  # an empty path or a folder: the study refuses it, naming it
        return None
    if path is None or not path.is_file():
        return None
    try:
        opened = open_existing_storage(storage, read_only=True)
    except StorageError:
        return None
    try:
        return opened.read_meta()
    finally:
        close = getattr(opened, "close", None)
        if close is not None:
            close()


def _data_differs(storage: Any, question_mark_cells: bool) -> StorageError:
    """The refusal, with the way out: a new path, or deleting the old study.

    The cause that cells '?' are missing now is named only for a fit whose text columns
    hold such cells: the same data as stored is read as before otherwise, so it cannot
    be the cause (it was named after every fit on plain arrays, then on any text)."""
    path = study_file_path(storage)
    if path is None:
        way_out = "pass a new storage"
    else:
        models = path.with_name(path.stem + ".models")  # where artifact_store_for keeps them
        also = f" and {models}/" if models.is_dir() else ""
        way_out = f"give this fit a new storage path, or delete {path}{also} to start over"
    question_marks = (", or a DataFrame's text cells '?', missing since 28 Nov 2026, were "
                      "a level when it was stored" if question_mark_cells else "")
    return StorageError(
        f"storage {storage} holds a search fitted on different data (X, y or groups differ "
        f"from this fit's{question_marks}), whose trials cannot be reused: {way_out}"
    )


def described(value: Any) -> Any:
    """``value`` as stored JSON: a number, string or None as it is (``np.int64(3)`` as
    3), a mapping as the repr of its dict with sorted keys (the order it was written in
    does not matter), else its repr (a splitter such as ``KFold(5)``, whose repr lists
    all its parameters)."""
    if value is None or isinstance(value, str | bool):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    return repr(dict(sorted(value.items())) if isinstance(value, Mapping) else value)


def holds_question_mark_cells(X: Any, text_columns: Any) -> bool:
    """Whether a text column of the fit's ``X`` (its ``TextColumns``, None without any)
    has a cell '?': missing since 28 Nov 2026 and a level before, so that the same
    DataFrame is other data for a search stored before then."""
    if text_columns is None:
        return False
    return any(
        not is_missing_value(cell) and str(cell).strip() == "?"
        for column in text_columns.levels
        for cell in X[column]
    )


def check_same_data(
    storage: Any, data: tuple[np.ndarray, np.ndarray, np.ndarray | None], validation_targets: Any,
    question_mark_cells: bool = False,
) -> None:
    """Refuse, before any trial, to resume a stored search on other ``data`` (X, y,
    groups); ``question_mark_cells``: a text column of the fit's X (a DataFrame, encoded
    in ``data``) holds cells '?' (:func:`holds_question_mark_cells`), which the refusal
    then names as a possible cause.

    The stored digest of the data decides (the current one, or the one studies stored
    before it kept); a study stored without one (not started by these estimators) is
    compared by its validation targets instead."""
    meta = _stored_meta(storage)
    if meta is None:
        return
    stored = (meta.get("metadata") or {}).get(DATA_KEY)
    if stored is not None:
        same = stored in (data_fingerprint(*data), _legacy_fingerprint(*data))
    else:
        targets = meta.get("validation_targets")
        same = (targets is None) == (validation_targets is None) and (
            targets is None or np.array_equal(np.asarray(targets), validation_targets)
        )
    if not same:
        raise _data_differs(storage, question_mark_cells)


def stored_scoring(storage: Any, key: str) -> Any:
    """What a study already in ``storage`` recorded under ``key`` of its scoring
    record, or ``None``."""
    meta = _stored_meta(storage) or {}
    return ((meta.get("metadata") or {}).get(SCORING) or {}).get(key)
