"""A fitted estimator keeps in memory only the models it predicts with (leak audit,
finding 3: ``study_.models`` held every trial's model, also with ``storage=``, where
they are on disk, so memory grew by one model per trial)."""

from __future__ import annotations

import gc
import weakref

import numpy as np
from sklearn.datasets import make_classification

from ensembo.ml import artifacts
from ensembo.sklearn import EnsemboClassifier


def _data():
    return make_classification(n_samples=120, n_features=5, random_state=0)


def test_a_fitted_estimator_frees_the_models_it_does_not_predict_with(monkeypatch, tree_space):
    X, y = _data()
    stored = []
    put = artifacts.MemoryArtifactStore.put

    def watched(self, number, model):
        stored.append(weakref.ref(model))
        put(self, number, model)

    monkeypatch.setattr(artifacts.MemoryArtifactStore, "put", watched)
    model = EnsemboClassifier(tree_space, n_trials=5, cv=3, surrogate=None, seed=0).fit(X, y)
    gc.collect()
    alive = sum(ref() is not None for ref in stored)
    used = set(model.study_.ensemble.members) | {model.best_index_}
    assert len(stored) == 5
    assert alive <= len(used) < 5  # was 5: every trial's model, through study_.models
    np.testing.assert_allclose(model.predict_proba(X).sum(axis=1), 1.0)


def test_with_storage_no_model_is_kept_in_the_study_and_predictions_match(tmp_path, tree_space):
    X, y = _data()
    options = {"n_trials": 6, "cv": 3, "surrogate": None, "seed": 0}
    on_disk = EnsemboClassifier(tree_space, storage=tmp_path / "s.db", **options).fit(X, y)
    in_memory = EnsemboClassifier(tree_space, **options).fit(X, y)
    assert on_disk.study_.models == {} and in_memory.study_.models == {}  # were 6 each
    assert len(list((tmp_path / "s.models").glob("trial-*.joblib"))) == 6
    assert on_disk.study_.ensemble.members == in_memory.study_.ensemble.members
    np.testing.assert_array_equal(on_disk.predict_proba(X), in_memory.predict_proba(X))
