"""The proposer and lbfgs keep each trial's vector by trial number (``TrialVectors``)
instead of re-encoding the whole history on every ask. What they give the surrogate
must still be exactly ``space.encode`` of the trials as they are now: a trial replaced,
completed, or changed in place must not leave a stale row, and a configuration
``encode`` refuses must still be refused, with the same message."""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest
from ConfigSpace import Categorical, ConfigurationSpace

from ensembo import spaces
from ensembo.errors import SpaceError
from ensembo.plugins.acquisition_optimizers.lbfgs import LbfgsOptimizer
from ensembo.plugins.acquisition_optimizers.random_search import RandomSearchOptimizer
from ensembo.plugins.acquisitions.expected_improvement import ExpectedImprovement
from ensembo.proposal import ModelBasedProposer
from ensembo.spaces import Space
from ensembo.trial_vectors import TrialVectors
from ensembo.trials import Evaluation, History, Trial, TrialState


class RecordingSurrogate:
    """Remembers every batch it is fitted on or asked about; predicts a flat surface."""

    def __init__(self):
        self.fitted, self.predicted = [], []

    def fit(self, batch, y, rng):
        self.fitted.append((batch, np.array(y)))

    def predict(self, batch):
        self.predicted.append(batch)
        return np.zeros(len(batch)), np.ones(len(batch))


class ConditionableRecordingSurrogate(RecordingSurrogate):
    def __init__(self):
        super().__init__()
        self.conditioned_on = []

    def conditioned(self, batch, y):
        self.conditioned_on.append(batch)
        return self


def _assert_same_batch(batch, expected):
    np.testing.assert_array_equal(batch.values, expected.values)
    np.testing.assert_array_equal(batch.active, expected.active)
    np.testing.assert_array_equal(batch.signature, expected.signature)


def _done(number, config, loss=1.0):
    return Trial(number=number, config=config).with_result(Evaluation(loss=loss), finished_at=0.0)


def _propose(proposer, space, history, rng):
    targets = np.array([t.loss for t in history.completed()], dtype=float)
    return proposer.propose(space, history, targets, 1, rng)


def _proposer(surrogate, fantasy="kriging-believer"):
    return ModelBasedProposer(
        surrogate, ExpectedImprovement(), RandomSearchOptimizer(n_samples=64), fantasy
    )


@pytest.fixture
def space(tree_space):
    return Space(tree_space)


def test_the_fit_matrix_is_a_fresh_encode_as_trials_are_added_and_replaced(space):
    rng = np.random.default_rng(0)
    configs = space.sample(12, rng)
    history = History([_done(i, c, float(i)) for i, c in enumerate(configs[:6])])
    surrogate = RecordingSurrogate()
    proposer = _proposer(surrogate)

    def check():
        _propose(proposer, space, history, rng)
        batch, _ = surrogate.fitted[-1]
        _assert_same_batch(batch, space.encode([t.config for t in history.completed()]))

    check()
    for number, config in enumerate(configs[6:9], start=6):  # added
        history.put(_done(number, config))
        check()
    history.put(_done(2, configs[9]))  # replaced: same number, another configuration
    check()
    history.put(_done(0, configs[10], loss=0.5))  # and another, with its branch changed
    check()
    dict.clear(history[4].config)  # changed in place past its read-only methods:
    dict.update(history[4].config, configs[11])  # the kept copy must not match it
    check()


@pytest.mark.parametrize("fantasy", ["kriging-believer", "constant-liar"])
def test_pending_batches_are_fresh_encodes_for_a_refitted_surrogate(space, fantasy):
    rng = np.random.default_rng(1)
    configs = space.sample(14, rng)
    history = History([_done(i, c, float(i)) for i, c in enumerate(configs[:8])])
    for number in (8, 9):
        history.put(Trial(number=number, config=configs[number]))
    surrogate = RecordingSurrogate()
    proposer = _proposer(surrogate, fantasy)

    def check_all():
        surrogate.predicted.clear()
        _propose(proposer, space, history, rng)
        completed = [t.config for t in history.completed()]
        pending = [t.config for t in history.pending()]
        batch, y = surrogate.fitted[-1]
        _assert_same_batch(batch, space.encode(completed + pending))
        assert len(y) == len(completed) + len(pending)
        if fantasy == "kriging-believer":  # its fit on the completed, its mean at pending
            _assert_same_batch(surrogate.fitted[-2][0], space.encode(completed))
            _assert_same_batch(surrogate.predicted[0], space.encode(pending))

    check_all()
    history.put(_done(8, configs[8], 0.25))  # a pending trial completes
    history.put(Trial(number=10, config=configs[10]))
    check_all()
    history.put(Trial(number=9, config=configs[11]))  # a pending trial is replaced
    check_all()
    history.put(_done(3, configs[12]))  # and a completed one
    check_all()


def test_conditioned_batches_are_fresh_encodes(space):
    rng = np.random.default_rng(2)
    configs = space.sample(12, rng)
    history = History([_done(i, c, float(i)) for i, c in enumerate(configs[:8])])
    history.put(Trial(number=8, config=configs[8]))
    surrogate = ConditionableRecordingSurrogate()
    proposer = _proposer(surrogate)

    def check():
        _propose(proposer, space, history, rng)
        _assert_same_batch(
            surrogate.conditioned_on[-1], space.encode([t.config for t in history.pending()])
        )
        _assert_same_batch(
            surrogate.fitted[-1][0], space.encode([t.config for t in history.completed()])
        )

    check()
    history.put(Trial(number=8, config=configs[9]))  # the pending trial replaced
    history.put(Trial(number=9, config=configs[10]))
    check()
    history.put(_done(1, configs[11]))  # a completed trial replaced: a new fit
    check()


