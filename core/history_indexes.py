"""What a :class:`ensembo.trials.History` keeps up to date as trials are put, so that
no ask or tell rescans every trial: the trials of some states in trial order
(:class:`StateView`), the best and worst complete trials (:class:`Leader`) and the
orders that rank them."""

from __future__ import annotations

import bisect
import math
from array import array
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from ensembo.trial_state import TrialState

if TYPE_CHECKING:
    from ensembo.trials import Trial


def loss_then_number(trial: Trial) -> tuple[float, int]:
    """The study's order of complete trials: losses equal to 12 significant digits tie
    (float noise must not pick the best), and the lowest number wins a tie.

    The rounding of :func:`ensembo.stats.without_float_noise`, written out for one
    float (the numpy call cost more than the rest of a put). Not the statistics' rule:
    :func:`ensembo.stats.tie_float_noise` ties losses within a relative 1e-12, which no
    rounding boundary can split, so the two disagree on a pair of losses 1 ulp apart
    that straddle a boundary of the 12th digit (here the later trial can be best by
    float noise). The study keeps the rounding on purpose: it is a total order that
    each trial's key decides alone, and changing it would change which trial running
    benchmarks and resumed studies select. The ensemble tie-breaks
    (``ensembo.plugins.ensembles.ties``) round the same way."""
    return float(f"{float(trial.loss):.11e}"), trial.number


class StateView:
    """The trials in some states, in trial order, kept up to date as trials are put,
    with their numbers and losses (NaN where not complete) as arrays: rebuilt on every
    change, the views a study reads on every ask and tell scanned the whole history
    (profiling finding 3), and the arrays give the targets their order and values
    without a pass over the trials in Python. Read them with :meth:`numbers_array` and
    :meth:`losses_array`: ``np.array(an array.array)`` borrows its buffer and may let
    other threads run meanwhile, and a put in another thread then cannot grow it
    (``BufferError``, leaving the view's lists of different lengths)."""

    def __init__(self, states: frozenset[TrialState], trials: Iterable[Trial] = ()):
        self.states = states
        self.trials: list[Trial] = []
        self.numbers = array("q")
        self.losses = array("d")
        for trial in trials:
            self.add(trial)

    def copy(self) -> StateView:
        copy = StateView(self.states)
        copy.trials, copy.numbers, copy.losses = (
            list(self.trials), array("q", self.numbers), array("d", self.losses))
        return copy

    def numbers_array(self) -> np.ndarray:
        return np.frombuffer(self.numbers.tobytes(), dtype=np.int64).copy()

    def losses_array(self) -> np.ndarray:
        return np.frombuffer(self.losses.tobytes(), dtype=np.float64).copy()

    def add(self, trial: Trial) -> None:
        if trial.state not in self.states:
            return
        at = len(self.numbers)  # usually the last: trials finish roughly in order
        if at and self.numbers[-1] > trial.number:
            at = bisect.bisect_left(self.numbers, trial.number)
        loss = trial.loss if trial.state is TrialState.COMPLETE else math.nan
        self.trials.insert(at, trial)
        self.numbers.insert(at, trial.number)
        self.losses.insert(at, loss)

    def remove(self, trial: Trial) -> None:
        if trial.state not in self.states:
            return
        at = bisect.bisect_left(self.numbers, trial.number)
        del self.trials[at], self.numbers[at], self.losses[at]


class Leader:
    """The complete trial that ranks first by ``rank``, kept as trials are put; looked
    for among every complete trial again only after that trial was replaced."""

    def __init__(self, rank: Callable[[Trial], Any]):
        self._rank = rank
        self._trial: Trial | None = None
        self._key: Any = None  # rank(self._trial)
        self._known = True  # False after the leading trial was replaced

    def offer(self, trial: Trial) -> None:
        if self._known and trial.state is TrialState.COMPLETE:
            key = self._rank(trial)
            if self._key is None or key < self._key:
                self._trial, self._key = trial, key

    def forget(self, trial: Trial) -> None:
        if self._trial is not None and trial.number == self._trial.number:
            self._trial, self._key, self._known = None, None, False

    def get(self, completed: Callable[[], list[Trial]]) -> Trial | None:
        if not self._known:
            done = completed()
            self._trial = min(done, key=self._rank) if done else None
            self._key = None if self._trial is None else self._rank(self._trial)
            self._known = True
        return self._trial


def highest_loss_first(trial: Trial) -> tuple[Any, int]:
    """The order in which the first trial is the one ``max`` of the losses in trial
    order picks: the highest loss, the lowest number among equal ones."""
    return -trial.loss, trial.number

