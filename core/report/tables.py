"""Text renderings of a :class:`ReportData`: the markdown summary, the trial table, CSV.

These need only the standard library, so a report always has them, with or without
matplotlib.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ensembo import components, environment, trial_table
from ensembo.report.data import MIN_ACTIVE, ReportData


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:.6g}"


def _plain(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True, default=str)
    return "" if value is None else str(value)


def _cell(value: Any) -> str:
    return _plain(value).replace("|", "\\|").replace("\n", " ")


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def trial_columns(data: ReportData) -> list[str]:
    fixed = ["number", "state", "loss", "best_so_far", "ensemble_loss", "final_weight"]
    hyperparameters = [hp.name for hp in data.hyperparameters]
    return fixed + hyperparameters + data.info_keys + list(trial_table.TAIL_COLUMNS)


def trial_rows(data: ReportData) -> list[list[Any]]:
    """One row per trial in :func:`trial_columns` order; inactive hyperparameters empty."""
    weights = {member.number: member.weight for member in data.members}
    names = [hp.name for hp in data.hyperparameters]
    info_keys = data.info_keys
    # by number like the rows (and trials_dataframe); the ensemble as it was when the
    # trial's result was told, which after out-of-order results is another order
    points = {point.number: point for point in data.iterations}
    return [
        [
            trial.number,
            trial.state.value,
            trial.loss,
            best,
            points[trial.number].ensemble_loss,
            weights.get(trial.number),
            *trial_table.trial_values(trial, names, info_keys),
        ]
        for trial, best in zip(data.trials, trial_table.best_so_far(data.trials), strict=True)
    ]


def write_trials_csv(data: ReportData, path: Path) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(trial_columns(data))
        for row in trial_rows(data):
            writer.writerow(["" if v is None else v for v in row])
    return path


def trials_markdown(data: ReportData) -> str:
    return (
        f"# Trials of {data.space_name}\n\n"
        + markdown_table(trial_columns(data), trial_rows(data))
        + "\n"
    )


def _components(data: ReportData) -> list[list[str]]:
    rows = []
    for kind, spec in data.components.items():
        live = components.live_object_name(spec)
        if live:
            rows.append([kind, f"(a Python object, {live}; not stored)"])
        elif spec is None:
            absent = (
                "none (random search) or a Python object"
                if kind == "surrogate"
                else "a Python object"
            )
            rows.append([kind, f"({absent}; not stored)"])
        else:
            rows.append([kind, components.spec_text(spec)])
    return rows


def summary_markdown(data: ReportData, figures: Sequence[Path] = ()) -> str:
    """The report's front page: setup, outcome, ensemble, figures."""
    counts = ", ".join(f"{n} {state}" for state, n in data.counts.items() if n)
    lines = [
        f"# Report: {data.space_name}",
        "",
        f"Study: `{data.source}`",
        "",
        "## Setup",
        "",
        markdown_table(["component", "choice"], _components(data)),
        "",
        f"Budget: {'not set' if data.budget is None else f'{data.budget} trials'}; "
        f"seed {data.seed}; loss {data.loss_name or 'as returned by the objective'}"
        + (f"; task {data.task}" if data.task else "")
        + ".",
        "",
        *_strategy_advice(data),
        *_experiment(data),
        f"Space `{data.space_name}` ({len(data.hyperparameters)} hyperparameters):",
        "",
        markdown_table(
            ["hyperparameter", "type", "domain", "log"],
            [[hp.name, hp.kind, hp.domain, "yes" if hp.log else ""] for hp in data.hyperparameters],
        ),
        "",
        "## Outcome",
        "",
        f"Trials: {len(data.trials)} ({counts or 'none'}).",
        "",
    ]
    lines += _outcome(data)
    if data.importance:
        lines += [
            "## Hyperparameters most associated with the loss",
            "",
            markdown_table(["hyperparameter", "score"], [[n, s] for n, s in data.importance[:10]]),
            "",
            (
                "Score: how much of the variation of the loss ranks the hyperparameter's value "
                "explains (bias-corrected correlation ratio over categories, or over quantile "
                "bins of numeric values; 0 = no more than chance), over the trials where it is "
                "active."
            ),
            "",
        ]
    else:  # the section is left out: say why rather than leave the reader guessing
        lines += [
            "## Hyperparameters most associated with the loss",
            "",
            (
                f"Not shown: no hyperparameter was active in at least {MIN_ACTIVE} completed "
                "trials (and 10 % of them) with varying values and losses."
            ),
            "",
        ]
    lines += _environments(data)
    if figures:
        lines += ["## Figures", ""] + [f"![{path.stem}]({path.name})" for path in figures] + [""]
    lines += ["Per-trial table: `trials.md`, `trials.csv`.", ""]
    return "\n".join(lines)


