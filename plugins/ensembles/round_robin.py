"""Ensemble optimization by round-robin slot replacement: the machinery of ``eo`` and ``segor``.

Lévesque et al.'s Algorithm 4.1 (seed 001) and its regression variant SEGOR (seed 004)
keep an ensemble E of slots. Trial number i works on slot j = i mod |E|:

* **targets** — the surrogate models f(γ | E∖E[j]): every finished trial h is
  re-labelled with the loss of (E without slot j) ∪ {h} under the *target loss* (the
  whole history is re-labelled each iteration, at no training cost);
* **update** — once trial i has finished, slot j is refilled greedily with the pool
  model minimizing the *refill loss* of (E without slot j) ∪ {h} (zero-one for EO).
  Sizes ``grow`` and ``dynamic`` (SEGOR's BG/BD) also weigh adding the best model and,
  for ``dynamic``, deleting slot j, taking the action with the lowest refill loss.

Without ``replacement`` (EO: Lévesque adds pool models to E "without replacement",
L862) E holds distinct models: a model already in E∖E[j] is not offered for slot j,
and its target is the loss of E∖E[j] itself (E ∪ {h} = E for a member h), so the
surrogate is not drawn back to configurations the ensemble already has. With it
(SEGOR) a slot may take a copy of another member.

``post=True`` returns instead a fresh forward-greedy selection over the final pool
(EO-post from the 3 best models, SEGOR's ``-ph`` from an empty ensemble: ``post_start``).
The ensemble combines its members as its refill (or post) loss scored them. Trials are
absorbed in the order they finished, so a resumed study replays the same slot history;
pending trials never enter the pool.
"""

from __future__ import annotations

import warnings
from collections.abc import Collection
from typing import Any

import attrs
import numpy as np

from ensembo.ensemble import Ensemble, EnsembleContext
from ensembo.plugins.ensembles.greedy import forward_greedy
from ensembo.plugins.ensembles.pool import (
    Pool,
    TrialCache,
    build_pool,
    require_ensemble_loss,
    resolve_loss,
)
from ensembo.plugins.ensembles.ties import first_lowest
from ensembo.plugins.losses.ensemble_loss import EnsembleLoss, combination_of
from ensembo.plugins.option_checks import flag, whole
from ensembo.trials import History, Trial, told_order

SIZES = ("fixed", "grow", "dynamic")
# Lévesque re-optimized each of 12 slots about 16 times (200 trials) and 7 slots about
# 14 times (100 trials); without replacement a fixed E must hold ``slots`` distinct
# models (L862), and a slot revisited fewer times than this keeps early, often poor, ones.
FEW_VISITS_PER_SLOT = 5


@attrs.frozen(kw_only=True)
class _Scorer:
    """One loss over the pool: scores E ∪ {h} for many h, or E alone."""

    loss: EnsembleLoss
    contributions: np.ndarray = attrs.field(eq=False)
    candidates: Any = attrs.field(eq=False)  # the pool prepared by TrialCache.candidates
    y: np.ndarray = attrs.field(eq=False)
    index: dict[int, int] = attrs.field(eq=False)

    def _total(self, members: list[int]) -> tuple[np.ndarray, float]:
        if not members:
            return np.zeros_like(self.contributions[0]), 0.0
        return self.contributions[[self.index[m] for m in members]].sum(axis=0), float(len(members))

    def with_each(self, members: list[int], allowed: np.ndarray) -> np.ndarray:
        """Loss of ``members`` ∪ {h} for every pool position h in ``allowed``."""
        total, size = self._total(members)
        # Each candidate's loss is computed on its own, so scoring the whole pool and
        # keeping ``allowed`` gives their scores without preparing a subset.
        return self.candidates.adding_each(self.y, total, size)[allowed]

    def of(self, members: list[int]) -> float:
        total, size = self._total(members)
        return float(self.loss.ensemble_loss(self.y, total, size)) if size else np.inf


