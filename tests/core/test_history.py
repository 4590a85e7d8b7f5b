"""History keeps its state views, configurations and best trial current as trials are
put; every answer must equal a plain scan of the trials."""

from __future__ import annotations

import numpy as np
import pytest

from ensembo.trials import Evaluation, History, Trial, TrialState, next_to_run


def trial(number: int, x: float, state=TrialState.RUNNING) -> Trial:
    return Trial(number=number, config={"x": x}, state=state)


def done(running: Trial, loss: float) -> Trial:
    return running.with_result(Evaluation(loss=loss), finished_at=0.0)


def scanned(history: History, *states: TrialState) -> list[int]:
    return [t.number for t in history if t.state in states]


def test_views_stay_in_trial_order_when_trials_finish_out_of_order():
    history = History([trial(i, float(i)) for i in range(5)])
    for number, loss in [(3, 0.5), (0, 2.0), (4, 1.0)]:
        history.put(done(history[number], loss))
    assert [t.number for t in history.completed()] == [0, 3, 4]
    assert [t.number for t in history.pending()] == [1, 2]
    history.put(history[1].with_failure("boom", 0.0))
    both = history.in_state(TrialState.COMPLETE, TrialState.FAILED)
    assert [t.number for t in both] == [0, 1, 3, 4]
    assert np.array_equal(history.losses(), [2.0, 0.5, 1.0])


def test_a_returned_view_is_a_copy():
    history = History([done(trial(0, 0.0), 1.0)])
    history.completed().clear()
    assert len(history.completed()) == 1


def test_best_is_the_lowest_loss_then_the_lowest_number():
    history = History([trial(i, float(i)) for i in range(4)])
    history.put(done(history[2], 1.0))
    history.put(done(history[1], 1.0))  # equal loss, lower number: it is the best
    assert history.best().number == 1
    history.put(done(history[3], 0.5))
    assert history.best().number == 3
    history.put(history[3].with_failure("re-graded", 0.0))  # the best is replaced
    assert history.best().number == 1


def test_losses_equal_but_for_float_noise_tie_for_the_best():
    """0.1 + 0.2 is 0.30000000000000004: the later trial's 0.3 must not win by the noise,
    whether the best is found by a scan or kept current as trials finish."""
    history = History([trial(i, float(i)) for i in range(3)])
    history.put(done(history[0], 0.1 + 0.2))
    assert history.best().number == 0  # the best is known from here on
    history.put(done(history[1], 0.3))
    assert history.best().number == 0
    rescanned = History(list(history))
    assert rescanned.best().number == 0
    history.put(done(history[2], 0.3 - 1e-9))  # a real improvement still wins
    assert history.best().number == 2


def test_holds_config_follows_replacements():
    history = History([trial(0, 0.5)])
    assert history.holds_config({"x": 0.5})
    history.put(trial(0, 0.7))
    assert not history.holds_config({"x": 0.5}) and history.holds_config({"x": 0.7})
    assert history.holds_config({"values": [1, 2]}) is False  # unhashable values are fine


@pytest.mark.parametrize("seed", range(5))
def test_random_puts_agree_with_a_plain_scan(seed):
    rng = np.random.default_rng(seed)
    history = History()
    for _ in range(200):
        if len(history) and rng.random() < 0.6:
            number = int(rng.integers(len(history)))
            old = history[number]
            state = TrialState(rng.choice([s.value for s in TrialState]))
            if state is TrialState.COMPLETE:
                new = done(old, float(rng.integers(5)))
            else:
                new = Trial(number=number, config=old.config, state=state)
        else:
            new = trial(len(history), float(rng.integers(10)))
        history.put(new)
        for states in [(TrialState.COMPLETE,), (TrialState.PENDING, TrialState.RUNNING)]:
            assert [t.number for t in history.in_state(*states)] == scanned(history, *states)
        finished = [t for t in history if t.state is TrialState.COMPLETE]
        expected = min(finished, key=lambda t: t.loss) if finished else None
        assert history.best() == expected


def test_member_weights_print_with_three_significant_digits():
    """An Agnostic Bayes member of weight 0.0015 printed as 3:0.00."""
    from ensembo.ensemble import members_text

    assert members_text([1, 3, 8], [0.5, 0.0015, 0.4985]) == "1:0.5, 3:0.0015, 8:0.498"


def test_info_keys_are_text_before_and_after_a_resume(tmp_path):
    """``{3: 4}`` was kept as is in memory and came back as ``{"3": 4}`` from storage."""
    import ensembo
    from ensembo import Evaluation

    space = {"params": {"x": {"type": "float", "low": 0.0, "high": 1.0}}}
    path = tmp_path / "s.db"
    with ensembo.Study(space, surrogate=None, storage=path) as study:
        study.optimize(lambda c: Evaluation(loss=c["x"], info={3: 4, "epochs": 2}), n_trials=1)
        live = study.trials[0].info
    assert live == {"3": 4, "epochs": 2} == ensembo.Study.load(path).trials[0].info


def test_next_to_run_hands_out_interrupted_then_queued_then_new_trials():
    history = History()
    for number, state in enumerate([TrialState.PENDING, TrialState.INTERRUPTED,
                                    TrialState.COMPLETE, TrialState.PENDING]):
        history.put(done(trial(number, number / 10), 0.5) if state is TrialState.COMPLETE
                    else trial(number, number / 10, state))
    asked = []

    def suggest(first, count):
        asked.append((first, count))
        return [{"x": 0.9}] * count

    requeued, trials = next_to_run(history, 5, suggest)
    assert [t.number for t in requeued] == [1, 0, 3]
    assert [t.number for t in trials] == [1, 0, 3, 4, 5] and asked == [(4, 2)]
    assert all(t.state is TrialState.RUNNING for t in trials)
    assert [t.attempts for t in trials] == [1, 1, 1, 1, 1]
    assert next_to_run(history, 2, suggest)[1][1].number == 0 and asked == [(4, 2)]
