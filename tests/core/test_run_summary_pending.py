"""An objective experiment's summary counts trials queued by ``enqueue:`` beyond the
budget as pending, as a ``data:`` one does: it printed "trials: 3 (2 complete, 0
failed)" and its ``--json`` had no ``pending``."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

EXPERIMENT = """\
space:
  name: line
  params:
    x: {type: float, low: -5.0, high: 5.0}
objective: objective_module:loss
surrogate: null
budget: BUDGET
seed: 0
enqueue:
  - {x: 1.0}
  - {x: 2.0}
  - {x: 3.0}
"""


def _run(folder: Path, budget: int, *flags: str) -> subprocess.CompletedProcess:
    (folder / "objective_module.py").write_text(textwrap.dedent("""
        def loss(config):
            return (config["x"] - 1.0) ** 2
    """))
    (folder / "experiment.yaml").write_text(EXPERIMENT.replace("BUDGET", str(budget)))
    return subprocess.run(
        [sys.executable, "-m", "ensembo.cli", "run", "experiment.yaml", "--no-progress", *flags],
        capture_output=True, text=True, cwd=folder, check=True,
    )


def test_queued_trials_beyond_the_budget_are_counted_as_pending(tmp_path):
    assert "trials: 3 (2 complete, 0 failed, 1 pending)" in _run(tmp_path, 2).stdout


def test_the_json_summary_has_pending(tmp_path):
    summary = json.loads(_run(tmp_path, 2, "--json").stdout)
    assert (summary["trials"], summary["complete"], summary["failed"], summary["pending"]) == (
        3, 2, 0, 1
    )


def test_no_pending_trials_keeps_the_line_short_and_the_json_key(tmp_path):
    process = _run(tmp_path, 3)
    assert "trials: 3 (3 complete, 0 failed)\n" in process.stdout
    assert json.loads(_run(tmp_path, 3, "--json").stdout)["pending"] == 0
