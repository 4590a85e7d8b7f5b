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

``post=True`` returns instead a fresh forward-greedy selection over the final pool
(EO-post, SEGOR's ``-ph``). Trials are absorbed in the order they finished, so a
resumed study replays the same slot history; pending trials never enter the pool.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ensembo.ensemble import Ensemble, EnsembleContext
from ensembo.plugins.ensembles.pool import Pool, build_pool, require_ensemble_loss, resolve_loss
from ensembo.plugins.ensembles.posthoc import forward_greedy
from ensembo.trials import History, Trial

SIZES = ("fixed", "grow", "dynamic")


class RoundRobinEnsemble:
    """Shared state and logic; :class:`~.eo.EnsembleOptimization` and
    :class:`~.segor.SEGOR` set the losses, the task and the defaults."""

    name = "round-robin"
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
        max_size: int | None = None,
    ):
        if size not in SIZES:
            raise ValueError(f"{self.name}: unknown size {size!r}; valid: {', '.join(SIZES)}")
        if slots < 1:
            raise ValueError(f"{self.name}: the ensemble needs at least one slot, got slots={slots}")
        self.target_loss_spec, self.refill_loss_spec = target_loss, refill_loss
        self.post_loss_spec = post_loss
        self.slots, self.size, self.post = int(slots), size, bool(post)
        self.max_size = max_size
        self.members: list[int | None] = [None] * self.slots if size == "fixed" else []
        self._absorbed: set[int] = set()

    # --- losses and pool ------------------------------------------------------------

    def _loss(self, spec: Any, context: EnsembleContext, pool: Pool):
        return require_ensemble_loss(resolve_loss(spec, context, pool.task), self.name)

    def _pool(self, history: History, context: EnsembleContext) -> Pool:
        pool = build_pool(history, context, self.name)
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

    @staticmethod
    def _totals(members: list[int], contributions: np.ndarray, index: dict[int, int]):
        if not members:
            return np.zeros_like(contributions[0]), 0.0
        return contributions[[index[m] for m in members]].sum(axis=0), float(len(members))

    def _with_each(self, loss, pool: Pool, members: list[int], allowed: np.ndarray) -> np.ndarray:
        """Loss of ``members`` ∪ {h} for every pool model h in ``allowed``."""
        contributions = pool.contributions(loss)
        index = {n: i for i, n in enumerate(pool.numbers)}
        total, size = self._totals(members, contributions, index)
        return loss.ensemble_loss(pool.y, total[None] + contributions[allowed], size + 1.0)

    def _loss_of(self, loss, pool: Pool, members: list[int]) -> float:
        contributions = pool.contributions(loss)
        index = {n: i for i, n in enumerate(pool.numbers)}
        total, size = self._totals(members, contributions, index)
        return float(loss.ensemble_loss(pool.y, total, size)) if size else np.inf

    # --- absorbing finished trials ----------------------------------------------------

    def _catch_up(self, history: History, context: EnsembleContext, pool: Pool) -> None:
        waiting = [t for t in history.completed() if t.number not in self._absorbed]
        waiting.sort(key=lambda t: (t.finished_at or 0.0, t.number))
        for trial in waiting:
            self._absorb(trial, context, pool)

    def _absorb(self, trial: Trial, context: EnsembleContext, pool: Pool) -> None:
        self._absorbed.add(trial.number)
        allowed = np.array([i for i, n in enumerate(pool.numbers) if n in self._absorbed])
        refill = self._loss(self.refill_loss_spec, context, pool)
        target = self._loss(self.target_loss_spec, context, pool)
        slot = self.slot_of(trial.number)
        others = self._others(slot)
        # Refill-loss ties are broken by the target loss, then by the earliest trial.
        refill_scores = self._with_each(refill, pool, others, allowed)
        keys = np.lexsort((allowed, self._with_each(target, pool, others, allowed), refill_scores))
        replace_by = pool.numbers[allowed[keys[0]]]
        replace_loss = float(refill_scores[keys[0]])
        if self.size == "fixed":
            self.members[slot] = replace_by
            return
        actions = []
        if slot is not None:
            actions.append((replace_loss, 0, "replace"))
        if self.size == "dynamic" and slot is not None and len(self.members) > 1:
            actions.append((self._loss_of(refill, pool, others), 1, "shrink"))
        if self.max_size is None or len(self.members) < self.max_size:
            current = [m for m in self.members if m is not None]
            grow = self._with_each(refill, pool, current, allowed)
            grow_keys = np.lexsort((allowed, self._with_each(target, pool, current, allowed), grow))
            actions.append((float(grow[grow_keys[0]]), 2, ("grow", pool.numbers[allowed[grow_keys[0]]])))
        if not actions:
            return
        _, _, action = min(actions, key=lambda a: (a[0], a[1]))
        if action == "replace":
            self.members[slot] = replace_by
        elif action == "shrink":
            del self.members[slot]
        else:
            self.members.append(action[1])

    # --- the EnsembleStrategy protocol -------------------------------------------------

    def targets(self, history: History, context: EnsembleContext) -> np.ndarray:
        pool = self._pool(history, context)
        self._catch_up(history, context, pool)
        target = self._loss(self.target_loss_spec, context, pool)
        others = self._others(self.slot_of(len(history)))
        return self._with_each(target, pool, others, np.arange(len(pool)))

    def update(self, history: History, trial: Trial, context: EnsembleContext) -> None:
        pool = self._pool(history, context)
        self._catch_up(history, context, pool)

    def ensemble(self, history: History, context: EnsembleContext) -> Ensemble | None:
        pool = self._pool(history, context)
        if not len(pool):
            return None
        self._catch_up(history, context, pool)
        if self.post:
            loss = self._loss(self.post_loss_spec or self.refill_loss_spec, context, pool)
            counts = forward_greedy(pool.contributions(loss), pool.y, loss)
            return Ensemble.from_counts(dict(zip(pool.numbers, counts.tolist())))
        counts: dict[int, int] = {}
        for member in self.members:
            if member is not None:
                counts[member] = counts.get(member, 0) + 1
        return Ensemble.from_counts(counts) if counts else None
