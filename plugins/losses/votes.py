"""Losses of a (weighted) majority vote, from the votes each example receives.

An ensemble's vote on example i is summarised by ``v*`` (weight voting for the true
class), ``v_max`` (largest weight voting for one wrong class) and the total weight
``|E|``. Lévesque (thesis §4.3) defines every vote loss from these: the multiclass
margin M = (1/|E|) Σ_h [1 − 2·l01(h(x), y)] = (2v* − |E|)/|E| (Eq. 4.6), and the
sigmoid's input v* − v_max (Eq. 4.25–4.26). A single model is an ensemble of one.
"""

from __future__ import annotations

import numpy as np

from ensembo.errors import EnsemboError


class LossInputError(EnsemboError, ValueError):
    """Predictions or targets handed to a loss have the wrong form."""


def one_hot_votes(predictions: np.ndarray) -> np.ndarray:
    """(m, k) class probabilities -> (m, k) one-hot vote for each example's argmax."""
    probabilities = np.asarray(predictions, dtype=float)
    if probabilities.ndim != 2:
        raise LossInputError(
            f"vote losses need class probabilities of shape (m, n_classes), got shape "
            f"{probabilities.shape}"
        )
    votes = np.zeros_like(probabilities)
    votes[np.arange(len(votes)), np.argmax(probabilities, axis=1)] = 1.0
    return votes


