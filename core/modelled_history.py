"""The history a proposer models for each suggestion: failed trials counted as complete
with the worst loss, and the suggestions of a batch so far as pending. A proposer reads
it and must not put trials into it: the view is kept and updated between asks."""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from ensembo.trials import History, PutWatch, Trial, TrialState


@attrs.define
class FailuresAsWorst:
    """The history the proposer models: failed trials count as completed with the worst
    *loss* so far, and their targets are the worst target (as SMAC's crash cost does).

    Left out, a failing region looks unexplored and promising, and the proposer keeps
    returning to it: on a 2-d toy with a failing third of the domain, a GP spent 10 of
    11 model-based trials there. The worst loss, not the worst target: an ensemble
    strategy's targets need not share the losses' scale, and a worst target below every
    loss made the failed trial the best by loss. Without failures the history is
    passed unchanged.

    The modelled history is kept and changed in place, only where the history changed
    since the last call (the trials put into it since, :class:`PutWatch`; every failed
    trial when the worst loss moved). Remade on every ask, it made random search with a
    tenth of 2,000 trials failed spend 79% of its time here; updated after comparing
    every trial with the last call's, and with the worst loss and the targets' order
    read off every trial, it still grew with the history (profiling finding 3). The
    history keeps its worst trial and the numbers of each state instead.
    """

    _modelled: History | None = None
    _worst_loss: float | None = None
    _watch: PutWatch = attrs.field(factory=PutWatch)

    def __call__(
        self, history: History, targets: np.ndarray, base: History | None = None
    ) -> tuple[History, np.ndarray]:
        """``base``: the history that ``history`` extends by pending trials alone (a
        batch's suggestions so far), whose modelled view is the one kept."""
        base = history if base is None else base
        failed = base.count_in_state(TrialState.FAILED)
        if not failed:
            return history, targets
        numbers = np.concatenate([base.numbers_in_state(TrialState.COMPLETE),
                                  base.numbers_in_state(TrialState.FAILED)])
        values = np.concatenate([targets, np.full(failed, float(np.max(targets)))])
        modelled = self._kept(base)
        if history is not base:
            modelled = modelled.updated(history[len(base):])
        return modelled, values[np.argsort(numbers, kind="stable")]

    def _kept(self, history: History) -> History:
        """The modelled view of ``history``, changed where ``history`` changed."""
        worst_loss = history.worst().loss
        changed = self._watch.changed(history)
        if self._modelled is None or changed is None or worst_loss != self._worst_loss:
            self._modelled = history.updated(
                _as_worst(t, worst_loss) for t in history.in_state(TrialState.FAILED)
            )
        else:
            self._modelled.update(_as_worst(history[number], worst_loss) for number in changed)
        self._watch.caught_up(history)
        self._worst_loss = worst_loss
        return self._modelled


def _as_worst(trial: Trial, worst_loss: float) -> Trial:
    """``trial`` as the proposer models it: a failed one complete with the worst loss."""
    if trial.state is TrialState.FAILED:
        return attrs.evolve(trial, state=TrialState.COMPLETE, loss=worst_loss)
    return trial


def with_pending(history: History, configs: list[dict[str, Any]]) -> History:
    """``history`` plus ``configs`` as running trials, for proposals that must account
    for the suggestions of the batch being built."""
    extra = [
        Trial(number=len(history) + i, config=config, state=TrialState.RUNNING)
        for i, config in enumerate(configs)
    ]
    return history.updated(extra)
