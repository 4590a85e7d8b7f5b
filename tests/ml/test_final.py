"""Final selection (argmin, posterior mean, selection split), refit, artifact stores."""

from __future__ import annotations

import numpy as np
import pytest

from ensembo import Study
from ensembo.ensemble import Ensemble
from ensembo.errors import ExperimentError, StorageError
from ensembo.ml import (
    DiskArtifactStore,
    FittedEnsemble,
    MemoryArtifactStore,
    Task,
    artifact_store_for,
    finalize,
    run_task,
    select_trial,
)
from ensembo.ml.final import ensemble_validation_loss


def _search(space, X, y, n_trials=6, *, loss="zero-one", ensemble="best", **task_options):
    task = Task(X, y, task="classification", space=space, validation=0.3, loss=loss,
                **task_options)
    study = Study(
        space,
        surrogate=None,
        validation_targets=task.validation_targets(),
        loss=loss,
        task="classification",
        ensemble=ensemble,
    )
    store = MemoryArtifactStore()
    run_task(study, task, n_trials, store=store)
    return task, study, store


def test_refit_changes_the_models_but_not_the_selection(tree_only_space, classification_data):
    X, y = classification_data
    task, study, store = _search(tree_only_space, X, y)
    kept = finalize(study, task, store, refit=False)
    refitted = finalize(study, task, store, refit=True)
    assert kept.best_trial == refitted.best_trial == study.best_trial
    assert kept.ensemble == refitted.ensemble
    assert kept.best_estimator is store.get(kept.best_trial.number)
    assert refitted.best_estimator is not kept.best_estimator
    # the refitted tree saw every row, the stored one only the training split
    assert refitted.best_estimator.tree_.n_node_samples[0] == len(y)
    assert kept.best_estimator.tree_.n_node_samples[0] < len(y)


def test_ensemble_estimator_averages_member_probabilities(tree_only_space, classification_data):
    X, y = classification_data
    task, study, store = _search(tree_only_space, X, y)
    first, second = (t.number for t in study.trials[:2])
    ensemble = FittedEnsemble(
        members=[store.get(first), store.get(second)], weights=[3, 1], classes=task.classes
    )
    expected = 0.75 * store.get(first).predict_proba(X) + 0.25 * store.get(second).predict_proba(X)
    np.testing.assert_allclose(ensemble.predict_proba(X), expected)
    assert set(ensemble.predict(X)) <= set(task.classes)


def test_the_fitted_ensemble_and_its_loss_follow_the_strategys_vote(
    tree_only_space, classification_data
):
    """An ``eo`` ensemble is a majority vote (refilled with zero-one) also in a log-loss
    study: the fitted ensemble predicts the vote shares, and its validation loss is the
    log-loss of those shares, not of averaged probabilities."""
    X, y = classification_data
    task, study, store = _search(tree_only_space, X, y, n_trials=8, loss="log-loss",
                                 ensemble={"name": "eo", "size": 3})
    final = finalize(study, task, store)
    ensemble = final.ensemble
    rows = task.splits(0)[0].validation
    probabilities = [store.get(n).predict_proba(task.X[rows]) for n in ensemble.members]
    shares = sum(w * np.eye(3)[np.argmax(p, axis=1)]
                 for w, p in zip(ensemble.weights, probabilities, strict=True))
    assert len(ensemble) == 3
    np.testing.assert_allclose(final.ensemble_estimator.predict_proba(task.X[rows]), shares)
    assert ensemble_validation_loss(study, task, ensemble) == pytest.approx(
        task.score(task.validation_targets(), shares))


def test_the_validation_loss_is_scored_at_the_ensemble_size():
    """sigmoid-margin solves its scale for m: a 12-member ensemble is scored as 12 voters,
    as the strategy scored it, not as the size 1 of its normalized weights."""
    from types import SimpleNamespace

    from ensembo.ensemble import Ensemble, EnsembleContext
    from ensembo.plugins.losses.ensemble_loss import weighted_ensemble_loss
    from ensembo.plugins.losses.margins import SigmoidMarginLoss
    from ensembo.trials import History, Trial

    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 40)
    predictions = [np.eye(2)[np.where(rng.random(40) < 0.7, y, 1 - y)] for _ in range(12)]
    history = History([Trial(number=n, config={}, state="complete", loss=0.3, predictions=p)
                       for n, p in enumerate(predictions)])
    study = SimpleNamespace(context=EnsembleContext(y_true=y), history=history)
    task = SimpleNamespace(loss=SigmoidMarginLoss())
    ensemble = Ensemble.from_counts({n: 1 for n in range(12)})
    as_optimized = weighted_ensemble_loss(task.loss, y, np.stack(predictions), np.ones(12))
    assert ensemble_validation_loss(study, task, ensemble) == pytest.approx(as_optimized)


