"""What a finished search hands back: the selected model and the ensemble, fitted.

Models come from the artifact store as they were trained during the search (on the
training part of each split; under k-fold, the average of the fold models), or, with
``refit``, are trained afresh on all the data (training, validation and selection
rows), as Lévesque's protocol does for the reported model. Refitting changes the
models, never which configurations were selected.
"""

from __future__ import annotations

import logging
from typing import Any

import attrs

from ensembo.ensemble import Ensemble
from ensembo.errors import ExecutionError, TrialError
from ensembo.execution import (
    NO_LIMITS,
    OutcomeKind,
    TrialLimits,
    evaluate,
    with_remote_traceback,
)
from ensembo.ml.artifacts import ArtifactStore
from ensembo.ml.fitted_ensemble import FittedEnsemble
from ensembo.ml.selection import select_trial
from ensembo.ml.task import Task
from ensembo.plugins.ensembles.best import BestSingle
from ensembo.plugins.losses.ensemble_loss import ensemble_loss_of, member_contributions
from ensembo.report.data import FINAL_CHOICE
from ensembo.study import Study
from ensembo.trials import Trial

logger = logging.getLogger(__name__)


@attrs.frozen(kw_only=True)
class FinalModels:
    """The selected trial and its model; the ensemble (the study's, or under ``best``
    the selected trial alone) and its fitted estimator."""

    best_trial: Trial
    best_estimator: Any = attrs.field(eq=False)
    ensemble: Ensemble
    ensemble_estimator: FittedEnsemble = attrs.field(eq=False)
    refit: bool
    # with ``refit``: the trials whose refit hit a time or memory limit, whose models are
    # those kept from the search (trained on their trial's training rows)
    not_refitted: tuple[int, ...] = ()


def finalize(
    study: Study,
    task: Task,
    store: ArtifactStore,
    *,
    selection: str = "argmin",
    refit: bool = False,
    surrogate: Any = "gp",
    limits: TrialLimits = NO_LIMITS,
) -> FinalModels:
    """Select the final trial by ``selection`` and fit what will predict; a model trained
    again (refitted, or because none was kept) is trained within the trials' ``limits``.

    A refit that hits a limit or fails does not lose the run: that member keeps the
    model trained during the search, with a warning, and is listed in
    ``not_refitted``."""
    best = select_trial(study.history, study.space, selection, surrogate=surrogate, seed=study.seed)
    ensemble = final_ensemble(study, best)
    cache: dict[int, Any] = {}
    not_refitted: list[int] = []

    def model_of(number: int) -> Any:
        if number not in cache:
            config = dict(study.history[number].config)
            model = refitted_model(task, number, config, limits) if refit else None
            if refit and model is None:
                not_refitted.append(number)
            cache[number] = (
                kept_model(store, task, number, config, limits) if model is None else model
            )
        return cache[number]

    estimator = FittedEnsemble(
        members=[model_of(n) for n in ensemble.members],
        weights=list(ensemble.weights),
        classes=task.classes,
        contributions=member_contributions(ensemble.combination, task.loss),
    )
    best_estimator = model_of(best.number)
    store_final_choice(study, selection, best, ensemble)
    return FinalModels(
        best_trial=best,
        best_estimator=best_estimator,
        ensemble=ensemble,
        ensemble_estimator=estimator,
        refit=refit,
        not_refitted=tuple(sorted(not_refitted)),
    )


def final_ensemble(study: Study, best: Trial) -> Ensemble:
    """The ensemble that predicts: the study's, but under the ``best`` strategy the
    *selected* trial alone. ``best`` tracks the validation argmin during the search;
    a ``selection`` rule (posterior-mean, selection-split) exists to replace that
    optimistic choice, so predicting with the argmin would silently undo it."""
    if isinstance(study.strategy, BestSingle):
        return Ensemble.single(best.number)
    if study.ensemble is None:  # no strategy ensemble yet; an empty one is refused when built
        return Ensemble.single(best.number)
    return study.ensemble


