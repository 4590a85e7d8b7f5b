"""``ensembo run EXPERIMENT`` and ``ensembo resume STORAGE``."""

from __future__ import annotations

import contextlib
import json
import shlex
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ensembo import spaces
from ensembo.attribution import CALL_NOTE
from ensembo.ensemble import members_text
from ensembo.ensemble_keeper import PredictionsNeededError
from ensembo.errors import (
    EnsemboError,
    ExperimentError,
    PluginContractError,
    SpaceError,
    StorageError,
)
from ensembo.experiment import (
    Experiment,
    ExperimentProblems,
    is_missing_module,
    load_experiment,
    parse_experiment,
)
from ensembo.experiment_location import (
    ExperimentFolder,
    experiment_folder,
    recorded_location,
    relative_files,
)
from ensembo.objective import failure_summary
from ensembo.spaces.problems import SpaceDefinitionError
from ensembo.stored_study import SCORING, discard_if_nothing_ran
from ensembo.study import Study
from ensembo.trials import TrialState, outcome_counts, outcome_text


def register(subparsers) -> None:
    run_parser = subparsers.add_parser("run", help="run an experiment file")
    run_parser.add_argument("experiment", help="experiment YAML file")
    run_parser.add_argument(
        "--storage", help="SQLite file to keep the study in (overrides the file)"
    )
    run_parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    run_parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    run_parser.set_defaults(handler=run, interrupt_note=trials_saved)

    resume_parser = subparsers.add_parser("resume", help="continue a stored study to its budget")
    resume_parser.add_argument("storage", help="the study's SQLite file")
    resume_parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    resume_parser.add_argument(
        "--no-progress", action="store_true", help="no progress bar on stderr"
    )
    resume_parser.set_defaults(handler=resume, interrupt_note=trials_saved)


def trials_saved(args) -> str:
    """What a Ctrl-C or SIGTERM leaves of a run: each trial is stored as it finishes, in
    ``args.study_file`` once the run has one. Stopped before that, nothing ran; a study
    kept in memory (no ``storage:``) keeps nothing, and a file with no trial run is
    removed (``discard_if_nothing_ran``)."""
    if not hasattr(args, "study_file"):
        return ""
    if args.study_file is None:
        return "the study was kept in memory (no storage), so no trial is saved"
    if not args.study_file.exists():
        return ""
    return (f"finished trials are saved in {args.study_file}; continue with: "
            f"ensembo resume {shlex.quote(str(args.study_file))}")


def run(args) -> int:
    experiment = load_experiment(args.experiment)
    with naming_the_file(args.experiment):
        return _run_parsed(experiment, args)


def _run_parsed(experiment: Experiment, args) -> int:
    storage = args.study_file = experiment.storage_path(args.storage)
    check_queued(experiment)  # before a study file exists: a typo must not leave one
    if "data" in experiment.source:
        from ensembo.cli.data_run import run_data_experiment  # imports scikit-learn

        return run_data_experiment(experiment, storage, args.json, _wants_progress(args))
    objective = experiment.objective()  # likewise: a misspelt objective leaves no file
    created = storage is not None and not storage.exists()
    study = None
    try:
        study = _start_study(experiment, storage)
        experiment.queue_into(study)
        return _finish(study, experiment, objective, args.json, _wants_progress(args))
    except BaseException:
        if created and study is not None:
            discard_if_nothing_ran(study, storage)
        raise


def _start_study(experiment: Experiment, storage: Path | None) -> Study:
    try:
        return Study(
            experiment.space_source(),
            storage=storage,
            metadata={
                "experiment": experiment.source,
                **recorded_location(experiment.base_dir, storage),
                # another function's losses must not join these trials (see stored_study)
                SCORING: {"objective": experiment.source["objective"]},
            },
            **experiment.study_options(),
        )
    except PredictionsNeededError as error:  # its remedy is Python, the file has no key for it
        raise ExperimentError(
            "ensemble", f"{error.strategy} needs the trials' validation predictions, which "
            "only a data: experiment has (ensembo scores its trials on validation rows); an "
            "objective: experiment can use only ensemble: best"
        ) from None