class _FixedMeanSurrogate:
    """Predicts a given mean per trial: lets the test see which rule chose."""

    def __init__(self, means):
        self.means = np.asarray(means, dtype=float)

    def fit(self, batch, y, rng):
        self.fitted_on = y

    def predict(self, batch):
        return self.means, np.ones_like(self.means)


def test_posterior_mean_selection_follows_the_surrogate_mean(tree_only_space, classification_data):
    X, y = classification_data
    _, study, _ = _search(tree_only_space, X, y, n_trials=5)
    worst = max(study.trials, key=lambda t: t.loss).number
    means = np.ones(5)
    means[worst] = 0.0
    surrogate = _FixedMeanSurrogate(means)
    chosen = select_trial(study.history, study.space, "posterior-mean", surrogate=surrogate)
    assert chosen.number == worst
    np.testing.assert_allclose(surrogate.fitted_on, [t.loss for t in study.trials])
    assert select_trial(study.history, study.space, "argmin").number == study.best_trial.number


def test_the_best_strategy_predicts_with_the_selected_trial_not_the_argmin(
    tree_only_space, classification_data
):
    """``ensemble="best"`` is the selected model alone: the ``best`` strategy tracks the
    argmin, and the fitted ensemble predicted with it whatever ``selection`` chose."""
    X, y = classification_data
    task, study, store = _search(tree_only_space, X, y, n_trials=5)
    worst = max(study.trials, key=lambda t: t.loss).number
    assert worst != study.best_trial.number  # the case at hand: selection is not argmin
    means = np.ones(5)
    means[worst] = 0.0
    final = finalize(study, task, store, selection="posterior-mean",
                     surrogate=_FixedMeanSurrogate(means))
    assert final.best_trial.number == worst
    assert final.ensemble == Ensemble.single(worst)
    (member,) = final.ensemble_estimator.members
    assert member is final.best_estimator
    np.testing.assert_array_equal(final.ensemble_estimator.predict_proba(X),
                                  final.best_estimator.predict_proba(X))
    assert ensemble_validation_loss(study, task, final.ensemble) == final.best_trial.loss


def test_argmin_selection_ties_losses_equal_but_for_float_noise():
    """0.1 + 0.2 is 0.30000000000000004: the later trial's 0.3 is not better; argmin
    selects the study's best trial, the earlier one."""
    from ensembo.trials import History, Trial

    history = History([Trial(number=0, config={}, state="complete", loss=0.1 + 0.2),
                       Trial(number=1, config={}, state="complete", loss=0.3)])
    assert select_trial(history, None, "argmin").number == 0


def test_selection_split_rule(tree_only_space, classification_data):
    X, y = classification_data
    _, study, _ = _search(tree_only_space, X, y, selection_split=0.25)
    chosen = select_trial(study.history, study.space, "selection-split")
    assert chosen.info["selection_loss"] == min(t.info["selection_loss"] for t in study.trials)
    with pytest.raises(ExperimentError, match="unknown selection 'median'"):
        select_trial(study.history, study.space, "median")


def test_disk_store_round_trip(tmp_path, tree_only_space, classification_data):
    X, y = classification_data
    store = artifact_store_for(tmp_path / "run.db")
    assert isinstance(store, DiskArtifactStore) and store.directory == tmp_path / "run.models"
    model = tree_only_space.build({"behaviour": "fit", "depth": 3}).fit(X, y)
    store.put(4, model)
    assert 4 in store and 5 not in store
    np.testing.assert_array_equal(store.get(4).predict(X), model.predict(X))
    with pytest.raises(StorageError, match="no model kept for trial 5"):
        store.get(5)


def test_finalize_on_a_closed_study_keeps_its_choice_in_memory(
    tmp_path, tree_only_space, classification_data
):
    """A closed study (an estimator's ``study_`` after ``fit``) can still be finalized:
    storing the choice, added later, must not make it raise after the models are built."""
    X, y = classification_data
    task = Task(X, y, task="classification", space=tree_only_space, validation=0.3)
    study = Study(tree_only_space, surrogate=None, validation_targets=task.validation_targets(),
                  task="classification", storage=tmp_path / "run.db")
    store = MemoryArtifactStore()
    run_task(study, task, 4, store=store)
    study.close()
    final = finalize(study, task, store)
    assert final.best_trial == study.best_trial
    assert study.metadata["final_choice"]["trial"] == final.best_trial.number
