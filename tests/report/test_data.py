"""compute_report: what the report shows, computed from the storage alone."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from ensembo import Evaluation, Study
from ensembo.ensemble import Ensemble, EnsembleContext
from ensembo.errors import StorageError
from ensembo.plugins.ensembles.best import BestSingle
from ensembo.report.data import compute_report, hyperparameter_importance, replay_ensembles
from ensembo.report.scoring import ensemble_loss
from ensembo.storage import SQLiteStorage
from ensembo.trials import History, Trial, TrialState


def test_report_matches_the_study(stored_study):
    path, study = stored_study
    data = compute_report(path)
    assert data.space_name == "toy-cash"
    assert len(data.trials) == 21
    assert data.counts["complete"] == 20 and data.counts["failed"] == 1
    assert data.best.number == study.best_trial.number
    assert [m.number for m in data.members] == list(study.ensemble.members)
    assert data.final_ensemble_loss == pytest.approx(study.best_trial.loss)
    assert data.components["ensemble_strategy"] == {"name": "best"}
    assert data.budget == 20 and data.loss_name == "mse"
    assert "test_loss" in data.info_keys


def test_best_so_far_is_the_running_minimum(stored_study):
    path, study = stored_study
    points = [p for p in compute_report(path).iterations if p.state is TrialState.COMPLETE]
    np.testing.assert_allclose([p.best_so_far for p in points], study.history.best_so_far())


def test_reading_a_report_leaves_a_running_trial_alone(stored_study, tmp_path):
    from ensembo import Study

    _, finished = stored_study
    live = Study(finished.space, surrogate=None, storage=tmp_path / "live.db")
    live.tell(live.ask(), 1.0)
    running = live.ask()
    data = compute_report(tmp_path / "live.db")
    assert data.trials[running.number].state is TrialState.RUNNING
    assert Study.load(tmp_path / "live.db", surrogate=None).history[running.number].attempts == 1


def test_empty_storage_is_an_error(tmp_path):
    SQLiteStorage(tmp_path / "empty.db").close()  # ensembo's tables, no study
    with pytest.raises(StorageError, match="no study stored here"):
        compute_report(tmp_path / "empty.db")


def test_missing_storage_is_an_error_and_is_not_created(tmp_path):
    with pytest.raises(StorageError, match="no such study file"):
        compute_report(tmp_path / "typo.db")
    assert not (tmp_path / "typo.db").exists()


def _trial(number, loss, predictions):
    return Trial(
        number=number, config={}, state="complete", loss=loss, predictions=np.asarray(predictions)
    )


def test_ensemble_loss_combines_member_predictions():
    y = np.array([0.0, 0.0, 0.0, 0.0])
    trials = [_trial(0, 1.0, [1, -1, 1, -1]), _trial(1, 1.0, [-1, 1, -1, 1])]
    context = EnsembleContext(y_true=y, loss="mse", task="regression")
    assert ensemble_loss(
        trials, Ensemble(members=(0, 1), weights=(1, 1)), context
    ) == pytest.approx(0.0)
    assert ensemble_loss(trials, Ensemble.single(1), context) == 1.0
    assert (
        ensemble_loss(trials, Ensemble(members=(0, 1), weights=(1, 1)), EnsembleContext()) is None
    )


def test_ensemble_loss_votes_on_labels():
    y = np.array([0, 1, 1])
    trials = [_trial(0, 1 / 3, [0, 1, 0]), _trial(1, 1 / 3, [1, 1, 1]), _trial(2, 1 / 3, [0, 0, 1])]
    context = EnsembleContext(
        y_true=y, loss="zero-one", task="classification", classes=np.array([0, 1])
    )
    assert ensemble_loss(trials, Ensemble.from_counts({0: 1, 1: 1, 2: 1}), context) == 0.0


def test_ensemble_loss_is_scored_at_the_ensemble_size():
    """sigmoid-margin solves its scale for the ensemble's size m: 12 members here, not
    the size 1 of the normalized weights (which gives the scale of m = 3)."""
    from ensembo.plugins.losses.ensemble_loss import weighted_ensemble_loss
    from ensembo.plugins.losses.margins import SigmoidMarginLoss

    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 40)
    predictions = [np.eye(2)[np.where(rng.random(40) < 0.7, y, 1 - y)] for _ in range(12)]
    trials = [_trial(n, 0.3, p) for n, p in enumerate(predictions)]
    context = EnsembleContext(
        y_true=y, loss="sigmoid-margin", task="classification", classes=np.array([0, 1])
    )
    ensemble = Ensemble.from_counts({n: 1 for n in range(12)})
    as_optimized = weighted_ensemble_loss(SigmoidMarginLoss(), y, np.stack(predictions),
                                          np.ones(12))
    assert ensemble_loss(trials, ensemble, context) == pytest.approx(as_optimized, rel=1e-12)


def test_ensemble_loss_combines_as_the_ensemble_says():
    """A vote ensemble in a log-loss study is scored on its vote shares (what the fitted
    ensemble predicts), not on averaged probabilities."""
    y = np.array([1, 1])
    unsure, sure = [[0.45, 0.55], [0.45, 0.55]], [[0.99, 0.01], [0.99, 0.01]]
    trials = [_trial(0, 0.6, unsure), _trial(1, 0.6, unsure), _trial(2, 4.6, sure)]
    context = EnsembleContext(y_true=y, loss="log-loss", task="classification",
                              classes=np.array([0, 1]))
    vote = Ensemble.from_counts({0: 1, 1: 1, 2: 1}, combination="vote")
    assert ensemble_loss(trials, vote, context) == pytest.approx(-np.log(2 / 3))
    average = Ensemble.from_counts({0: 1, 1: 1, 2: 1}, combination="average")
    assert ensemble_loss(trials, average, context) == pytest.approx(-np.log(1.11 / 3))


def test_replay_calls_the_strategy_once_per_completed_trial():
    class Counting(BestSingle):
        updates = 0

        def update(self, history, trial, context):
            Counting.updates += 1

    trials = [
        _trial(0, 2.0, [0]),
        Trial(number=1, config={}, state="failed", error="x"),
        _trial(2, 1.0, [0]),
    ]
    points = replay_ensembles(trials, Counting(), EnsembleContext())
    assert Counting.updates == 2
    assert [p.ensemble.members for p in points] == [(0,), (0,), (2,)]
    assert [p.best_so_far for p in points] == [2.0, 2.0, 1.0]


def test_importance_finds_the_hyperparameter_that_drives_the_loss(stored_study):
    _, study = stored_study
    ranked = dict(hyperparameter_importance(study.space, list(study.history)))
    assert set(ranked) <= set(study.space.names)
    assert all(0.0 <= score <= 1.0 for score in ranked.values())


def test_importance_on_a_clean_signal():
    from ConfigSpace import ConfigurationSpace

    from ensembo.spaces import Space

    space = Space(ConfigurationSpace(space={"signal": (0.0, 1.0), "noise": (0.0, 1.0)}))
    configs = space.sample(40, 1)
    history = History(
        [
            Trial(number=i, config=c, state="complete", loss=c["signal"] ** 2)
            for i, c in enumerate(configs)
        ]
    )
    ranked = hyperparameter_importance(space, list(history))
    assert ranked[0][0] == "signal" and ranked[0][1] > 0.9
    assert ranked[1][0] == "noise" and ranked[1][1] < 0.3


def test_importance_sees_a_u_shaped_effect():
    from ConfigSpace import ConfigurationSpace

    from ensembo.spaces import Space

    space = Space(ConfigurationSpace(space={"u": (0.0, 1.0), "noise": (0.0, 1.0)}))
    configs = space.sample(60, 2)
    history = History(
        [
            Trial(number=i, config=c, state="complete", loss=(c["u"] - 0.5) ** 2)
            for i, c in enumerate(configs)
        ]
    )
    ranked = dict(hyperparameter_importance(space, list(history)))
    assert ranked["u"] > 0.8 > 0.3 > ranked["noise"]


def test_a_strategy_that_fails_on_replay_is_reported_not_raised(tmp_path):
    from ConfigSpace import ConfigurationSpace

    from ensembo import Study
    from ensembo.storage import SQLiteStorage

    path = tmp_path / "s.db"
    Study(ConfigurationSpace(space={"x": (0.0, 1.0)}), surrogate=None, storage=path).optimize(
        lambda c: c["x"], n_trials=4
    )
    storage = SQLiteStorage(path)
    meta = storage.read_meta()
    meta["components"]["ensemble_strategy"] = {"name": "posthoc"}  # needs predictions it never had
    storage.write_meta(meta)
    data = compute_report(path)
    assert "ensembles were not replayed" in data.replay_note
    assert data.members == () and len(data.iterations) == 4


def test_importance_keeps_equal_values_in_one_bin():
    """An integer hyperparameter with no effect must score near 0 even when the loss falls
    with the trial number: equal values split across bins in trial order looked like an
    effect (scored 0.5 on average before)."""
    from ConfigSpace import ConfigurationSpace

    from ensembo.spaces import Space

    space = Space(ConfigurationSpace(space={"k": (1, 3), "many": (1, 12)}))
    rng = np.random.default_rng(0)
    scores = []
    for repetition in range(20):
        configs = space.sample(60, repetition)
        history = History([
            Trial(number=i, config=c, state="complete", loss=1.0 / (i + 1) + 0.01 * rng.random())
            for i, c in enumerate(configs)
        ])
        scores.append(dict(hyperparameter_importance(space, list(history))))
    assert np.mean([s.get("k", 0.0) for s in scores]) < 0.2
    assert np.mean([s.get("many", 0.0) for s in scores]) < 0.2


def _three_column_objective(y: np.ndarray):
    """Class probabilities for classes 0, 1, 2, of which the validation rows hold 0 and 1."""

    def objective(config):
        rows = np.random.default_rng(int(1e6 * config["x"])).dirichlet(np.ones(3), size=y.size)
        rows[np.arange(y.size), y] += 0.5
        rows /= rows.sum(axis=1, keepdims=True)
        return Evaluation(loss=float(np.mean(rows.argmax(axis=1) != y)), predictions=rows)

    return objective


def test_the_replay_uses_the_stored_classes_when_a_class_has_no_validation_row(tmp_path):
    """The report rebuilt the classes from the validation targets (2), so predictions
    of 3 columns failed the replay and the report showed no ensemble."""
    y = np.random.default_rng(0).integers(0, 2, 40)
    path = tmp_path / "s.db"
    study = Study({"params": {"x": {"type": "float", "low": 0, "high": 1}}}, surrogate=None,
                  ensemble="posthoc", validation_targets=y, loss="zero-one", classes=[0, 1, 2],
                  seed=0, storage=path)
    study.optimize(_three_column_objective(y), n_trials=8)
    expected = study.ensemble
    study.close()
    data = compute_report(path)
    assert data.replay_note is None
    assert sorted(m.number for m in data.members) == sorted(expected.members)
    assert data.final_ensemble_loss == pytest.approx(
        ensemble_loss(study.history, expected, study.context)
    )


def test_the_replay_does_not_warn_the_strategys_run_time_advice_again(short_eo_study):
    """Replaying eo warned "use a budget of at least 60 trials" on every report of the
    finished run; the report now says it once, as what the strategy warned at run time."""
    path = short_eo_study
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        data = compute_report(path)
    assert not [w for w in caught if "budget" in str(w.message)]
    assert len(data.strategy_advice) == 1 and "at least 60" in data.strategy_advice[0]
    assert data.members  # the replay itself ran


def test_trials_not_told_yet_have_no_ensemble_loss():
    """A running or queued trial's row showed the ensemble loss of the trials before it,
    though the column is the ensemble's loss when the trial's result was told (audit)."""
    y = np.array([0.0, 0.0])
    trials = [_trial(0, 1.0, [1.0, -1.0]),
              Trial(number=1, config={}, state="running"),
              Trial(number=2, config={}, state="pending")]
    context = EnsembleContext(y_true=y, loss="mse", task="regression")
    points = replay_ensembles(trials, BestSingle(), context)
    assert [p.ensemble_loss for p in points] == [pytest.approx(1.0), None, None]