def check_queued(experiment: Experiment) -> None:
    """The ``enqueue:`` entries must fit the space; checked before the study (and its
    file) exists, with the message :meth:`Experiment.queue_into` gives."""
    queued = experiment.source.get("enqueue") or []
    if not queued:
        return
    space = spaces.load(experiment.space_source())
    for index, config in enumerate(queued):
        try:
            space.complete(config)
        except SpaceError as error:
            raise ExperimentError(f"enqueue[{index}]", str(error)) from None


@contextlib.contextmanager
def naming_the_file(experiment_file: str | Path) -> Iterator[None]:
    """Name the experiment file in a mistake found after it was parsed (an unknown
    surrogate, a bad ``data:`` value), as a parse error does; a plugin's broken contract
    stays the plugin's bug, and a storage error names its study file already."""
    try:
        yield
    except (ExperimentProblems, SpaceDefinitionError) as error:
        # each problem on its line (a space file's 14 were shown as its first "and 13 more")
        named = ExperimentProblems(
            [ExperimentError(_within(experiment_file, p.path), p.message) for p in error.problems]
        )
        for note in getattr(error, "__notes__", ()):
            named.add_note(note)
        raise named from error
    except StorageError:
        raise
    except EnsemboError as error:
        if _broke_contract_in_call(error):
            raise
        path = getattr(error, "path", "") if isinstance(error, ExperimentError | SpaceError) else ""
        message = getattr(error, "message", str(error)) if path else str(error)
        named = ExperimentError(_within(experiment_file, path), message)
        for note in getattr(error, "__notes__", ()):
            named.add_note(note)
        raise named from error


def _broke_contract_in_call(error: EnsemboError) -> bool:
    """As the command's handler tells a plugin's bug (exit 1) from a user's mistake."""
    notes = getattr(error, "__notes__", ())
    return isinstance(error, PluginContractError) and any(n.startswith(CALL_NOTE) for n in notes)


def _within(experiment_file: str | Path, path: str) -> str:
    """'bad.yaml: surrogate', as load_experiment names a key of the file."""
    prefix = f"{experiment_file}: "
    if path.startswith(prefix) or path == str(experiment_file):
        return path
    return f"{experiment_file}: {path}" if path else str(experiment_file)


def resume(args) -> int:
    path = Path(args.storage)
    if path.is_dir():
        raise ExperimentError(str(path), "is a directory; resume takes a study's storage file "
                              "(.db)")
    if not path.is_file():
        raise ExperimentError(str(path), "no such study file")
    if path.suffix.lower() in (".yaml", ".yml", ".json"):  # else "file is not a database"
        raise ExperimentError(
            str(path), f"resume takes the study's storage file (.db); to run or continue an "
            f"experiment file: ensembo run {path}"
        )
    args.study_file = path
    study = Study.load(path)
    document = study.metadata.get("experiment")
    if document is None:
        raise ExperimentError(
            str(path), "this study was not started by 'ensembo run'; resume it from Python"
        )
    folder = experiment_folder(study.metadata, path, _objective_module(document),
                               relative_files(document))
    experiment = parse_experiment(document, folder.path)
    if "data" in experiment.source:
        from ensembo.cli.data_run import run_data_experiment  # imports scikit-learn

        return run_data_experiment(experiment, path, args.json, _wants_progress(args), study=study)
    objective = _resumed_objective(experiment, folder, path)
    experiment.queue_into(study)  # the entries a run that died while queueing left out
    return _finish(study, experiment, objective, args.json, _wants_progress(args))