SVM_BAD = [
    ({"C": 1e9, "kernel": "linear"}, "'C' 1000000000.0 is out of its range"),
    ({"C": 1.0, "kernel": "linear", "gamma": 0.1}, "'gamma' has a value (0.1) but is not active"),
    ({"C": 1.0, "kernel": "rbf"}, "'gamma' is active in it but has no value"),
]


@pytest.mark.parametrize("config, problem", SVM_BAD)
def test_the_proposer_refuses_what_encode_refuses_with_its_message(config, problem):
    space = spaces.load("svm-kernels")
    with pytest.raises(SpaceError) as expected:
        space.encode([space.default(), config])
    assert problem in str(expected.value)

    rng = np.random.default_rng(3)
    history = History([_done(0, space.default())])
    proposer = _proposer(RecordingSurrogate())
    _propose(proposer, space, history, rng)  # trial 0 is kept, checked
    history.put(_done(1, config))
    for _ in range(2):  # the refused row is not kept: refused again
        with pytest.raises(SpaceError, match="cannot encode configuration 1") as caught:
            _propose(proposer, space, history, rng)
        assert str(caught.value) == str(expected.value)
    history.put(_done(1, space.default()))  # once replaced by a good one, it encodes
    _propose(proposer, space, history, rng)


@pytest.mark.parametrize("config, problem", SVM_BAD)
def test_a_pending_configuration_encode_refuses_is_refused(config, problem):
    space = spaces.load("svm-kernels")
    rng = np.random.default_rng(4)
    history = History([_done(i, c) for i, c in enumerate(space.sample(3, rng))])
    history.put(Trial(number=3, config=config))
    with pytest.raises(SpaceError, match="cannot encode configuration 0") as caught:
        _propose(_proposer(RecordingSurrogate()), space, history, rng)
    assert problem in str(caught.value)


def test_checked_vectors_are_what_encode_encodes():
    space = spaces.load("svm-kernels")
    configs = space.sample(30, seed=5)
    _assert_same_batch(space.encode_vectors(space.checked_vectors(configs)), space.encode(configs))
    with pytest.raises(SpaceError, match="cannot encode configuration 7"):
        space.checked_vectors([{"C": 1e9, "kernel": "linear"}], positions=[7])


def test_unchecked_trial_vectors_do_not_check_and_a_new_space_clears_them(tree_space):
    space = Space(tree_space)
    bad = Trial(number=0, config={"branch": "a", "shared": 0.5, "only_b": 0.5})
    assert TrialVectors()(space, [bad]).shape == (1, space.dimension)
    with pytest.raises(SpaceError, match="'only_b' has a value"):
        TrialVectors(check=True)(space, [bad])
    vectors = TrialVectors()
    good = Trial(number=0, config={"branch": "a", "shared": 0.5})
    first = vectors(space, [good])
    other = Space(tree_space, encoding="onehot")
    np.testing.assert_array_equal(vectors(other, [good]), other.vectors([good.config]))
    np.testing.assert_array_equal(first, space.vectors([good.config]))


def test_lbfgs_excludes_the_trials_as_they_are_now():
    """lbfgs' seen set is kept by trial number too: a replaced trial's old
    configuration is free again, its new one is seen."""
    space = Space(ConfigurationSpace(space={"c": Categorical("c", ["a", "b", "c"])}))

    class Flat:
        targets = None

        def score(self, batch):
            return np.zeros(len(batch))

    optimizer = LbfgsOptimizer(n_sobol=0, n_random=64)
    rng = np.random.default_rng(6)
    history = History([_done(0, {"c": "a"}), _done(1, {"c": "b"})])
    assert optimizer.maximize(Flat(), space, history, 1, rng) == [{"c": "c"}]
    history.put(_done(0, {"c": "c"}))
    assert optimizer.maximize(Flat(), space, history, 1, rng) == [{"c": "a"}]


def test_two_studies_in_two_threads_never_get_each_others_vectors():
    """An acquisition optimizer object may serve two studies; in two threads one study's
    row for a trial number could replace the other's between the check and the read
    (17 and 24 of 500 asks in the review's reproducer)."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    space = Space(ConfigurationSpace(space={"x": (0.0, 1.0), "y": (0.0, 1.0)}))
    shared = TrialVectors()
    rng = np.random.default_rng(0)
    histories = [
        [Trial(number=i, config=c, state=TrialState.COMPLETE, loss=1.0)
         for i, c in enumerate(space.sample(100, rng))]
        for _ in range(2)
    ]
    wrong = [0, 0]

    def one_study(k):
        expected = space.vectors([t.config for t in histories[k]])
        for _ in range(300):
            wrong[k] += not np.array_equal(shared(space, histories[k]), expected, equal_nan=True)

    threads = [threading.Thread(target=one_study, args=(k,)) for k in (0, 1)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert wrong == [0, 0]
