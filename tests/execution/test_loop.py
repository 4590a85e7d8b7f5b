"""The asynchronous loop tells every result already in hand before it asks again."""

from __future__ import annotations

from ensembo import Study
from ensembo.execution.child import NO_LIMITS, evaluate
from ensembo.execution.loop import run_trials


class InstantBackend:
    """Three slots whose evaluations have ended by the time ``submit`` returns (workers
    far faster than the driver's asks); records what the study knew at each submit."""

    slots = 3

    def __init__(self, study: Study):
        self.study = study
        self.known_at_submit: list[int] = []
        self._outcomes = {}

    def submit(self, objective, config, limits):
        self.known_at_submit.append(len(self.study.history.completed()))
        handle = len(self.known_at_submit)
        self._outcomes[handle] = evaluate(objective, config, limits)
        return handle

    def wait(self, handles, timeout=None):
        return [h for h in handles if h in self._outcomes]

    def outcome(self, handle):
        return self._outcomes.pop(handle)

    def close(self, *, interrupted=False):
        self._outcomes.clear()


def test_results_that_ended_during_an_ask_are_told_before_the_next_ask(flat_space):
    study = Study(flat_space, surrogate=None, seed=0)
    backend = InstantBackend(study)
    finished = run_trials(study, lambda config: config["x"] ** 2, backend, n_trials=7,
                          limits=NO_LIMITS)
    assert finished == 7 and len(study.history.completed()) == 7
    # Without the poll between asks the first three asks would all see 0 results.
    assert backend.known_at_submit == list(range(7))
