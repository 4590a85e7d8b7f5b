"""The proposer's view of the history is kept up to date between asks instead of
remade; it must be exactly the view a fresh one makes after every kind of change."""

from __future__ import annotations

import numpy as np

from ensembo.modelled_history import FailuresAsWorst, with_pending
from ensembo.trials import History, Trial, TrialState


def _view(history: History) -> list[tuple[int, str, float | None]]:
    return [(t.number, t.state.value, t.loss) for t in history]


def _complete(number: int, loss: float) -> Trial:
    return Trial(number=number, config={"x": number / 10}, state=TrialState.COMPLETE, loss=loss)


def _failed(number: int) -> Trial:
    return Trial(number=number, config={"x": number / 10}, state=TrialState.FAILED, error="boom")


def _running(number: int) -> Trial:
    return Trial(number=number, config={"x": number / 10}, state=TrialState.RUNNING)


def test_the_kept_view_equals_a_fresh_one_after_every_change():
    history = History([_complete(0, 3.0), _failed(1), _complete(2, 1.0)])
    kept = FailuresAsWorst()
    changes = [
        _running(3),
        _complete(3, 2.0),  # a running trial told
        _failed(4),
        _complete(5, 9.0),  # the worst loss moves: every failed trial's loss with it
        _running(6),
        _failed(6),  # a running trial failed
        _complete(7, 0.5),  # a new best
    ]
    for change in [None, *changes]:
        if change is not None:
            history.put(change)
        targets = np.array([10.0 * t.loss for t in history.completed()])
        modelled, modelled_targets = kept(history, targets)
        fresh, fresh_targets = FailuresAsWorst()(history, targets)
        assert _view(modelled) == _view(fresh)
        assert modelled_targets.tolist() == fresh_targets.tolist()
        assert modelled.best().number == fresh.best().number
    assert [t.loss for t in modelled.completed()] == [3.0, 9.0, 1.0, 2.0, 9.0, 9.0, 9.0, 0.5]
    assert modelled_targets.tolist() == [30.0, 90.0, 10.0, 20.0, 90.0, 90.0, 90.0, 5.0]
    assert [t.state for t in history.in_state(TrialState.FAILED)] == [TrialState.FAILED] * 3


def test_a_batch_view_and_a_shorter_history_are_modelled_too():
    history = History([_complete(0, 3.0), _failed(1), _complete(2, 1.0)])
    kept = FailuresAsWorst()
    kept(history, np.array([3.0, 1.0]))
    batch = with_pending(history, [{"x": 0.3}, {"x": 0.4}])
    modelled, _ = kept(batch, np.array([3.0, 1.0]))
    assert _view(modelled) == _view(FailuresAsWorst()(batch, np.array([3.0, 1.0]))[0])
    other = History([_failed(0), _complete(1, 4.0)])  # another, shorter history
    modelled, targets = kept(other, np.array([4.0]))
    assert _view(modelled) == [(0, "complete", 4.0), (1, "complete", 4.0)]
    assert targets.tolist() == [4.0, 4.0]


def test_an_updated_history_leaves_the_original_as_it_was():
    history = History([_complete(0, 3.0), _running(1)])
    assert [t.number for t in history.pending()] == [1]  # a view made before the update
    updated = history.updated([_complete(1, 0.5), _running(2)])
    assert _view(history) == [(0, "complete", 3.0), (1, "running", None)]
    assert [t.number for t in history.pending()] == [1]
    assert history.best().number == 0 and not history.holds_config({"x": 0.2})
    assert [t.number for t in updated.pending()] == [2]
    assert updated.best().number == 1 and updated.holds_config({"x": 0.2})
