"""The refusal of a stored search fitted on other data names the cause that text cells
'?' are missing now only where it can apply: a fit on a DataFrame with text columns.
It was appended after every fit, plain arrays too."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification

from ensembo.errors import StorageError
from ensembo.sklearn import EnsemboClassifier

QUESTION_MARKS = "text cells '?'"


def _model(tree_space, path):
    return EnsemboClassifier(tree_space, n_trials=2, cv=3, surrogate=None, storage=path)


@pytest.fixture
def data():
    return make_classification(n_samples=60, n_features=4, random_state=0)


def test_a_fit_on_plain_arrays_is_not_told_about_text_cells(tmp_path, tree_space, data):
    X, y = data
    path = tmp_path / "skl.db"
    _model(tree_space, path).fit(X, y)
    with pytest.raises(StorageError, match="holds a search fitted on different data") as error:
        _model(tree_space, path).fit(X[:45], y[:45])
    message = str(error.value)
    assert QUESTION_MARKS not in message and "28 Nov 2026" not in message
    assert "(X, y or groups differ from this fit's), whose trials cannot be reused" in message


def test_a_fit_on_a_dataframe_with_text_columns_is_told_about_text_cells(
    tmp_path, tree_space, data
):
    X, y = data
    frame = pd.DataFrame(X, columns=list("abcd")).assign(
        colour=np.where(X[:, 0] > 0, "red", "?"))
    path = tmp_path / "skl.db"
    _model(tree_space, path).fit(frame, y)
    with pytest.raises(StorageError, match="holds a search fitted on different data") as error:
        _model(tree_space, path).fit(frame.iloc[:45], y[:45])
    assert f"{QUESTION_MARKS}, missing since 28 Nov 2026, were a level" in str(error.value)
