"""A run killed between finishing a trial and keeping its model must not break the
stored study: the model is written first, and a missing one is trained again."""

from __future__ import annotations

import logging
import textwrap

from experiment_texts import TREE_SPACE

from ensembo import Study, TrialState
from ensembo.cli import main
from ensembo.ml import DiskArtifactStore, MemoryArtifactStore, Task, run_task
from ensembo.trials import Evaluation

KEPT = TREE_SPACE + """data:
  dataset: iris
  validation: 3
  refit: false
surrogate: null
ensemble: posthoc
budget: 4
seed: 1
"""


def _run_kept(tmp_path, capsys):
    experiment = tmp_path / "kept.yaml"
    experiment.write_text(textwrap.dedent(KEPT))
    storage = tmp_path / "kept.db"
    assert main(["run", str(experiment), "--storage", str(storage), "--no-progress"]) == 0
    report = capsys.readouterr().out.split("\n\n")[-1]
    ensemble = Study.load(storage).ensemble
    return storage, tmp_path / "kept.models", report, ensemble.members


def test_a_deleted_model_of_a_member_is_trained_again_on_resume(tmp_path, capsys, caplog):
    storage, models, report, members = _run_kept(tmp_path, capsys)
    lost = models / f"trial-{members[0]:05d}.joblib"
    lost.unlink()
    with caplog.at_level(logging.WARNING):
        assert main(["resume", str(storage), "--no-progress"]) == 0
    assert f"no model kept for trial {members[0]}" in caplog.text
    # trained on the same rows as during the search: the same model, the same table
    assert capsys.readouterr().out.split("\n\n")[-1] == report
    assert lost.is_file()


def test_a_model_left_as_a_temporary_file_is_ignored_and_removed(tmp_path, capsys):
    storage, models, report, members = _run_kept(tmp_path, capsys)
    kept = models / f"trial-{members[0]:05d}.joblib"
    kept.rename(kept.with_suffix(".tmp"))  # killed between dump and rename
    (models / "trial-00099.tmp").write_bytes(b"half a model")
    assert main(["resume", str(storage), "--no-progress"]) == 0
    assert capsys.readouterr().out.split("\n\n")[-1] == report
    assert not list(models.glob("trial-*.tmp"))


def test_the_model_is_kept_before_the_trial_is_recorded_complete(
    classification_data, tree_only_space
):
    """A kill between the two steps then leaves a running trial (re-run on resume), not
    a complete one without a model."""
    X, y = classification_data
    study = Study(tree_only_space, surrogate=None, seed=0)
    states_when_kept: list[TrialState] = []

    class WatchingStore(MemoryArtifactStore):
        def put(self, number, model):
            states_when_kept.append(study.history[number].state)
            super().put(number, model)

    task = Task(X, y, task="classification", space=tree_only_space, validation=0.3)
    run_task(study, task, 3, store=WatchingStore())
    assert states_when_kept == [TrialState.RUNNING] * 3


class _NonFiniteLoss(Task):
    """Its evaluations score NaN: the study fails them when told."""

    def evaluate(self, config, iteration=0):
        evaluation = super().evaluate(config, iteration)
        return Evaluation(loss=float("nan"), predictions=evaluation.predictions,
                          model=evaluation.model)


def test_a_trial_the_study_refuses_keeps_no_model(tmp_path, classification_data, tree_only_space):
    X, y = classification_data
    study = Study(tree_only_space, surrogate=None, seed=0)
    store = DiskArtifactStore(tmp_path / "run.models")
    task = _NonFiniteLoss(X, y, task="classification", space=tree_only_space, validation=0.3)
    run_task(study, task, 2, store=store)
    assert [t.state for t in study.trials] == [TrialState.FAILED] * 2
    assert not list((tmp_path / "run.models").iterdir())


class _SlowTask:
    """Trains for ten seconds: more than the trials were allowed."""

    def evaluate(self, config, iteration=0):
        import time

        time.sleep(10)
        return Evaluation(loss=0.0, model="model")


def test_a_missing_model_is_trained_again_within_the_trial_limits():
    """It was trained in the driver without the trials' timeout or memory limit, so one
    that had been stopped during the search could hang the run's end."""
    import pytest

    from ensembo.errors import TrialError
    from ensembo.execution import TrialLimits
    from ensembo.ml.final import kept_model

    store = MemoryArtifactStore()
    with pytest.raises(TrialError, match="trial 3 kept no model, and training it again failed"):
        kept_model(store, _SlowTask(), 3, {}, TrialLimits(wall_time=1))
    assert 3 not in store
