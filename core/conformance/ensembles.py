"""Conformance of ensemble strategies, fed trials as an asynchronous study records them."""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from ensembo import components
from ensembo.checks import one_of
from ensembo.conformance.check_run import CheckRun, require
from ensembo.conformance.synthetic import CLASSES, EXAMPLES, TASKS, synthetic_predictions
from ensembo.ensemble import Ensemble, EnsembleContext
from ensembo.protocols import EnsembleStrategy
from ensembo.registry import Registry
from ensembo.trials import History, Trial, TrialState


def _finished_trials(task: str, seed: int) -> tuple[list[Trial], EnsembleContext]:
    """Trials 0..13 as a study with four asynchronous workers records them: each is
    first stored running, and trials finish out of number order. Trial 5 fails and
    trial 13 is still running at the end; the others complete with predictions."""
    rng = np.random.default_rng(seed)
    if task == "classification":
        y = rng.integers(0, CLASSES, EXAMPLES)
        context = EnsembleContext(y_true=y, loss="zero-one", task=task,
                                  classes=np.arange(CLASSES), budget=200, seed=seed)
    else:
        y = rng.normal(size=EXAMPLES)
        context = EnsembleContext(y_true=y, loss="mse", task=task, budget=200, seed=seed)
    loss = components.build("loss", context.loss)

    def finished(number: int, at: float) -> Trial:  # ``at``: its finishing time
        if number == 5:
            return Trial(number=number, config={"i": number}, state=TrialState.FAILED,
                         error="crashed", finished_at=at)
        predictions = synthetic_predictions(task, rng, y)
        return Trial(number=number, config={"i": number}, state=TrialState.COMPLETE,
                     loss=float(np.mean(loss(y, predictions))), predictions=predictions,
                     finished_at=at)

    events = [Trial(number=n, config={"i": n}, state=TrialState.RUNNING) for n in range(4)]
    running = list(range(4))
    while running:
        number = running.pop(int(rng.integers(len(running))))
        if number == 13:
            continue  # never finishes
        events.append(finished(number, float(len(events))))
        following = max(t.number for t in events) + 1
        if following < 14:
            events.append(Trial(number=following, config={"i": following},
                                state=TrialState.RUNNING))
            running.append(following)
    return events, context


def _replay(strategy: Any, events: list[Trial], context: EnsembleContext, resume_at: int = 0):
    """Feed the recorded ``events`` as a study does; every finished trial's step:
    targets, ensemble, completed trial numbers.

    With ``resume_at``, the first events are fed as a study resumed from its storage
    feeds them: all stored at once, then ``update`` for each completed trial in
    finishing order and one ``ensemble`` call, with no ``targets`` calls in between."""
    history, steps = History(), []
    for trial in events[:resume_at]:
        history.put(trial)
    for trial in events[:resume_at]:  # in finishing order, as the study replays them
        if trial.state is TrialState.COMPLETE:
            strategy.update(history, trial, context)
    if resume_at:
        strategy.ensemble(history, context)
    for trial in events[resume_at:]:
        history.put(trial)
        if trial.state is TrialState.RUNNING:
            continue
        if trial.state is TrialState.COMPLETE:
            strategy.update(history, trial, context)
        steps.append((strategy.targets(history, context), strategy.ensemble(history, context),
                      [t.number for t in history.completed()]))
    return history, steps


def _check_step(
    targets: Any, ensemble: Any, completed: list[int], *, may_abstain: bool = False
) -> None:
    """One step's targets and ensemble; ``may_abstain``: without predictions, a strategy
    may give no ensemble at all."""
    targets = np.asarray(targets)
    require(targets.shape == (len(completed),),
             f"targets of shape {targets.shape} for {len(completed)} completed trials")
    require(bool(np.all(np.isfinite(targets))), "non-finite targets")
    if not completed:
        require(ensemble is None, "an ensemble before any trial completed")
        return
    if ensemble is None and may_abstain:
        return
    require(isinstance(ensemble, Ensemble), f"ensemble() returned {ensemble!r}")
    strangers = set(ensemble.members) - set(completed)
    require(not strangers, f"members {sorted(strangers)} are not completed trials")


