"""A Ctrl-C during a run's first trial keeps the study file: it was deleted as a file in
which nothing ran, while the CLI said "finished trials are saved" and ``ensembo
resume`` then found no study file (audit)."""

from __future__ import annotations

import json
import sqlite3
import textwrap

from ensembo.cli import main

OBJECTIVE = """
import os

def loss(config):
    marker = os.path.join(os.path.dirname(__file__), "interrupted")
    if not os.path.exists(marker):  # the first call: a Ctrl-C while it ran
        open(marker, "w").close()
        raise KeyboardInterrupt
    return config["x"]
"""


def test_a_ctrl_c_in_the_first_trial_keeps_the_study_for_resume(tmp_path, monkeypatch):
    (tmp_path / "first_objective.py").write_text(textwrap.dedent(OBJECTIVE))
    experiment = tmp_path / "experiment.yaml"
    experiment.write_text(json.dumps({
        "space": {"params": {"x": {"type": "float", "low": 0.0, "high": 1.0}}},
        "objective": "first_objective:loss", "surrogate": None, "budget": 3,
        "storage": "study.db",
    }))
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["run", str(experiment)]) == 130
    study = tmp_path / "study.db"
    with sqlite3.connect(study) as connection:
        assert connection.execute("SELECT number, state FROM trials").fetchall() == [
            (0, "interrupted")]
    assert main(["resume", str(study)]) == 0
    with sqlite3.connect(study) as connection:
        states = connection.execute("SELECT state FROM trials ORDER BY number").fetchall()
    assert states == [("complete",)] * 3