class RoundRobinEnsemble:
    """Shared state and logic; :class:`~.eo.EnsembleOptimization` and
    :class:`~.segor.SEGOR` set the losses, the task and the defaults."""

    name = "round-robin"
    needs_predictions = True  # every completed trial must carry validation predictions
    task = "classification"

    def __init__(
        self,
        *,
        target_loss: Any,
        refill_loss: Any,
        slots: int = 12,
        size: str = "fixed",
        post: bool = False,
        post_loss: Any = None,
        post_start: int = 3,
        max_size: int | None = None,
        replacement: bool = True,
    ):
        if size not in SIZES:
            raise ValueError(f"{self.name}: unknown size {size!r}; valid: {', '.join(SIZES)}")
        self.target_loss_spec, self.refill_loss_spec = target_loss, refill_loss
        self.post_loss_spec = post_loss
        self.slots = whole(self.name, "slots" if self.name == "segor" else "size", slots, 1)
        self.size, self.post = size, flag(self.name, "post", post)
        self.post_start = whole(self.name, "start", post_start, 0)
        self.max_size = None if max_size is None else whole(self.name, "max_size", max_size, 1)
        self.replacement = flag(self.name, "replacement", replacement)
        self.members: list[int | None] = [None] * self.slots if size == "fixed" else []
        self._absorbed: set[int] = set()
        self._cache = TrialCache()
        self._losses: dict[tuple, EnsembleLoss] = {}
        self._budget_checked = False

    # --- losses and pool ------------------------------------------------------------

    def _loss(self, spec: Any, context: EnsembleContext, pool: Pool) -> EnsembleLoss:
        key = (repr(spec), repr(context.loss), pool.task)  # a loss mapping is no dict key
        if key not in self._losses:  # building a loss parses its spec: once per study
            self._losses[key] = require_ensemble_loss(resolve_loss(spec, context, pool.task),
                                                      self.name)
        return self._losses[key]

    def _scorer(self, spec: Any, context: EnsembleContext, pool: Pool) -> _Scorer:
        loss = self._loss(spec, context, pool)
        return _Scorer(loss=loss, contributions=self._cache.contributions(pool, loss, spec),
                       candidates=self._cache.candidates(pool, loss, spec),
                       y=pool.y, index={n: i for i, n in enumerate(pool.numbers)})

    def _warn_if_budget_is_short(self, context: EnsembleContext) -> None:
        # With replacement a revisited slot can always take a copy of the best model, so a
        # visit or two purges the early ones; distinct slots (EO) need every slot good.
        if self.size != "fixed" or self.replacement or not context.budget or self._budget_checked:
            return
        self._budget_checked = True
        if context.budget < FEW_VISITS_PER_SLOT * self.slots:
            warnings.warn(
                f"{self.name}: {self.slots} slots with a budget of {context.budget} trials "
                f"re-optimize each slot {context.budget / self.slots:.1f} times on average, so the "
                f"ensemble keeps early, often poor, models; use a budget of at least "
                f"{FEW_VISITS_PER_SLOT * self.slots} trials, fewer slots, or post=True "
                f"(Lévesque used 12 slots with 200 trials)", UserWarning, stacklevel=2)

    def _pool(self, history: History, context: EnsembleContext) -> Pool:
        self._warn_if_budget_is_short(context)
        pool = build_pool(history, context, self.name, self._cache)
        if len(pool) and pool.task != self.task:
            raise ValueError(
                f"ensemble strategy {self.name!r} is for {self.task}, but the study's trials "
                f"are {pool.task}; use {'segor' if self.task == 'classification' else 'eo'}"
            )
        return pool

    # --- slots ----------------------------------------------------------------------

    def slot_of(self, number: int) -> int | None:
        """The slot trial ``number`` works on, or ``None`` while a growing E is empty."""
        if self.size == "fixed":
            return number % self.slots
        return number % len(self.members) if self.members else None

    def _others(self, slot: int | None) -> list[int]:
        return [m for i, m in enumerate(self.members) if m is not None and i != slot]

    def _offered(self, pool: Pool, candidates: Collection[int], ensemble: list[int]) -> np.ndarray:
        """Pool positions of ``candidates`` that may join ``ensemble`` (all, with replacement)."""
        excluded = set() if self.replacement else set(ensemble)
        offered = [i for i, n in enumerate(pool.numbers) if n in candidates and n not in excluded]
        return np.array(offered, dtype=int)

    # --- absorbing finished trials ----------------------------------------------------

    def _catch_up(self, history: History, context: EnsembleContext, pool: Pool) -> None:
        waiting = [t for t in history.completed() if t.number not in self._absorbed]
        waiting.sort(key=told_order)
        for trial in waiting:
            self._absorb(trial, context, pool)

    def _absorb(self, trial: Trial, context: EnsembleContext, pool: Pool) -> None:
        self._absorbed.add(trial.number)
        refill = self._scorer(self.refill_loss_spec, context, pool)
        target = self._scorer(self.target_loss_spec, context, pool)
        slot = self.slot_of(trial.number)
        others = self._others(slot)
        best = self._best_addition(pool, others, refill, target)
        if self.size == "fixed":
            if best is not None:
                self.members[slot] = best[1]
            return
        actions: list[tuple[float, Any]] = []
        if slot is not None and best is not None:
            actions.append((best[0], "replace"))
        if self.size == "dynamic" and slot is not None and len(self.members) > 1:
            actions.append((refill.of(others), "shrink"))
        if self.max_size is None or len(self.members) < self.max_size:
            current = [m for m in self.members if m is not None]
            grow = self._best_addition(pool, current, refill, target)
            if grow is not None:
                actions.append((grow[0], ("grow", grow[1])))
        if not actions:
            return
        # In the order appended, so equal losses resolve replace < shrink < grow.
        _, action = actions[first_lowest([loss for loss, _ in actions])]
        if action == "replace":
            self.members[slot] = best[1]
        elif action == "shrink":
            del self.members[slot]
        else:
            self.members.append(action[1])

    def _best_addition(self, pool: Pool, ensemble: list[int], refill: _Scorer,
                       target: _Scorer) -> tuple[float, int] | None:
        """(refill loss, trial) of the absorbed model best added to ``ensemble``.

        Refill-loss ties are broken by the target loss, then by the earliest trial (losses
        equal to 12 significant digits tie); ``None`` when no absorbed model may join.
        """
        allowed = self._offered(pool, self._absorbed, ensemble)
        if not len(allowed):
            return None
        scores = refill.with_each(ensemble, allowed)
        best = first_lowest(scores, target.with_each(ensemble, allowed))  # allowed ascends
        return float(scores[best]), pool.numbers[allowed[best]]

    # --- the EnsembleStrategy protocol -------------------------------------------------

    @property
    def combining_losses(self) -> tuple[str, ...]:
        """Every loss it uses scores combinations; an unset ``loss`` or ``refill_loss`` is
        the study's, an unset ``post_loss`` the refill loss (checked as that)."""
        unset_post = self.post_loss_spec is None
        return ("loss", "refill_loss") if unset_post else ("loss", "refill_loss", "post_loss")

    def loss_options(self) -> dict[str, Any]:
        """Its own losses, checked against the study's task before any trial."""
        return {"loss": self.target_loss_spec, "refill_loss": self.refill_loss_spec,
                "post_loss": self.post_loss_spec}

    def targets(self, history: History, context: EnsembleContext) -> np.ndarray:
        pool = self._pool(history, context)
        self._catch_up(history, context, pool)
        target = self._scorer(self.target_loss_spec, context, pool)
        others = self._others(self.slot_of(len(history)))
        targets = target.with_each(others, np.arange(len(pool)))
        if not self.replacement and others:
            members = np.isin(pool.numbers, others)
            targets[members] = target.of(others)
        return targets

    def update(self, history: History, trial: Trial, context: EnsembleContext) -> None:
        pool = self._pool(history, context)
        self._catch_up(history, context, pool)

    def ensemble(self, history: History, context: EnsembleContext) -> Ensemble | None:
        pool = self._pool(history, context)
        if not len(pool):
            return None
        self._catch_up(history, context, pool)
        if self.post:
            post = self._scorer(self.post_loss_spec or self.refill_loss_spec, context, pool)
            counts = forward_greedy(post.contributions, pool.y, post.loss, start=self.post_start)
            return Ensemble.from_counts(dict(zip(pool.numbers, counts.tolist(), strict=True)),
                                        combination=combination_of(post.loss))
        counts: dict[int, int] = {}
        for member in self.members:
            if member is not None:
                counts[member] = counts.get(member, 0) + 1
        if not counts:
            return None
        refill = self._loss(self.refill_loss_spec, context, pool)
        return Ensemble.from_counts(counts, combination=combination_of(refill))