def store_final_choice(study: Study, selection: str, best: Trial, ensemble: Ensemble) -> None:
    """Keep in the study's metadata what predicts: the trial ``selection`` chose and the
    final ensemble, with the number of complete trials they were chosen from. A report
    replaying the ``best`` strategy would name the validation argmin instead; one of a
    study continued since (more complete trials) replays, saying why. A closed study
    (an estimator's ``study_`` after ``fit``) keeps it in memory only."""
    record = {
        "selection": selection,
        "trial": int(best.number),
        "members": [int(m) for m in ensemble.members],
        "weights": [float(w) for w in ensemble.weights],
        "size": float(ensemble.size),
        "combination": ensemble.combination,
        "complete": len(study.history.completed()),
    }
    study.metadata[FINAL_CHOICE] = record
    if getattr(study.storage, "closed", False):  # finalize only reads what it needs
        logger.info("the study's storage is closed: the final choice is not stored")
        return
    meta = study.storage.read_meta()
    meta["metadata"] = {**(meta.get("metadata") or {}), FINAL_CHOICE: record}
    study.storage.write_meta(meta)


def refitted_model(
    task: Task, number: int, config: dict[str, Any], limits: TrialLimits = NO_LIMITS
) -> Any | None:
    """Trial ``number``'s configuration trained on all the rows, within the trials'
    ``limits`` (``execution.trial_timeout`` / ``memory_limit``: a model that fitted
    within them on a trial's training rows can run past them on all rows); ``None``,
    with a warning naming the trial and the limit, when the refit hits a limit: the
    caller then keeps the model trained during the search. Any other failure is raised
    as the error it is (a bug must not pass as a model trained on fewer rows)."""
    outcome = evaluate(task.fit, config, limits)
    if outcome.kind is OutcomeKind.RETURNED:
        return outcome.value
    if outcome.kind not in (OutcomeKind.TIMEOUT, OutcomeKind.MEMORY):
        error = outcome.error or ExecutionError(outcome.message or outcome.kind.value)
        error.add_note(f"while refitting trial {number} on all training rows")
        raise with_remote_traceback(error, outcome.traceback)
    logger.warning(
        "refitting trial %d on all training rows %s: %s; its model is the one trained "
        "during the search (on its trial's training rows), not refitted",
        number, _limit_hit(outcome.kind, limits), outcome.message,
    )
    return None


def _limit_hit(kind: OutcomeKind, limits: TrialLimits) -> str:
    """Which limit the refit hit: 'hit the trials' time limit (trial_timeout 2 s)'."""
    if kind is OutcomeKind.TIMEOUT:
        return f"hit the trials' time limit (trial_timeout {limits.wall_time:g} s)"
    return f"hit the trials' memory limit (memory_limit {limits.memory} bytes)"


def kept_model(
    store: ArtifactStore,
    task: Task,
    number: int,
    config: dict[str, Any],
    limits: TrialLimits = NO_LIMITS,
) -> Any:
    """The model trial ``number`` trained during the search. One that was never kept
    (a run killed between finishing the trial and writing its model, or a deleted file)
    is trained again as the trial trained it, on the same rows (its splits are drawn
    from the trial number) and within the trials' ``limits``, and kept: the run goes on
    instead of failing on every later resume."""
    if number in store:
        return store.get(number)
    logger.warning(
        "no model kept for trial %d (killed run or deleted file): training it again on "
        "the rows it was trained on", number,
    )
    outcome = evaluate(lambda c: task.evaluate(c, iteration=number).model, config, limits)
    if outcome.kind is not OutcomeKind.RETURNED:
        raise TrialError(
            f"trial {number} kept no model, and training it again failed: {outcome.message}"
        )
    store.put(number, outcome.value)
    return outcome.value


def ensemble_validation_loss(study: Study, task: Task, ensemble: Ensemble) -> float | None:
    """The ensemble's loss on the fixed validation set, from the stored predictions and
    combined as :class:`FittedEnsemble` combines them (by the ensemble's rule, at its
    size); ``None`` without a fixed set. One member scores as its trial, whose own
    probabilities the fitted ensemble predicts."""
    y_true = study.context.y_true
    if y_true is None:
        return None
    if len(ensemble) == 1:
        return study.history[ensemble.members[0]].loss
    predictions = [study.history[n].predictions for n in ensemble.members]
    if hasattr(task.loss, "ensemble_loss") and hasattr(task.loss, "contributions"):
        return ensemble_loss_of(task.loss, y_true, predictions, ensemble)
    return task.score(y_true, ensemble.combine(predictions))
