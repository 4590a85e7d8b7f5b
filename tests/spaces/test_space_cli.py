"""``ensembo space show`` and ``ensembo space validate``."""

from __future__ import annotations

import json

from ensembo.cli import main


def test_show_library_space_prints_the_tree(capsys):
    assert main(["space", "show", "svm-kernels"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("svm-kernels: 5 hyperparameters")
    assert "  kernel: choice {linear, rbf, poly, sigmoid}, default 'rbf', impute midpoint" in out
    assert "    = poly\n      degree: int [1, 10], default 3, impute midpoint" in out
    assert (
        "gamma: float [1e-05, 100000] log, default 0.01, impute midpoint, "
        "when kernel in {'rbf', 'sigmoid'}" in out
    )


def test_show_json_prints_the_definition(capsys):
    assert main(["space", "show", "svm", "--json"]) == 0
    definition = json.loads(capsys.readouterr().out)
    assert definition["name"] == "svm" and "document" in definition


def test_show_unknown_name_is_a_usage_error(capsys):
    assert main(["space", "show", "svmm"]) == 2
    assert "Unknown space 'svmm'; did you mean 'svm'" in capsys.readouterr().err


def test_validate_valid_file(tmp_path, capsys):
    path = tmp_path / "ok.yaml"
    path.write_text("params:\n  x: {type: float, low: 0, high: 1}\n")
    assert main(["space", "validate", str(path)]) == 0
    assert "valid (1 hyperparameters)" in capsys.readouterr().out


def test_validate_prints_every_problem_and_exits_2(tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text(
        "params:\n"
        "  x: {type: float, low: 0, high: 1, log: true}\n"
        "  y: {type: int, low: 4, high: 2}\n"
        "  z: {type: float, low: 0, high: 1, when: {w: 1}}\n"
    )
    assert main(["space", "validate", str(path)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "bad.yaml: params.x.low: log scale needs low > 0, got 0",
        "bad.yaml: params.y: empty range: low 4 must be below high 2",
        "bad.yaml: params.z.when.w: condition on missing parent 'w'; known hyperparameters: z",
        f"{path}: 3 problem(s)",
    ]


def test_validate_unreadable_file(tmp_path, capsys):
    assert main(["space", "validate", str(tmp_path / "missing.yaml")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_validate_takes_a_library_name_as_show_does(capsys):
    """It said "svm: unknown file type ''"."""
    assert main(["space", "validate", "svm"]) == 0
    assert capsys.readouterr().out == "svm: valid (2 hyperparameters)\n"
    assert main(["space", "validate", "svmx"]) == 2
    assert "Unknown space 'svmx'; did you mean 'svm'?" in capsys.readouterr().err


def test_a_mistyped_suffix_is_named_as_a_file_not_an_unknown_library_space(capsys):
    assert main(["space", "validate", "space.ymal"]) == 2
    assert "space.ymal: unknown file type '.ymal'" in capsys.readouterr().err
