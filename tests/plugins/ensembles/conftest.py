"""Histories of finished trials with stored predictions, built without running a study."""

from __future__ import annotations

import numpy as np
import pytest

from ensembo.ensemble import EnsembleContext
from ensembo.trials import History, Trial, TrialState


def make_history(predictions, losses=None, *, pending: int = 0) -> History:
    """Complete trials 0..n-1 (finished in number order), then ``pending`` running ones."""
    history = History()
    for number, p in enumerate(predictions):
        loss = float(number) if losses is None else float(losses[number])
        history.put(Trial(number=number, config={"i": number}, state=TrialState.COMPLETE,
                          loss=loss, predictions=p, finished_at=float(number)))
    for extra in range(pending):
        history.put(Trial(number=len(history), config={"i": -1 - extra}, state=TrialState.RUNNING))
    return history


def classifier(wrong: set[int], m: int, classes: int = 2, y=None) -> np.ndarray:
    """Class probabilities right everywhere except on ``wrong`` (truth ``y`` or class 0)."""
    y = np.zeros(m, dtype=int) if y is None else y
    probabilities = np.full((m, classes), 0.1 / (classes - 1))
    for i in range(m):
        label = (y[i] + 1) % classes if i in wrong else y[i]
        probabilities[i, label] = 0.9
    return probabilities


@pytest.fixture
def make_classification():
    def build(wrong_sets, m, *, pending=0, budget=None, loss="zero-one"):
        y = np.zeros(m, dtype=int)
        predictions = [classifier(w, m) for w in wrong_sets]
        losses = [len(w) / m for w in wrong_sets]
        context = EnsembleContext(y_true=y, loss=loss, task="classification",
                                  classes=np.array([0, 1]), budget=budget, seed=3)
        return make_history(predictions, losses, pending=pending), context
    return build


@pytest.fixture(name="make_history")
def make_history_fixture():
    return make_history
