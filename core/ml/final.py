"""What a finished search hands back: the selected model and the ensemble, fitted.

Models come from the artifact store as they were trained during the search (on the
training part of each split; under k-fold, the average of the fold models), or, with
``refit``, are trained afresh on all the data (training, validation and selection
rows), as Lévesque's protocol does for the reported model. Refitting changes the
models, never which configurations were selected.
"""

from __future__ import annotations

from typing import Any

import attrs

from ensembo.ensemble import Ensemble
from ensembo.ml.artifacts import ArtifactStore
from ensembo.ml.fitted_ensemble import FittedEnsemble
from ensembo.ml.selection import select_trial
from ensembo.ml.task import Task
from ensembo.study import Study
from ensembo.trials import Trial


@attrs.frozen(kw_only=True)
class FinalModels:
    """The selected trial and its model; the study's ensemble and its fitted estimator."""

    best_trial: Trial
    best_estimator: Any = attrs.field(eq=False)
    ensemble: Ensemble
    ensemble_estimator: FittedEnsemble = attrs.field(eq=False)
    refit: bool


def finalize(
    study: Study,
    task: Task,
    store: ArtifactStore,
    *,
    selection: str = "argmin",
    refit: bool = False,
    surrogate: Any = "gp",
) -> FinalModels:
    """Select the final trial by ``selection`` and fit what will predict."""
    best = select_trial(study.history, study.space, selection, surrogate=surrogate, seed=study.seed)
    ensemble = study.ensemble or Ensemble.single(best.number)
    cache: dict[int, Any] = {}

    def model_of(number: int) -> Any:
        if number not in cache:
            cache[number] = task.fit(dict(study.history[number].config)) if refit else store.get(number)
        return cache[number]

    estimator = FittedEnsemble(
        members=[model_of(n) for n in ensemble.members],
        weights=list(ensemble.weights),
        classes=task.classes,
    )
    return FinalModels(
        best_trial=best,
        best_estimator=model_of(best.number),
        ensemble=ensemble,
        ensemble_estimator=estimator,
        refit=refit,
    )
