"""The history keeps its views and its best and worst trials up to date as trials are
put, and the proposer's view and the ensemble keeper follow the trials put since their
last look, instead of scanning every trial on every ask and tell (profiling finding 3).
What they keep must equal a full recomputation after every kind of change: tells,
failures, interruptions, pending trials, batches, replaced trials, copies and a resume."""

from __future__ import annotations

import random

import pytest

import ensembo.trials
from ensembo import Study
from ensembo.modelled_history import FailuresAsWorst, with_pending
from ensembo.plugins.ensembles.best import BestSingle
from ensembo.proposal import RandomProposer
from ensembo.trials import History, Trial, TrialState, told_order

PENDING, RUNNING, COMPLETE, FAILED, INTERRUPTED = (
    TrialState.PENDING, TrialState.RUNNING, TrialState.COMPLETE, TrialState.FAILED,
    TrialState.INTERRUPTED,
)
STATE_SETS = [(state,) for state in TrialState] + [
    (PENDING, RUNNING), (COMPLETE, FAILED), (RUNNING, COMPLETE, FAILED), ()]
LOSSES = [0.0, -0.0, 0.5, 1.0, 1.0, 2.0, 3.0, 3.0]  # ties, and zeros of both signs


def _rows(trials) -> list[tuple]:
    return [(t.number, t.state, t.loss, sorted(t.config.items())) for t in trials]


def _assert_as_recomputed(history: History) -> None:
    """Every kept view of ``history`` equals the one a pass over its trials makes."""
    trials = list(history)
    for states in STATE_SETS:
        expected = [t for t in trials if t.state in states]
        assert _rows(history.in_state(*states)) == _rows(expected)
        assert history.count_in_state(*states) == len(expected)
        assert history.numbers_in_state(*states).tolist() == [t.number for t in expected]
    completed = [t for t in trials if t.state is COMPLETE]
    losses = [t.loss for t in completed]
    assert history.losses().tolist() == losses
    assert [str(loss) for loss in history.losses()] == [str(loss) for loss in losses]  # -0.0
    if not completed:
        assert history.best() is None and history.worst() is None
        return
    best = min(completed, key=lambda t: (float(f"{t.loss:.11e}"), t.number))
    worst = completed[losses.index(max(losses))]  # what max() over them in trial order picks
    assert history.best().number == best.number
    assert history.worst().number == worst.number
    assert str(history.worst().loss) == str(max(losses))
    assert all(history.holds_config(t.config) for t in trials)
    assert history.count(trials[-1]) == trials.count(trials[-1])  # still Sequence.count


def _step(history: History, rng: random.Random) -> None:
    """One change of the kinds a study makes, and a replaced complete trial."""
    open_trials = [t for t in history if not t.state.finished]
    kind = rng.random()
    if kind < 0.3 or not open_trials:
        state = rng.choice([PENDING, RUNNING])
        history.put(Trial(number=len(history), config={"x": rng.random()}, state=state))
    elif kind < 0.85:
        trial = rng.choice(open_trials)
        state = rng.choice([COMPLETE, COMPLETE, FAILED, INTERRUPTED, RUNNING])
        loss = rng.choice(LOSSES) if state is COMPLETE else None
        history.put(Trial(number=trial.number, config=trial.config, state=state, loss=loss))
    else:  # a finished trial replaced, the best or the worst among them at times
        trial = rng.choice(list(history))
        loss = rng.choice(LOSSES)
        history.put(Trial(number=trial.number, config={"x": rng.random()}, state=COMPLETE,
                          loss=loss))


@pytest.mark.parametrize("seed", range(4))
def test_the_kept_views_equal_a_recomputation_after_every_change(seed):
    rng = random.Random(seed)
    history = History()
    _assert_as_recomputed(history)  # every view asked for before the first trial
    for _ in range(250):
        _step(history, rng)
        _assert_as_recomputed(history)
    late = History(list(history))  # views made at once from a long history
    _assert_as_recomputed(late)


