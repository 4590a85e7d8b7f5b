"""A report replays the ensemble strategy in the order the study was told the results:
in number order, ``eo`` and ``segor`` built another ensemble than the study whenever
results came out of order (parallel workers, several asks before a tell), and the
report showed its members, loss and weights as the study's."""

from __future__ import annotations

import numpy as np
import pytest

from ensembo import Study
from ensembo.report.data import compute_report
from ensembo.report.tables import trial_rows

from .conftest import _space, make_objective

pytestmark = pytest.mark.filterwarnings("ignore:eo. 12 slots:UserWarning")  # a short budget

# which of the three trials in flight reports next (as uneven fit times give)
PICKS = [2, 0, 0, 0, 0, 2, 2, 1, 0, 0, 0, 1, 1, 0, 2, 1]


@pytest.fixture(params=["segor", "eo"])
def out_of_order(request, tmp_path):
    path = tmp_path / "async.db"
    y_true = np.random.default_rng(1).normal(size=60)
    task = {"segor": ("regression", "mse", y_true),
            "eo": ("classification", "zero-one", (y_true > 0).astype(int))}[request.param]
    study = Study(_space(), surrogate=None, ensemble=request.param, storage=path, seed=3,
                  task=task[0], loss=task[1], validation_targets=task[2], budget=len(PICKS))
    objective = _objective(task[0], y_true)
    in_flight = [study.ask() for _ in range(3)]
    for pick in PICKS:
        trial = in_flight.pop(pick % len(in_flight))
        study.tell(trial, objective(trial.config))
        if len(study.trials) < len(PICKS):
            in_flight.append(study.ask())
    told = [t.number for t in sorted(study.trials, key=lambda t: t.finished_at)]
    assert told != sorted(told)
    members = study.ensemble.members
    study.close()
    return path, told, members


def _objective(task, y_true):
    regression = make_objective(y_true)
    if task == "regression":
        return regression

    def classify(config):
        evaluation = regression(config)
        up = 1.0 / (1.0 + np.exp(-4.0 * evaluation.predictions))
        rows = np.column_stack([1.0 - up, up])
        wrong = float(np.mean(rows.argmax(1) != (y_true > 0)))
        return type(evaluation)(loss=wrong, predictions=rows)

    return classify


def test_the_report_shows_the_ensemble_the_study_built(out_of_order):
    path, told, members = out_of_order
    data = compute_report(path)
    assert sorted(m.number for m in data.members) == sorted(set(members))
    assert [p.number for p in data.iterations] == told
    rows = trial_rows(data)
    assert [row[0] for row in rows] == sorted(told)  # the table stays by number
    # best so far by number, as the rows and trials_dataframe() (it rose again row by row)
    best = [row[3] for row in rows]
    assert best == sorted(best, reverse=True)


def test_the_plots_follow_the_order_told(out_of_order, tmp_path):
    pytest.importorskip("matplotlib")
    from ensembo.report import plots

    path, told, _ = out_of_order
    data = compute_report(path)
    places, label = plots.told_axis(data)
    assert [places[n] for n in told] == list(range(len(told)))
    assert label == "trials in the order their results came"
    numbers, _, _ = plots.composition_matrix(data)
    assert numbers == sorted(numbers)
    assert plots.plot_convergence(data, tmp_path / "c.png").exists()
