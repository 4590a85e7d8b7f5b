"""With an artifact store, the study does not keep a second reference to every trial's
model (leak audit, finding 3: ``study.models`` held every trial's model for as long as
the study lived, on top of the store; see also
``tests/sklearn/test_estimator_model_memory.py``)."""

from __future__ import annotations

from ensembo.ml.artifacts import MemoryArtifactStore
from ensembo.ml.loop import run_task
from ensembo.ml.task import Task
from ensembo.study import Study
from ensembo.trials import TrialState


def _study(space, task):
    return Study(space, surrogate=None, validation_targets=task.validation_targets(),
                 loss="zero-one", task="classification", seed=0)


def test_with_a_store_the_study_keeps_no_models_and_without_one_it_does(
    tree_only_space, classification_data
):
    X, y = classification_data
    task = Task(X, y, task="classification", space=tree_only_space, validation=0.3)
    study, store = _study(tree_only_space, task), MemoryArtifactStore()
    run_task(study, task, 4, store=store)
    complete = [t.number for t in study.trials if t.state is TrialState.COMPLETE]
    assert len(complete) == 4 and all(n in store for n in complete)
    assert study.models == {}  # was every trial's model, the store's own
    alone = _study(tree_only_space, task)
    run_task(alone, task, 4)  # no store: the study is where the models are
    assert sorted(alone.models) == [t.number for t in alone.trials]