def test_a_copy_and_its_original_change_apart():
    rng = random.Random(7)
    history = History()
    for _ in range(60):
        _step(history, rng)
    _assert_as_recomputed(history)
    before = _rows(history)
    copy = history.updated([])
    for _ in range(40):
        _step(copy, rng)
        _assert_as_recomputed(copy)
    assert _rows(history) == before
    _assert_as_recomputed(history)
    copy_rows = _rows(copy)
    for _ in range(40):
        _step(history, rng)
        _assert_as_recomputed(history)
    assert _rows(copy) == copy_rows
    _assert_as_recomputed(copy)


def test_a_watch_names_the_trials_put_since_it_caught_up_with_that_history():
    history = History([Trial(number=0, config={"x": 0.0})])
    watch = ensembo.trials.PutWatch()
    assert watch.changed(history) is None  # never caught up: everything counts
    watch.caught_up(history)
    assert watch.changed(history) == []
    history.put(Trial(number=1, config={"x": 0.1}, state=RUNNING))
    history.put(Trial(number=0, config={"x": 0.0}, state=RUNNING))
    history.put(Trial(number=1, config={"x": 0.1}, state=COMPLETE, loss=1.0))
    assert watch.changed(history) == [1, 0]  # each once, in the order first put
    assert watch.changed(History(list(history))) is None  # another history
    assert watch.changed(history.updated([])) is None  # a copy is another history too
    watch.caught_up(history)
    assert watch.changed(history) == []


class CheckedProposer(RandomProposer):
    """Random search that checks, on every ask, that the view it is given is the one
    made afresh from the study's trials and the batch so far."""

    def __init__(self) -> None:
        self.study: Study | None = None
        self.asks = 0

    def propose(self, space, history, targets, n, rng):
        trials = History(list(self.study.history))
        batch = [t.config for t in history[len(trials):]]
        seen = with_pending(trials, batch)
        fresh, fresh_targets = FailuresAsWorst()(seen, seen.losses())
        assert _rows(history) == _rows(fresh)
        assert targets.tolist() == fresh_targets.tolist()
        _assert_as_recomputed(history)
        _assert_as_recomputed(self.study.history)
        self.asks += 1
        return super().propose(space, history, targets, n, rng)


class CheckedBest(BestSingle):
    """The ``best`` strategy, checking that ``update`` saw every completed trial once,
    in the order told; its update of trial ``fail_at`` raises once."""

    def __init__(self, fail_at: int | None = None) -> None:
        self.updated: list[int] = []
        self.fail_at = fail_at

    def update(self, history, trial, context):
        if trial.number == self.fail_at:
            self.fail_at = None
            raise RuntimeError("update failed once")
        self.updated.append(trial.number)

    def ensemble(self, history, context):
        told = sorted(history.completed(), key=told_order)
        assert self.updated == [t.number for t in told]
        return super().ensemble(history, context)


def _run(study: Study, rng: random.Random, steps: int, held: list) -> None:
    """Batches asked and told out of order, some left running from one step to the
    next, with failures, interruptions, enqueued trials and an update that raises."""
    for _ in range(steps):
        if rng.random() < 0.1:
            study.enqueue({"x": rng.uniform(-5, 10), "y": rng.uniform(0, 15)})
        held += study.ask_batch(rng.choice([1, 1, 2, 3]))
        rng.shuffle(held)
        for trial in [held.pop() for _ in range(rng.randint(0, len(held)))]:
            kind = rng.random()
            try:
                if kind < 0.65:
                    study.tell(trial, rng.choice(LOSSES))
                elif kind < 0.9:
                    study.tell(trial, state="failed", error="boom")
                else:
                    study.tell(trial, state="interrupted")
            except RuntimeError as error:  # the strategy's update: the trial is recorded
                assert str(error) == "update failed once"
                assert study.history[trial.number].state is COMPLETE


def test_a_studys_kept_views_equal_a_recomputation_through_a_resume(flat_space, tmp_path):
    path = tmp_path / "study.db"
    rng = random.Random(3)
    proposer, strategy = CheckedProposer(), CheckedBest(fail_at=9)
    study = Study(flat_space, surrogate=proposer, ensemble=strategy, n_initial=2, storage=path)
    proposer.study = study
    held: list = []
    _run(study, rng, 40, held)
    assert held  # trials left running, to be interrupted by the resume
    assert strategy.fail_at is None  # the failing update happened, and was offered again
    study.close()
    proposer, strategy = CheckedProposer(), CheckedBest()
    resumed = Study.load(path, surrogate=proposer, ensemble=strategy)
    proposer.study = resumed
    assert resumed.history.count_in_state(INTERRUPTED) > 0  # those left running
    _assert_as_recomputed(resumed.history)
    held = []
    _run(resumed, rng, 40, held)
    assert proposer.asks > 40
    assert resumed.history.count_in_state(FAILED) > 5
    resumed.close()