def _check_every_step(steps: list, *, may_abstain: bool = False) -> None:
    """:func:`_check_step` on each replayed step, the failure saying which."""
    for index, (targets, ensemble, completed) in enumerate(steps):
        try:
            _check_step(targets, ensemble, completed, may_abstain=may_abstain)
        except AssertionError as problem:
            raise AssertionError(f"after {index + 1} finished trial(s): {problem}") from None


def _check_combines(history: History, ensemble: Any) -> None:
    """The last ensemble combines its members' predictions into finite ones of a
    member's shape. The per-step check passed on another replay: a replay that now
    ends otherwise says so, not with an error from combining."""
    require(isinstance(ensemble, Ensemble),
            f"this replay ended with ensemble() returning {ensemble!r}, unlike the one before")
    completed = {t.number for t in history.completed()}
    strangers = [n for n in ensemble.members if n not in completed]
    require(not strangers, f"this replay ended with members {strangers} that are not "
                           "completed trials, unlike the one before")
    combined = ensemble.combine([history[n].predictions for n in ensemble.members])
    require(combined.shape == np.shape(history[ensemble.members[0]].predictions)
            and bool(np.all(np.isfinite(combined))),
            f"combined predictions of shape {combined.shape}")


def _finishing_otherwise(events: list[Trial]) -> list[Trial]:
    """The same trials, all handed out first (in number order, as a study numbers them)
    and finishing in the reverse order: the history they leave is the same."""
    started = {}
    for trial in events:
        started.setdefault(trial.number, trial)
    finished = [t for t in events if t.state is not TrialState.RUNNING]
    return [started[n] for n in sorted(started)] + finished[::-1]


def _rearranged(one: Any, other: Any) -> bool:
    """``one`` holds the values of ``other``, but not in its order."""
    one, other = np.asarray(one, dtype=float), np.asarray(other, dtype=float)
    return (one.shape == other.shape and one.ndim == 1
            and not np.allclose(one, other, equal_nan=True)
            and bool(np.allclose(np.sort(one), np.sort(other), equal_nan=True)))


def _finishing_order(events: list[Trial]) -> list[int]:
    """The completed trials' numbers in the order they finished."""
    return [t.number for t in events if t.state is TrialState.COMPLETE]


def _moved_as_they_finished(
    targets: Any, events: list[Trial], other: Any, other_events: list[Trial]
) -> bool:
    """``other`` (the targets after ``other_events``) is ``targets`` (after ``events``)
    with each value moved from where its trial finished in ``events`` to where it finished
    in ``other_events``, and not ``targets`` unchanged: what targets kept in finishing
    order give. A strategy whose values depend on that order rarely matches this one
    arrangement; any arrangement of the same values (few distinct ones) blamed it."""
    targets, other = np.asarray(targets, dtype=float), np.asarray(other, dtype=float)
    finished, other_finished = _finishing_order(events), _finishing_order(other_events)
    if not targets.shape == other.shape == (len(finished),):
        return False  # the per-step check says what is wrong with their shapes
    position = {number: index for index, number in enumerate(finished)}
    moved = targets[[position[number] for number in other_finished]]
    return (not np.allclose(targets, other, equal_nan=True)
            and bool(np.allclose(other, moved, equal_nan=True)))


def _check_aligned(
    history: History, steps: list, events: list[Trial], other_steps: list,
    other_events: list[Trial],
) -> None:
    """The targets are in the order of ``history.completed()``, as the surrogate pairs
    them with configurations: targets kept in finishing order (as ``update`` sees the
    trials) passed every other check, and the surrogate then learnt each trial's target
    at another's configuration. Told by two signs: the completed trials' losses,
    rearranged; and, when the same trials finish in another order, the same values moved
    to where each trial finished."""
    targets, other = steps[-1][0], other_steps[-1][0]
    require(not _rearranged(targets, history.losses()),
            "its targets are the completed trials' losses in another order than "
            "history.completed() (finishing order?): the surrogate pairs target i with the "
            "i-th completed trial's configuration")
    require(not _moved_as_they_finished(targets, events, other, other_events),
            "the same trials finishing in another order got the same targets, each moved to "
            "where its trial finished: targets must follow history.completed() (trial "
            "number order), not the order update() saw the trials in")