def true_and_best_wrong(y_true: np.ndarray, totals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``v*`` and ``v_max`` per example for vote totals (..., m, k)."""
    y = np.asarray(y_true, dtype=int)
    if totals.shape[-2] != len(y):
        raise LossInputError(f"{len(y)} targets but votes for {totals.shape[-2]} examples")
    v_true = totals[..., np.arange(len(y)), y]
    # A running maximum over the (few) classes is much faster than a reduction over a
    # short trailing axis, and this runs once per candidate model per greedy step.
    v_wrong = np.full(v_true.shape, -np.inf)
    for label in range(totals.shape[-1]):
        np.maximum(v_wrong, np.where(y == label, -np.inf, totals[..., label]), out=v_wrong)
    return v_true, v_wrong


def margins(y_true: np.ndarray, totals: np.ndarray, size) -> np.ndarray:
    """Multiclass margin M = (2v* − |E|)/|E| in [−1, 1] (Eq. 4.6), shape (..., m)."""
    v_true, _ = true_and_best_wrong(y_true, totals)
    size = np.asarray(size, dtype=float)[..., None]
    return (2.0 * v_true - size) / size


class VoteLoss:
    """A per-example loss of a majority vote; subclasses define it from the votes.

    ``integral`` says the per-example losses are whole numbers (0 or 1), so their sum is
    exact in any order and candidates can be scored by counting (:class:`VoteCandidates`).
    """

    integral = False
    combination = "vote"  # how an ensemble it scores combines its members

    def per_example(self, v_true: np.ndarray, v_wrong: np.ndarray, size) -> np.ndarray:
        raise NotImplementedError

    def __call__(self, y_true: np.ndarray, predictions: np.ndarray) -> np.ndarray:
        return self.ensemble_examples(y_true, one_hot_votes(predictions), 1.0)

    def contributions(self, predictions: np.ndarray) -> np.ndarray:
        return one_hot_votes(predictions)

    def ensemble_examples(self, y_true: np.ndarray, totals: np.ndarray, size) -> np.ndarray:
        v_true, v_wrong = true_and_best_wrong(y_true, totals)
        return self.per_example(v_true, v_wrong, np.asarray(size, dtype=float)[..., None])

    def ensemble_loss(self, y_true: np.ndarray, totals: np.ndarray, size) -> np.ndarray:
        return self.ensemble_examples(y_true, totals, size).mean(axis=-1)

    def prepare_candidates(self, contributions: np.ndarray) -> VoteCandidates:
        return VoteCandidates(self, contributions)


class VoteCandidates:
    """One-hot voters (n, m, k) to be scored as "the vote plus each one of them".

    A vote loss on example i depends only on that example's vote totals, and one more
    voter adds one vote to one of k classes. So each step computes the k possible
    losses per example once (m, k) and each candidate's loss is a gather over its
    labels, prepared here once: O(n·m) per step instead of building n votes of (m, k).
    """

    def __init__(self, loss: VoteLoss, contributions: np.ndarray,
                 flat_index: np.ndarray | None = None):
        self.loss = loss
        self.k = contributions.shape[-1]
        self.flat_index = vote_index(contributions) if flat_index is None else flat_index
        self._y: np.ndarray | None = None

    def adding_each(self, y_true: np.ndarray, total: np.ndarray, size: float) -> np.ndarray:
        after_vote = self._after_one_vote(y_true, total, size)
        if getattr(self.loss, "integral", False):
            return self._counted(after_vote)
        return np.take(after_vote.T.ravel(), self.flat_index).mean(axis=-1)

    def _after_one_vote(self, y_true: np.ndarray, total: np.ndarray, size: float) -> np.ndarray:
        """(k, m): example i's loss if the extra vote goes to class c.

        From the ensemble's own v* and v_max in O(k·m): a vote for the true class adds 1
        to v*, one for a class c ≠ y makes v_max = max(v_max, total_c + 1). These are the
        same additions and maxima :meth:`VoteLoss.ensemble_examples` computes on the k
        totals with one more vote, so the same values, without building (k, m, k).
        """
        is_true, true_position = self._targets(y_true)
        votes = total.T.copy()  # (k, m): class-major, so the operations below are contiguous
        v_true = np.take(total, true_position)
        v_wrong = np.where(is_true, -np.inf, votes).max(axis=0)
        votes += 1.0
        np.maximum(votes, v_wrong, out=votes)
        return self.loss.per_example(v_true + is_true, np.where(is_true, v_wrong, votes),
                                     np.asarray(size + 1.0, dtype=float)[..., None])

    def _targets(self, y_true: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(k, m) mask of each example's true class and its flat position in (m, k) totals;
        computed once, as every step scores against the same targets."""
        if self._y is None or not np.array_equal(self._y, y_true):
            self._y = np.array(y_true, dtype=int)
            if len(self._y) != self.flat_index.shape[-1]:
                raise LossInputError(
                    f"{len(self._y)} targets but votes for {self.flat_index.shape[-1]} examples")
            self._is_true = np.arange(self.k)[:, None] == self._y
            self._true_position = self.k * np.arange(len(self._y)) + self._y
        return self._is_true, self._true_position

    def _counted(self, after_vote: np.ndarray) -> np.ndarray:
        """The same means as the gather for 0/1 losses, reading only unsettled examples.

        An example whose loss is the same whichever class the extra vote goes to
        (settled: its lead exceeds one vote) adds the same to every candidate, and after
        a few steps nearly all are. Sums of 0s and 1s are exact in any order, so the
        count over m is bit for bit the mean of the full gather.
        """
        unsettled = np.flatnonzero((after_vote[1:] != after_vote[0]).any(axis=0))
        if 2 * len(unsettled) > after_vote.shape[1]:  # mostly unsettled: gather them all
            return np.take(after_vote.T.ravel(), self.flat_index).mean(axis=-1)
        settled = np.count_nonzero(after_vote[0]) - np.count_nonzero(after_vote[0, unsettled])
        # The unsettled examples' outcomes as a small (u, k) table, and the votes' places in it.
        table = after_vote[:, unsettled].T.ravel()
        places = self.flat_index.take(unsettled, axis=-1) + self.k * (
            np.arange(len(unsettled)) - unsettled)
        return (settled + np.take(table, places).sum(axis=-1)) / after_vote.shape[1]


def vote_index(contributions: np.ndarray) -> np.ndarray:
    """For one-hot voters (..., m, k): where each vote lands in a flattened (m, k) table
    of per-example outcomes (example i voting for class c -> i·k + c)."""
    k = contributions.shape[-1]
    labels = np.argmax(contributions, axis=-1)
    return labels + k * np.arange(labels.shape[-1])