def test_asks_and_tells_list_no_whole_view_of_the_history(flat_space, monkeypatch):
    """With random search (whose proposer reads nothing), a study's ask and tell list
    only the waiting trials, however long the history: no complete or failed trials,
    no pass over every trial."""
    study = Study(flat_space, surrogate=None, n_initial=2)
    failing = lambda config: float("nan") if config["x"] > 8 else config["x"] ** 2  # noqa: E731
    study.optimize(failing, 80)
    listed: list[int] = []
    passes: list[int] = []
    in_state, iterate = History.in_state, History.__iter__

    def counted_in_state(self, *states):
        trials = in_state(self, *states)
        listed.append(len(trials))
        return trials

    def counted_iter(self):
        passes.append(len(self))
        return iterate(self)

    monkeypatch.setattr(History, "in_state", counted_in_state)
    monkeypatch.setattr(History, "__iter__", counted_iter)
    study.optimize(failing, 20)
    monkeypatch.undo()
    assert study.history.in_state(FAILED)
    assert listed and max(listed) <= 1  # the running trial at most
    assert passes == []


def test_a_reader_thread_taking_losses_does_not_break_a_put():
    """numpy copied a kept view's ``array.array`` through its buffer and let the put's
    thread run meanwhile; the array could not grow while lent (BufferError), leaving the
    view's lists of different lengths and every later ask failing (review of 4bf8e23:
    2,000 complete trials failed within a second)."""
    import threading
    import time

    history = History([Trial(number=i, config={"x": i}, state=COMPLETE, loss=float(i))
                       for i in range(2000)])
    stop = threading.Event()

    def read():
        while not stop.is_set():
            history.losses()
            history.numbers_in_state(COMPLETE)

    reader = threading.Thread(target=read)
    reader.start()
    number, end = 2000, time.monotonic() + 2.0
    try:
        while time.monotonic() < end:
            history.put(Trial(number=number, config={"x": number}, state=RUNNING))
            history.put(Trial(number=number, config={"x": number}, state=COMPLETE, loss=1.0))
            number += 1
    finally:
        stop.set()
        reader.join()
    assert len(history.losses()) == history.count_in_state(COMPLETE) == number


def test_a_history_pickles_with_every_protocol():
    import pickle

    history = History([Trial(number=0, config={"x": 0}, state=COMPLETE, loss=1.0)])
    history.losses()  # a kept view
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        again = pickle.loads(pickle.dumps(history, protocol=protocol))
        assert list(again.losses()) == [1.0]


def test_a_view_first_made_by_a_reader_during_puts_misses_no_trial():
    """A monitor thread asking for a view nobody had made yet (``study.trials.pending()``)
    scanned the trials while a put ran and kept a view without that trial, for good
    (6 of 3,000 attempts here on the unguarded code). Made under the put's lock now."""
    import sys
    import threading

    watched = (RUNNING, INTERRUPTED)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    wrong = 0
    try:
        for attempt in range(3000):
            history = History([Trial(number=i, config={"x": i}, state=COMPLETE, loss=1.0)
                               for i in range(50)])
            go = threading.Event()

            def write(history=history, go=go):
                go.wait()
                for i in range(50, 90):  # asked, then told
                    history.put(Trial(number=i, config={"x": i}, state=RUNNING))
                    history.put(Trial(number=i, config={"x": i}, state=COMPLETE, loss=1.0))

            def read(history=history, go=go, attempt=attempt):
                go.wait()
                for _ in range(attempt % 7):
                    pass
                history.in_state(*watched)

            threads = [threading.Thread(target=write), threading.Thread(target=read)]
            for thread in threads:
                thread.start()
            go.set()
            for thread in threads:
                thread.join()
            kept = [t.number for t in history.in_state(*watched)]
            wrong += kept != [t.number for t in history if t.state in watched]
    finally:
        sys.setswitchinterval(interval)
    assert wrong == 0
