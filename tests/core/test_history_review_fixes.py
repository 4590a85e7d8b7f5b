"""Findings 11 and 12 of the review of 28 Nov: the study's tie rule stated apart from the
statistics' one, and loading a stored history without copying every trial again."""

from __future__ import annotations

import numpy as np
import pytest

import ensembo.plugins.ensembles.ties as ties
from ensembo import Study, TrialState
from ensembo.stats import average_ranks, without_float_noise
from ensembo.storage import MemoryStorage
from ensembo.trials import History, Trial


def straddling_pair() -> tuple[float, float]:
    """Two losses 1 ulp apart on either side of a rounding boundary of the 12th digit."""
    a = 0.1234567890125
    while True:
        b = float(np.nextafter(a, 1))
        if without_float_noise(a) != without_float_noise(b):
            return a, b
        a = b


# 11 ------------------------------------------------------------------------------------


def test_the_study_keeps_its_rounding_rule_where_the_statistics_tie():
    a, b = straddling_pair()
    assert list(average_ranks([[b, a]])) == [1.5, 1.5]  # the statistics: a tie
    history = History([Trial(number=0, config={"x": 0}, state=TrialState.COMPLETE, loss=b),
                       Trial(number=1, config={"x": 1}, state=TrialState.COMPLETE, loss=a)])
    assert history.best().number == 1  # the study: rounded to 12 digits, as documented
    assert ties.first_lowest(np.array([b, a])) == 1  # the ensemble tie-breaks: the same


def test_the_docstrings_state_the_two_rules_instead_of_claiming_they_agree():
    assert "as in the benchmark statistics" not in ties.__doc__
    for doc in (ties.__doc__, History.best.__doc__):
        assert "12 significant digits" in " ".join(doc.split())
    assert "tie_float_noise" in ties.__doc__ and "ensembo.stats" in History.best.__doc__


@pytest.mark.parametrize("seed", range(3))
def test_the_best_trial_rule_is_still_the_12_digit_rounding(seed):
    rng = np.random.default_rng(seed)
    losses = np.concatenate([rng.normal(size=200) * 10.0 ** rng.integers(-300, 300, 200),
                             [0.0, -0.0, np.inf, -np.inf, 1e-320, 3, 0.1 + 0.2, 0.3]])
    history = History()
    for number, loss in enumerate(losses):
        history.put(Trial(number=number, config={"n": number}, state=TrialState.COMPLETE,
                          loss=loss))
        expected = min(range(number + 1),
                       key=lambda n: (float(without_float_noise(losses[n])), n))
        assert history.best().number == expected


# 12 ------------------------------------------------------------------------------------


def test_a_history_made_from_trials_keeps_them_as_they_are():
    # a storage's trials are read fresh: copying each again doubled the load time
    trials = [Trial(number=i, config={"x": float(i)}) for i in range(3)]
    history = History(trials)
    assert all(kept is given for kept, given in zip(history, trials, strict=True))
    history.put(trials[1])  # put still keeps a private copy
    assert history[1] is not trials[1] and history[1].config is not trials[1].config


def test_memory_storage_keeps_its_own_copy_of_an_asked_trial(flat_space):
    storage = MemoryStorage()
    study = Study(flat_space, surrogate=None, seed=0, storage=storage)
    trial = study.ask()
    asked = dict(trial.config)
    trial.config["n_jobs"] = 4  # the caller's copy, not the stored record
    assert storage.trials()[0].config == asked
    assert Study.load(storage).trials[0].config == asked


def test_a_loaded_memory_study_cannot_change_the_stored_records(flat_space):
    """``Study.load`` kept the storage's own trial objects: editing a loaded trial's
    config rewrote the record every later load read."""
    storage = MemoryStorage()
    study = Study(flat_space, surrogate=None, seed=0, storage=storage)
    study.tell(study.ask(), 0.5)
    asked = dict(study.trials[0].config)
    with pytest.raises(TypeError, match="read-only"):  # a loaded record is read-only too
        Study.load(storage).best_trial.config["n_jobs"] = 4
    assert storage.trials()[0].config == asked
    assert Study.load(storage).trials[0].config == asked
