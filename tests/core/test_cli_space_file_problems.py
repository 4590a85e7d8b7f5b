"""``ensembo run`` on an experiment whose ``space:`` names a space file with several
problems shows each on its own line, as an inline space and ``ensembo space validate``
do: it showed the first with "(and 2 more problems)"."""

from __future__ import annotations

import textwrap

from ensembo.cli import main

SPACE_FILE = """\
params:
  k: {type: int, low: 5, high: 1}
  d: {type: float, low: 0, high: 1, colour: red}
  C: {type: float, low: 0, high: 10, log: true}
"""

EXPERIMENT = """\
space: spaces/bad.yaml
objective: space_file_problems_objective:loss
surrogate: null
budget: 2
"""


def test_every_problem_of_a_space_file_is_a_line_naming_the_experiment(tmp_path, capsys):
    (tmp_path / "spaces").mkdir()
    (tmp_path / "spaces" / "bad.yaml").write_text(SPACE_FILE)
    (tmp_path / "space_file_problems_objective.py").write_text(
        textwrap.dedent("def loss(config):\n    return 0.0\n"))
    experiment = tmp_path / "experiment.yaml"
    experiment.write_text(EXPERIMENT)
    assert main(["run", str(experiment), "--no-progress"]) == 2
    error = capsys.readouterr().err
    assert "more problem" not in error
    lines = [line for line in error.splitlines() if "bad.yaml: params." in line]
    assert len(lines) == 3, error
    for key in ("params.k", "params.d.colour", "params.C.low"):
        assert any(f"{experiment}: " in line and f"bad.yaml: {key}:" in line for line in lines)
