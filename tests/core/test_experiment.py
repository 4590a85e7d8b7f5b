"""Experiment files: every value is checked before anything runs or is stored."""

from __future__ import annotations

import re

import pytest

from ensembo import Study
from ensembo.cli import main
from ensembo.errors import ExperimentError
from ensembo.experiment import load_experiment, parse_experiment

BASE = {"space": "svm", "objective": "math:fabs", "budget": 3}


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("seed", -1, "seed: must be an integer >= 0, got -1"),
        ("n_initial", "abc", "n_initial: must be an integer >= 0, got 'abc'"),
        ("n_initial", -2, "n_initial: must be an integer >= 0, got -2"),
        ("timeout", "abc", "timeout: must be a finite positive number of seconds, got 'abc'"),
        ("timeout", 0, "timeout: must be a finite positive number of seconds, got 0"),
        ("storage", 5, "storage: must be a string, got 5"),
        ("name", [1], "name: must be a string, got [1]"),
    ],
)
def test_bad_values_name_their_key(key, value, message):
    with pytest.raises(ExperimentError, match=re.escape(message)):
        parse_experiment({**BASE, key: value})


def test_a_document_that_is_not_a_mapping_names_the_file_once(tmp_path):
    path = tmp_path / "list.yaml"
    path.write_text("- a\n")
    with pytest.raises(ExperimentError) as caught:
        load_experiment(path)
    assert str(caught.value) == f"{path}: an experiment must be a mapping of keys, got list"


@pytest.mark.parametrize(
    ("component", "message"),
    [
        ("ensemble: {name: eo, size: 0}",
         "ensemble: ensemble strategy 'eo' (from ensembo) rejected options"),
        ("surrogate: {name: gp, kernel: nope}",
         "surrogate: surrogate 'gp' (from ensembo) rejected options"),
        ("ensemble: {name: posthoc, strat: 3}",
         "ensemble: ensemble strategy 'posthoc' (from ensembo) rejected options ['strat']"),
        # said "PostHocSelection.__init__() got an unexpected keyword argument 'bags'"
        ("ensemble: {name: posthoc, bags: 3}",
         "rejected options ['bags']: unknown: bags (did you mean n_bags?); its options: "),
    ],
)
def test_bad_component_option_exits_2_without_traceback(tmp_path, capsys, component, message):
    path = tmp_path / "experiment.yaml"
    path.write_text(
        "space: {params: {x: {type: float, low: 0.0, high: 1.0}}}\n"
        f"objective: math:fabs\nbudget: 2\nstorage: study.db\n{component}\n"
    )
    assert main(["run", "--no-progress", str(path)]) == 2
    error = capsys.readouterr().err
    assert error.startswith("ensembo: error: ") and message in error
    assert not (tmp_path / "study.db").exists()


@pytest.mark.parametrize(
    ("component", "message"),
    [
        ("ensemble: 5", "ensemble: expected a plugin name or a mapping with a 'name' key, got 5"),
        ("surrogate: [gp]", "surrogate: expected a plugin name or a mapping with a 'name' key"),
        ("ensemble: {size: 3}", "ensemble: a component mapping needs a 'name' key"),
    ],
)
def test_a_component_that_is_neither_name_nor_mapping_is_named_by_its_key(
    tmp_path, capsys, component, message
):
    path = tmp_path / "experiment.yaml"
    path.write_text(
        "space: {params: {x: {type: float, low: 0.0, high: 1.0}}}\n"
        f"objective: math:fabs\nbudget: 2\nstorage: study.db\n{component}\n"
    )
    assert main(["run", "--no-progress", str(path)]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "study.db").exists()


def test_an_inline_space_is_read_as_a_space_file_is(tmp_path):
    path = tmp_path / "experiment.yaml"
    path.write_text(
        "space:\n  params:\n    C: {type: float, low: 1e-3, high: 1e5, log: true}\n"
        "objective: math:fabs\nbudget: 2\n"
    )
    experiment = load_experiment(path)
    assert experiment.source["space"]["params"]["C"]["high"] == 1e5


def test_an_inline_space_takes_the_experiment_name_and_a_renamed_file_still_resumes(tmp_path):
    """An inline space was titled "space" in reports. Its name is the experiment's
    ``name`` or file stem; a name is a label, so a renamed file continues the study."""
    (tmp_path / "quadratic.py").write_text("def loss(c):\n    return (c['x'] - 0.3) ** 2\n")
    text = (
        "space:\n  params:\n    x: {type: float, low: 0, high: 1}\n"
        "objective: quadratic:loss\nsurrogate: null\nstorage: study.db\nbudget: "
    )
    (tmp_path / "tune-x.yaml").write_text(text + "2\n")
    assert main(["run", "--no-progress", str(tmp_path / "tune-x.yaml")]) == 0
    (tmp_path / "renamed.yaml").write_text(text + "3\nname: x again\n")
    assert main(["run", "--no-progress", str(tmp_path / "renamed.yaml")]) == 0
    study = Study.load(tmp_path / "study.db")
    assert len(study.trials) == 3
    assert study.space.name == "x again"
    assert load_experiment(tmp_path / "tune-x.yaml").space_source()["name"] == "tune-x"


