"""``ensembo run`` / ``ensembo resume`` for experiments with a ``data:`` key.

Such an experiment has no objective function: the task (dataset, executable space,
validation scheme) is the objective, see :mod:`ensembo.ml.data_run`. The progress bar
is drawn on a terminal; otherwise one line per finished trial goes to stderr.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

from ensembo import components, spaces
from ensembo.cli.run_command import print_budget_reached, print_timeout_stop
from ensembo.datasets import data_digest
from ensembo.errors import ExperimentError, StorageError, TrialError
from ensembo.execution import TrialLimits
from ensembo.experiment import Experiment
from ensembo.experiment_location import recorded_location
from ensembo.hookspecs import hookimpl
from ensembo.loss_fit import DEFAULT_LOSS
from ensembo.ml.artifacts import artifact_store_for
from ensembo.ml.data_run import (
    DataSettings,
    format_report,
    prepare,
    run_and_report,
    scoring_settings,
    study_options,
)
from ensembo.ml.loop import finished_count
from ensembo.ml.stored_search import stored_scoring
from ensembo.objective import failure_summary
from ensembo.progress import ProgressBar, is_terminal
from ensembo.storage import open_existing_storage
from ensembo.stored_study import (
    DATA_DIGEST,
    SCORING,
    another_space,
    changed_data_message,
    discard_if_nothing_ran,
    same_space,
)
from ensembo.study import Study
from ensembo.trials import Trial, TrialState

logger = logging.getLogger(__name__)


class TrialLines:
    """One line per finished trial on stderr, for runs whose stderr is not a terminal.

    Trials are named by their number, counted from 0 as in the final report ("selected
    ...: trial 3") and the study; progress is the count of finished trials out of the
    budget, a resumed study's earlier trials included."""

    def __init__(self, total: int):
        self.total = total

    @hookimpl
    def ensembo_trial_finished(self, study: Study, trial: Trial) -> None:
        if trial.state is TrialState.COMPLETE:
            outcome = f"loss {trial.loss:.4f}"
        else:
            outcome = f"{trial.state.value}: {(trial.error or '')[:80]}"
        # the study's best, so a continued study's earlier trials count (as in ProgressBar)
        best_trial = study.best_trial
        best = "" if best_trial is None else f" (best {best_trial.loss:.4f})"
        done = len(study.history.in_state(TrialState.COMPLETE, TrialState.FAILED))
        print(
            f"trial {trial.number} [{done}/{self.total} done] {outcome}{best}",
            file=sys.stderr,
            flush=True,
        )


def _observers(budget: int, show_progress: bool, finished: int = 0) -> list[Any]:
    """The bar (a terminal) or trial lines; both count the ``finished`` trials of a
    continued study toward the budget."""
    if not show_progress:
        return []
    if is_terminal(sys.stderr):
        return [ProgressBar(budget, initial=min(finished, budget))]
    return [TrialLines(budget)]


def _finished_in(storage: Path | None) -> int:
    """The trials a stored study has finished (complete or failed), read before the
    study is opened, which needs its observers; 0 for a new study."""
    if storage is None or not storage.is_file():
        return 0
    try:
        opened = open_existing_storage(storage, read_only=True)
    except StorageError:  # not a study: the study, opened next, says so
        return 0
    try:
        return sum(trial.state.finished for trial in opened.trials())
    finally:
        opened.close()


def _close(observers: list[Any]) -> None:
    """Close the progress bar however the command ends: ``run_task`` tells every observer
    the run ended (``ensembo_study_finished``), but a run may fail before it starts."""
    for observer in observers:
        close = getattr(observer, "close", None)
        if close is not None:
            close()


_DATA_EXECUTION_KEYS = {"trial_timeout", "memory_limit"}


def _trial_limits(experiment: Experiment) -> TrialLimits:
    """``execution: trial_timeout / memory_limit`` for each trial's fits."""
    settings = experiment.execution
    return TrialLimits(wall_time=settings.trial_timeout, memory=settings.memory_limit)


def _space(experiment: Experiment) -> Any:
    return spaces.load(experiment.space_source())


def run_data_experiment(
    experiment: Experiment,
    storage: Path | None,
    as_json: bool,
    show_progress: bool,
    study: Study | None = None,
) -> int:
    """Start (or, given ``study``, continue) a data experiment and print its report."""
    # a stored study's settings are those it was started with: checked as then
    document = experiment.source["data"]
    settings = DataSettings.from_document(
        document, stored=study is not None or _continues_stored_split(document, storage)
    )
    unused = sorted(set(experiment.source.get("execution") or {}) - _DATA_EXECUTION_KEYS)
    if unused:  # checked, but a user expects them to act
        logger.warning(
            "execution: %s not used by data: experiments, whose trials run one at a time "
            "(data.threads sets each model fit's threads; trial_timeout and memory_limit "
            "apply)", ", ".join(unused)
        )
    space = _space(experiment)  # executable: builds the estimators (a stored space only searches)
    prepared = prepare(
        settings,
        space,
        seed=experiment.seed,
        loss=experiment.source.get("loss"),
        base_dir=experiment.base_dir,
    )
    finished_before = finished_count(study) if study is not None else _finished_in(storage)
    observers = _observers(experiment.budget, show_progress, finished_before)
    created = study is None and storage is not None and not storage.exists()
    scoring = {
        # as they act on the scoring: final, refit and threads may change between runs
        "data": scoring_settings(experiment.source["data"]),
        "loss": _loss_record(prepared.task.loss_spec, DEFAULT_LOSS[prepared.task.task], storage),
    }
    if storage is not None:  # a study in memory cannot be continued: nothing to compare
        scoring[DATA_DIGEST] = data_digest(prepared.dataset)
    if study is None:
        study = Study(
            space,
            storage=storage,
            callbacks=observers,
            metadata={
                "experiment": experiment.source,
                **recorded_location(experiment.base_dir, storage),
                SCORING: scoring,
            },
            **study_options(prepared, experiment.study_options()),
        )
        experiment.queue_into(study)
    else:
        _check_resumable(study, experiment, space, scoring, storage)
        study = Study.load(storage, callbacks=observers)
        experiment.queue_into(study)  # the entries a run that died while queueing left out
    try:
        # before any trial: a models folder another study file owns refuses this one
        store = artifact_store_for(storage)
        finished = finished_count(study)
        if finished >= experiment.budget:
            print_budget_reached(finished, experiment.budget)
        summary = run_and_report(
            study,
            prepared,
            settings,
            budget=experiment.budget,
            timeout=experiment.timeout,
            storage=storage,
            limits=_trial_limits(experiment),
            store=store,
        )
    except TrialError:
        if not _none_completed(study):
            raise
        return 1
    except BaseException:
        if created:  # a file holding only settings would refuse the corrected experiment
            discard_if_nothing_ran(study, storage)
        raise
    finally:
        _close(observers)
    print_timeout_stop(finished_count(study), experiment)
    print(json.dumps(summary, indent=2, default=str) if as_json else format_report(summary))
    return 0


def _loss_record(loss: Any, default: Any, storage: Path | None) -> Any:
    """The loss in effect (the task's default when unset) as a spec mapping, so that
    ``zero-one``, ``{name: zero-one}`` and leaving out the default are one setting. A
    study stored by an earlier version recorded the loss as written (``None``: the
    default): the same loss keeps that record, to compare equal."""
    record = components.describe("loss", loss)
    if storage is None or not storage.is_file() or stored_scoring(storage, "data") is None:
        return record  # no data study stored yet
    stored = stored_scoring(storage, "loss")
    same = components.describe("loss", default if stored is None else stored) == record
    return stored if same else record


def _continues_stored_split(document: Any, storage: Path | None) -> bool:
    """Whether ``storage`` holds a study whose trials were scored without the rows of
    this ``data.selection_split``: then they stay held out, whatever ``data.final``
    (a study stored before an unused split was refused must still continue)."""
    if storage is None or not storage.is_file():
        return False
    given = scoring_settings(document)
    if given is None or given["selection_split"] is None:
        return False
    stored = scoring_settings(stored_scoring(storage, "data"))
    return stored is not None and stored["selection_split"] == given["selection_split"]


def _check_resumable(
    study: Study, experiment: Experiment, space: Any, scoring: dict[str, Any], storage: Path
) -> None:
    """A resumed study rebuilds its learners from the space file and reloads its data
    from the dataset: either may have been edited since it started. Another space
    failed every remaining trial (spending the budget); other data would be ranked and
    ensembled with the stored trials. A study stored before data digests were kept
    resumes unchecked for its data."""
    if not same_space(space.definition(), study.space.definition()):
        difference = another_space(space.definition(), study.space.definition())
        source = experiment.source["space"]
        where = source if isinstance(source, str) else "the inline space"
        raise ExperimentError(
            "space", f"{where} is not the space the study in {storage} was started with: "
            f"{difference}. Restore it to resume this study, or run the edited experiment "
            "with another storage"
        )
    stored = (study.metadata.get(SCORING) or {}).get(DATA_DIGEST)
    if stored is not None and stored != scoring.get(DATA_DIGEST):
        raise ExperimentError(
            "data.dataset", f"{storage}: {changed_data_message(scoring['data'])}"
        )


def _none_completed(study: Study) -> bool:
    """Trials ran and none completed: as an objective run, exit 1, not 2 (no mistake in
    the experiment file is known; scripts and CI must notice), the errors on stderr."""
    failed = study.history.in_state(TrialState.FAILED)
    if study.history.completed() or not failed:
        return False
    print(
        f"ensembo: error: no trial completed ({len(failed)} failed); the trials' errors:\n"
        f"{failure_summary(failed)}",
        file=sys.stderr,
    )
    return True