def _experiment(data: ReportData) -> list[str]:
    """The experiment file's name and data settings, when ``ensembo run`` started the study."""
    if not data.experiment:
        return []
    lines = []
    if data.experiment.get("name"):
        lines += [f"Experiment: `{data.experiment['name']}`.", ""]
    settings = data.experiment.get("data")
    if isinstance(settings, str):
        settings = {"dataset": settings}
    if isinstance(settings, dict):
        lines += ["Data: " + ", ".join(f"{k} {_plain(v)}" for k, v in settings.items()) + ".", ""]
    return lines


def _strategy_advice(data: ReportData) -> list[str]:
    """What the ensemble strategy warned about the run (eo's budget advice): said once
    here, about the run, rather than warned again by the report."""
    lines = []
    for text in data.strategy_advice:
        lines += [f"The ensemble strategy warned when the study ran: {text}", ""]
    return lines


def _environments(data: ReportData) -> list[str]:
    """Where the study ran: a seed repeats its trials only with the same libraries and CPU."""
    if not data.environments:
        return []  # stored before ensembo recorded it
    lines = ["## Environment", ""]
    if len(data.environments) > 1:
        count = len(data.environments)
        lines += [f"The study ran in {count} environments (resumed elsewhere), in order:", ""]
    return lines + [f"- {environment.summary(e)}" for e in data.environments] + [""]


def _outcome(data: ReportData) -> list[str]:
    if data.best is None:
        return ["No trial has completed yet.", ""]
    info_keys = data.info_keys
    best = data.best
    rows = [
        [f"best single (trial {best.number})", best.loss, *(best.info.get(k) for k in info_keys)]
    ]
    selected = data.selected
    if selected is not None and (
        selected.selection != "argmin" or selected.trial.number != best.number
    ):
        trial = selected.trial
        rows.append(
            [
                f"selected ({selected.selection}): trial {trial.number}",
                trial.loss,
                *(trial.info.get(k) for k in info_keys),
            ]
        )
    if data.members or not data.replay_note:  # a replay that failed has no ensemble to show
        size = len(data.members)
        rows.append(
            [
                f"ensemble ({size} member{'s' if size != 1 else ''})",
                data.final_ensemble_loss,
                *([""] * len(info_keys)),
            ]
        )
    lines = [
        markdown_table(["", "validation loss", *info_keys], rows),
        "",
        f"Best configuration: `{json.dumps(best.config, sort_keys=True, default=str)}`",
        "",
    ]
    if selected is not None:
        chosen = (  # stored by `ensembo run` (data.final) or a fitted estimator (selection)
            f"The final models, as chosen and stored when the search finished: trial "
            f"{selected.trial.number}, selected by {selected.selection}, and the ensemble "
            "below (the figures show the ensemble during the search)."
        )
        lines += [chosen, ""]
    if data.final_ensemble_loss is None and len(data.members) > 1:
        lines += ["The ensemble's loss is unknown: the study recorded no validation targets.", ""]
    for note in (data.replay_note, data.selection_note):
        if note:
            lines += [f"Note: {note.rstrip('.')}.", ""]
    if data.members:
        lines += [
            "### Ensemble members",
            "",
            markdown_table(
                ["trial", "weight", "loss", *info_keys, "configuration"],
                [
                    [m.number, m.weight, m.loss, *(m.info.get(k) for k in info_keys), m.config]
                    for m in data.members
                ],
            ),
            "",
        ]
    return lines