def test_a_rerun_naming_another_objective_on_the_same_storage_is_refused(tmp_path, capsys):
    """Another function's losses were ranked and ensembled with the stored ones."""
    (tmp_path / "losses.py").write_text(
        "def near(c):\n    return (c['x'] - 0.3) ** 2\n\ndef far(c):\n    return 100 * c['x']\n"
    )
    text = (
        "space:\n  params:\n    x: {type: float, low: 0, high: 1}\n"
        "surrogate: null\nstorage: study.db\nbudget: 3\nobjective: "
    )
    (tmp_path / "near.yaml").write_text(text + "losses:near\n")
    (tmp_path / "far.yaml").write_text(text + "losses:far\n")
    assert main(["run", "--no-progress", str(tmp_path / "near.yaml")]) == 0
    assert main(["run", "--no-progress", str(tmp_path / "far.yaml")]) == 2
    assert "objective 'losses:near' stored, 'losses:far' given" in capsys.readouterr().err


def test_inline_space_problems_name_the_file_and_the_space_path(tmp_path):
    path = tmp_path / "experiment.yaml"
    path.write_text(
        "space:\n  params:\n    C: {type: float, low: 0, high: 1, log: true}\n"
        "    k: {type: int, low: 5, high: 1}\n"
        "objective: math:fabs\nbudget: 2\n"
    )
    with pytest.raises(ExperimentError) as caught:
        load_experiment(path)
    assert str(caught.value).splitlines() == [
        f"{path}: space.params.C.low: log scale needs low > 0, got 0",
        f"{path}: space.params.k: empty range: low 5 must be below high 1",
    ]


def test_duplicate_keys_in_an_experiment_file_are_all_reported(tmp_path):
    path = tmp_path / "experiment.yaml"
    path.write_text(
        "space:\n  params:\n    C: {type: float, low: 0.1, high: 1.0}\n"
        "    C: {type: int, low: 1, high: 3}\n"
        "objective: math:fabs\nbudget: 2\nbudget: 3\n"
    )
    with pytest.raises(ExperimentError) as caught:
        load_experiment(path)
    assert str(caught.value).splitlines() == [
        f"{path}: space.params: duplicate key 'C' on line 4 (names must be unique)",
        f"{path}: duplicate key 'budget' on line 7 (names must be unique)",
    ]


def test_objective_and_data_are_one_or_the_other():
    """With both, objective: was silently ignored, even a function that does not exist."""
    data = {"dataset": "iris", "validation": 3}
    with pytest.raises(ExperimentError, match="objective: give either objective: .* or data: "
                       r".*, not both"):
        parse_experiment({**BASE, "objective": "nowhere:missing", "data": data})
    with pytest.raises(ExperimentError, match=r"objective: required key is missing; give "
                       r"objective: \(a function to minimize\) or data:"):
        parse_experiment({"space": "svm", "budget": 3})


def test_resume_given_the_experiment_file_points_to_run(tmp_path, capsys):
    """It said "file is not a database"."""
    path = tmp_path / "experiment.yaml"
    path.write_text("space: svm\nobjective: math:fabs\nbudget: 2\n")
    assert main(["resume", str(path)]) == 2
    expected = f"to run or continue an experiment file: ensembo run {path}"
    assert "resume takes the study's storage file (.db)" in (error := capsys.readouterr().err)
    assert expected in error


def test_a_rerun_of_a_finished_study_says_why_nothing_ran(tmp_path, capsys):
    (tmp_path / "quadratic.py").write_text("def loss(c):\n    return (c['x'] - 0.3) ** 2\n")
    path = tmp_path / "exp.yaml"
    path.write_text("space:\n  params:\n    x: {type: float, low: 0, high: 1}\n"
                    "objective: quadratic:loss\nsurrogate: null\nstorage: s.db\nbudget: 2\n")
    assert main(["run", "--no-progress", str(path)]) == 0
    assert "nothing to run" not in capsys.readouterr().err
    assert main(["run", "--no-progress", str(path)]) == 0
    assert ("the study already has 2 finished trials (budget 2); nothing to run. To "
            "continue it, raise budget: in its experiment file and 'ensembo run' that file "
            "again") in capsys.readouterr().err
