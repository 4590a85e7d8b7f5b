"""How a :class:`ensembo.study.Study` takes over its storage: claim the file, check that it
is new or holds this study, read its trials against this space, restore the proposer's
state and the ensemble, and mark the trials a dead process left running as interrupted.
Kept apart from the facade so that ``study.py`` reads as ask/tell/record."""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from ensembo import components, environment, stored_study, study_arguments, told_results
from ensembo.ensemble_keeper import EnsembleKeeper
from ensembo.storage import claim_for_writing, shared_object
from ensembo.trials import TrialState

if TYPE_CHECKING:
    from ensembo.study import Study


def continue_stored(study: Study) -> None:
    """Claim ``study``'s storage, check that it is new or holds this study, read its
    trials. Every check comes before the first write, so a refused construction leaves
    the file as it was and the stored study can still be resumed as it was."""
    claim_for_writing(study.storage)  # before reading: a live run's trials are not ours
    classes = stored_study.stored_classes(study.storage, study._given_classes)
    if classes != study._given_classes:
        study._given_classes = classes
        study.context = attrs.evolve(
            study.context,
            **study_arguments.class_fields(classes, study.context.y_true, study.context.task),
        )
    stored = stored_study.stored_history(study.storage)
    # Every environment the study ran in, in order: a resumed study may continue on
    # another machine, whose BLAS kernels can round its models differently.
    study.environments = [environment.describe()]
    continuation = stored_study.plan_continuation(
        study.storage, study._meta(), stored.completed()
    )
    # read against this space once it is known to be the stored study's
    study.history = stored_study.without_inactive_values(study.storage, study.space, stored)
    study._clock = told_results.FinishClock(study.history)
    study.metadata, study.environments = continuation.metadata, continuation.environments
    study._model_state = stored_study.ModelState(
        study.storage, components.describe("surrogate", study._specs["surrogate"])
    )
    study._model_state.restore(study.proposer, stored_trials=len(study.history))
    study._keeper = EnsembleKeeper(study.strategy, study.context, study._strategy_name)
    study._refresh_ensemble(announce=False)  # a strategy that cannot use the trials refuses
    study._writer_token = shared_object.take_over(study.storage)
    continuation.write(study.storage)
    _recover_interrupted(study)


def _recover_interrupted(study: Study) -> None:
    """Trials left RUNNING by a dead process become INTERRUPTED, to be re-run
    (queued ones stay queued)."""
    for trial in study.history.in_state(TrialState.RUNNING):
        study._record(attrs.evolve(trial, state=TrialState.INTERRUPTED, error="process ended"))
