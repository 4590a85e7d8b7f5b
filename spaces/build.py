"""Plans -> unfitted scikit-learn objects.

``build`` returns a bare estimator for one step and a ``Pipeline`` otherwise. With
``categorical_features`` (a boolean mask or column indices of the float input matrix,
categories coded as numbers, NaN for missing), the steps before the model apply to the
numeric columns only and categorical columns go through the space's
``categorical_steps`` (by default most-frequent imputation and one-hot encoding), side by
side in a ``ColumnTransformer``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ensembo.errors import SpaceError
from ensembo.spaces import components
from ensembo.spaces.plan import BuildPlan, EstimatorPlan


def instantiate(plan: EstimatorPlan, random_state: int | None = None) -> Any:
    factory = components.resolve(plan.estimator)
    arguments = {
        key: instantiate(value, random_state) if isinstance(value, EstimatorPlan) else value
        for key, value in plan.arguments
    }
    if random_state is not None and "random_state" not in arguments:
        accepted = components.accepted_arguments(factory)
        if accepted is not None and "random_state" in accepted:
            arguments["random_state"] = random_state
    try:
        made = factory(**arguments)
    except TypeError as error:
        raise SpaceError(
            "", f"estimator {plan.estimator!r} rejected arguments {sorted(arguments)}: {error}"
        ) from None
    if _drops_empty_columns(made) and "keep_empty_features" not in arguments:
        made.set_params(keep_empty_features=True)
    return made


def _drops_empty_columns(made: Any) -> bool:
    """A ``SimpleImputer`` drops a column missing in every row it is fitted on (a rarely
    filled field, in one fold), and the scaler or encoder after it got no column: every
    trial failed "Found array with 0 feature(s)". Unless a space says otherwise, such a
    column is kept, filled with 0 (the imputer's ``keep_empty_features``)."""
    from sklearn.impute import SimpleImputer

    return isinstance(made, SimpleImputer)


def build(
    plan: BuildPlan,
    *,
    categorical_features: Sequence[bool] | Sequence[int] | np.ndarray | None = None,
    random_state: int | None = None,
) -> Any:
    from sklearn.pipeline import Pipeline

    steps = _instances(plan.steps, random_state)
    categorical = _categorical_columns(categorical_features)
    if categorical is not None and categorical[0].size:
        model = steps[-1] if steps else None
        encode = (
            _default_encoding()
            if plan.categorical_steps is None
            else _pipeline_or_passthrough(_instances(plan.categorical_steps, random_state))
        )
        features = _column_transformer(steps[:-1], encode, categorical)
        steps = [("features", features)] + ([model] if model else [])
    if not steps:
        raise SpaceError("", "this configuration builds nothing (every step skipped)")
    if len(steps) == 1:
        return steps[0][1]
    return Pipeline(steps)


def _categorical_columns(mask) -> tuple[np.ndarray, int | None] | None:
    """(categorical column indices, number of columns if known) or None."""
    if mask is None:
        return None
    array = np.asarray(mask)
    if array.dtype == bool:
        return np.flatnonzero(array), array.size
    return array.astype(int).ravel(), None


def _instances(steps, random_state: int | None) -> list[tuple[str, Any]]:
    return [(name, instantiate(step, random_state)) for name, step in steps]


def _pipeline_or_passthrough(steps: list[tuple[str, Any]]) -> Any:
    from sklearn.pipeline import Pipeline

    return Pipeline(steps) if steps else "passthrough"


def _default_encoding() -> Any:
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder

    return Pipeline(
        [
            # a column missing in every fit row (a rarely filled field, in one fold) is
            # kept: dropped, it left the encoder no column and failed every trial
            ("impute", SimpleImputer(strategy="most_frequent", keep_empty_features=True)),
            ("onehot", OneHotEncoder(handle_unknown="ignore", sparse_output=False)),
        ]
    )


def _column_transformer(numeric_steps: list[tuple[str, Any]], encode: Any, categorical) -> Any:
    from sklearn.compose import ColumnTransformer

    columns, n_columns = categorical
    numeric = _pipeline_or_passthrough(numeric_steps)
    if n_columns is not None:
        numeric_columns = np.setdiff1d(np.arange(n_columns), columns)
        transformers = [("numeric", numeric, numeric_columns), ("categorical", encode, columns)]
        return ColumnTransformer(transformers, sparse_threshold=0.0)
    # Width unknown until fit: every column that is not categorical is numeric.
    return ColumnTransformer(
        [("categorical", encode, columns)], remainder=numeric, sparse_threshold=0.0
    )
