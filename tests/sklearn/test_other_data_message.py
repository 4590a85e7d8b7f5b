"""The refusal of a stored search fitted on other data names the cause that text cells
'?' are missing now only where it can apply: a fit on a DataFrame whose text columns
hold such cells. It was appended after every fit, plain arrays too, then after every
fit on text columns."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification

from ensembo.errors import StorageError
from ensembo.ml.stored_search import holds_question_mark_cells
from ensembo.ml.text_columns import TextColumns
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


@pytest.mark.parametrize(("other_text", "told"), [("?", True), ("blue", False)])
def test_a_fit_on_text_columns_is_told_about_text_cells_only_if_it_has_them(
    tmp_path, tree_space, data, other_text, told
):
    """A DataFrame without cells '?' is read as it was before 28 Nov 2026."""
    X, y = data
    frame = pd.DataFrame(X, columns=list("abcd")).assign(
        colour=np.where(X[:, 0] > 0, "red", other_text))
    path = tmp_path / "skl.db"
    _model(tree_space, path).fit(frame, y)
    with pytest.raises(StorageError, match="holds a search fitted on different data") as error:
        _model(tree_space, path).fit(frame.iloc[:45], y[:45])
    cause = f"{QUESTION_MARKS}, missing since 28 Nov 2026, were a level"
    assert (cause in str(error.value)) is told


def test_a_padded_question_mark_in_a_category_column_counts_and_a_missing_cell_does_not():
    frame = pd.DataFrame({"colour": pd.Categorical(["red", " ? ", None])})
    assert holds_question_mark_cells(frame, TextColumns.learn(frame))
    frame = pd.DataFrame({"colour": ["red", None, np.nan, ""], "n": [1.0, 2.0, 3.0, 4.0]})
    assert not holds_question_mark_cells(frame, TextColumns.learn(frame))
    assert not holds_question_mark_cells(np.zeros((2, 2)), None)