def _without_predictions(seed: int) -> tuple[list[Trial], EnsembleContext]:
    """The same trials as a study whose objective returns only a loss records them (the
    example's Branin experiment): no predictions, no validation targets, no task."""
    events, _ = _finished_trials("regression", seed)
    context = EnsembleContext(y_true=None, loss=None, task=None, budget=200, seed=seed)
    return [attrs.evolve(t, predictions=None) for t in events], context


def _same_end(one: list, two: list) -> bool:
    """Two replays end with the same ensemble and targets. NaN targets are the per-step
    check's finding; compared unequal, they also failed both replay checks."""
    (targets, ensemble, _), (other_targets, other_ensemble, _) = one[-1], two[-1]
    return ensemble == other_ensemble and bool(
        np.allclose(targets, other_targets, equal_nan=True)
    )


def check_ensemble_strategy(
    strategy: Any,
    *,
    tasks: tuple[str, ...] | None = None,
    seed: int = 0,
    registry: Registry | None = None,
) -> list[str]:
    """Check an ensemble strategy on synthetic trials as a study feeds them.

    A strategy that does not declare ``needs_predictions = True`` is also fed trials
    without predictions, as a study whose objective returns only a loss feeds them: one
    that reads ``context.y_true`` or the predictions anyway would crash that study.

    ``tasks`` defaults to the strategy's ``task`` attribute if it has one, else both
    classification and regression. Returns the names of the checks passed; raises
    :class:`ConformanceError` listing every failed one.
    """
    for task in tasks or ():
        one_of("check_ensemble_strategy tasks", task, TASKS)
    checks = CheckRun("ensemble_strategy", strategy, registry)
    first = checks.first(EnsembleStrategy,
                         "has no targets(history, context), update(...) and ensemble(...)")
    if first is None:
        return checks.done()
    own = getattr(first, "task", None)
    if own is not None and own not in TASKS:  # a study refuses the strategy for it
        with checks.check("fits the task"):
            require(False, f"its task attribute is {own!r}, neither 'classification' nor "
                           "'regression' (None: both)")
        return checks.done()
    for task in tasks or ((own,) if own else TASKS):
        trials, context = _finished_trials(task, seed)
        with checks.check(f"targets and ensemble at every step, {task}"):
            _, steps = _replay(checks.fresh(), trials, context)
            _check_every_step(steps)
        with checks.check(f"a replay gives the same ensemble, {task}"):
            _, steps = _replay(checks.fresh(), trials, context)
            _, again = _replay(checks.fresh(), trials, context)
            require(_same_end(steps, again),
                     "two fresh instances fed the same trials end with different ensembles "
                     "or targets (a resumed study would change its ensemble)")
        with checks.check(f"a resumed study ends with the same ensemble, {task}"):
            _, steps = _replay(checks.fresh(), trials, context)
            _, resumed = _replay(checks.fresh(), trials, context, resume_at=len(trials) // 2)
            require(_same_end(steps, resumed),
                     "resumed half-way (stored trials replayed through update, without the "
                     "targets calls the uninterrupted run made), it ends with another ensemble "
                     "or other targets: keep state in update, not in targets or ensemble")
        with checks.check(f"targets follow history.completed(), {task}"):
            history, steps = _replay(checks.fresh(), trials, context)
            reordered = _finishing_otherwise(trials)
            _, otherwise = _replay(checks.fresh(), reordered, context)
            _check_aligned(history, steps, trials, otherwise, reordered)
        if f"targets and ensemble at every step, {task}" not in checks.passed:
            continue  # what is wrong with its ensembles is said; combining them adds noise
        with checks.check(f"the ensemble combines its members' predictions, {task}"):
            history, steps = _replay(checks.fresh(), trials, context)
            _check_combines(history, steps[-1][1])
    if not getattr(first, "needs_predictions", False):
        trials, context = _without_predictions(seed)
        with checks.check("trials without validation predictions (needs_predictions not "
                          "declared)"):
            try:
                _, steps = _replay(checks.fresh(), trials, context)
            except Exception as error:
                raise AssertionError(
                    f"raised {type(error).__name__}: {error}; a strategy that scores the "
                    "trials' validation predictions must declare needs_predictions = True "
                    "(a study without them then refuses it before the first trial)"
                ) from error
            _check_every_step(steps, may_abstain=True)
    return checks.done()