def _resumed_objective(
    experiment: Experiment, folder: ExperimentFolder, study_file: Path
) -> Callable[[dict[str, Any]], Any]:
    """The objective, from the experiment folder ``folder`` chose; when its module is
    not found there, the error says how to go on (the project may have moved)."""
    try:
        return experiment.objective()
    except ExperimentError as error:
        if not is_missing_module(error.__cause__, str(_objective_module(experiment.source))):
            raise
        message = f"{error.message}; {folder.not_found_hint(study_file)}"
        raise ExperimentError(error.path, message) from error


def _objective_module(document: Any) -> str | None:
    """'obj' of 'objective: obj:loss', the module a resumed study's folder must hold."""
    reference = document.get("objective") if isinstance(document, dict) else None
    return reference.partition(":")[0] if isinstance(reference, str) else None


def _wants_progress(args) -> bool:
    """The bar is on unless switched off; it draws only when stderr is a terminal."""
    return not (getattr(args, "no_progress", False) or getattr(args, "quiet", False))


def _finish(
    study: Study,
    experiment: Experiment,
    objective: Callable[[dict[str, Any]], Any],
    as_json: bool,
    show_progress: bool = False,
) -> int:
    finished = _finished_count(study)
    remaining = max(experiment.budget - finished, 0)
    if not remaining:
        print_budget_reached(finished, experiment.budget)
    else:
        execution = experiment.execution
        with execution.open_backend() as backend:
            study.optimize(
                objective,
                n_trials=remaining,
                timeout=experiment.timeout,
                show_progress=show_progress,
                executor=backend,
                **execution.limit_options(),
            )
        print_timeout_stop(_finished_count(study), experiment)
    summary = summarize(study)
    if as_json:
        print(json.dumps(summary, indent=2, default=str))
    else:
        print(format_summary(summary))
    return _exit_status(study)


def _finished_count(study: Study) -> int:
    return len(study.history.in_state(TrialState.COMPLETE, TrialState.FAILED))


def print_timeout_stop(finished: int, experiment: Experiment) -> None:
    """A run cut short by ``timeout:`` looks finished in its summary: say it stopped."""
    if experiment.timeout is None or finished >= experiment.budget:
        return
    print(
        f"ensembo: stopped by timeout ({experiment.timeout:g} s) after {finished} of "
        f"{experiment.budget} trials; run it again to continue",
        file=sys.stderr,
    )


def print_budget_reached(finished: int, budget: int) -> None:
    """A rerun of a finished study prints its results again: say why nothing ran."""
    print(
        f"ensembo: the study already has {finished} finished trials (budget {budget}); "
        "nothing to run. To continue it, raise budget: in its experiment file and "
        "'ensembo run' that file again",
        file=sys.stderr,
    )


def _exit_status(study: Study) -> int:
    """1 when trials ran and none completed: the run produced nothing to use (a broken
    objective: it raised, or returned None, NaN or a string), which scripts and CI must
    notice without reading the summary; the first errors go to stderr."""
    failed = study.history.in_state(TrialState.FAILED)
    if study.history.completed() or not failed:
        return 0
    print(
        f"ensembo: error: no trial completed ({len(failed)} failed); the objective's errors:\n"
        f"{failure_summary(failed)}",
        file=sys.stderr,
    )
    return 1


def summarize(study: Study) -> dict:
    best = study.best_trial
    ensemble = study.ensemble
    return {
        "space": study.space.name,
        **outcome_counts(study.history),
        "best": None
        if best is None
        else {"number": best.number, "loss": best.loss, "config": best.config},
        "ensemble": None
        if ensemble is None
        else {"members": list(ensemble.members), "weights": list(ensemble.weights)},
    }


def format_summary(summary: dict) -> str:
    lines = [f"space: {summary['space']}", f"trials: {outcome_text(summary)}"]
    best = summary["best"]
    if best:
        lines.append(
            f"best: trial {best['number']} loss {best['loss']:.6g} config {best['config']}"
        )
    ensemble = summary["ensemble"]
    if ensemble:
        lines.append(f"ensemble: {members_text(ensemble['members'], ensemble['weights'])}")
    return "\n".join(lines)
