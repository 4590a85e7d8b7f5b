"""``ensembo run EXPERIMENT`` and ``ensembo resume STORAGE``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ensembo.ensemble import members_text
from ensembo.errors import ExperimentError
from ensembo.experiment import Experiment, load_experiment, parse_experiment
from ensembo.objective import failure_summary
from ensembo.stored_study import SCORING
from ensembo.study import Study
from ensembo.trials import TrialState


def register(subparsers) -> None:
    run_parser = subparsers.add_parser("run", help="run an experiment file")
    run_parser.add_argument("experiment", help="experiment YAML file")
    run_parser.add_argument(
        "--storage", help="SQLite file to keep the study in (overrides the file)"
    )
    run_parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    run_parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    run_parser.set_defaults(handler=run)

    resume_parser = subparsers.add_parser("resume", help="continue a stored study to its budget")
    resume_parser.add_argument("storage", help="the study's SQLite file")
    resume_parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    resume_parser.add_argument(
        "--no-progress", action="store_true", help="no progress bar on stderr"
    )
    resume_parser.set_defaults(handler=resume)


def run(args) -> int:
    experiment = load_experiment(args.experiment)
    storage = experiment.storage_path(args.storage)
    if "data" in experiment.source:
        from ensembo.cli.data_run import run_data_experiment  # imports scikit-learn

        return run_data_experiment(experiment, storage, args.json, _wants_progress(args))
    study = Study(
        experiment.space_source(),
        storage=storage,
        metadata={
            "experiment": experiment.source,
            "experiment_dir": str(experiment.base_dir),
            # another function's losses must not join these trials (see stored_study)
            SCORING: {"objective": experiment.source["objective"]},
        },
        **experiment.study_options(),
    )
    experiment.queue_into(study)
    return _finish(study, experiment, args.json, _wants_progress(args))


def resume(args) -> int:
    path = Path(args.storage)
    if not path.is_file():
        raise ExperimentError(str(path), "no such study file")
    if path.suffix.lower() in (".yaml", ".yml", ".json"):  # else "file is not a database"
        raise ExperimentError(
            str(path), f"resume takes the study's storage file (.db); to run or continue an "
            f"experiment file: ensembo run {path}"
        )
    study = Study.load(path)
    document = study.metadata.get("experiment")
    if document is None:
        raise ExperimentError(
            str(path), "this study was not started by 'ensembo run'; resume it from Python"
        )
    experiment = parse_experiment(document, study.metadata.get("experiment_dir", "."))
    if "data" in experiment.source:
        from ensembo.cli.data_run import run_data_experiment  # imports scikit-learn

        return run_data_experiment(experiment, path, args.json, _wants_progress(args), study=study)
    return _finish(study, experiment, args.json, _wants_progress(args))


def _wants_progress(args) -> bool:
    """The bar is on unless switched off; it draws only when stderr is a terminal."""
    return not (getattr(args, "no_progress", False) or getattr(args, "quiet", False))


def _finish(
    study: Study, experiment: Experiment, as_json: bool, show_progress: bool = False
) -> int:
    objective = experiment.objective()
    finished = len(study.history.in_state(TrialState.COMPLETE, TrialState.FAILED))
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
    summary = summarize(study)
    if as_json:
        print(json.dumps(summary, indent=2, default=str))
    else:
        print(format_summary(summary))
    return _exit_status(study)


def print_budget_reached(finished: int, budget: int) -> None:
    """A rerun of a finished study prints its results again: say why nothing ran."""
    print(
        f"ensembo: the study already has {finished} finished trials (budget {budget}); "
        "nothing to run. Raise budget: in the experiment to continue it",
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
        "trials": len(study.history),
        "complete": len(study.history.completed()),
        "failed": len(study.history.in_state(TrialState.FAILED)),
        "best": None
        if best is None
        else {"number": best.number, "loss": best.loss, "config": best.config},
        "ensemble": None
        if ensemble is None
        else {"members": list(ensemble.members), "weights": list(ensemble.weights)},
    }


def format_summary(summary: dict) -> str:
    lines = [
        f"space: {summary['space']}",
        f"trials: {summary['trials']} ({summary['complete']} complete, {summary['failed']} failed)",
    ]
    best = summary["best"]
    if best:
        lines.append(
            f"best: trial {best['number']} loss {best['loss']:.6g} config {best['config']}"
        )
    ensemble = summary["ensemble"]
    if ensemble:
        lines.append(f"ensemble: {members_text(ensemble['members'], ensemble['weights'])}")
    return "\n".join(lines)
