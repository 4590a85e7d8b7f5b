"""``ensembo report --out``: a folder that cannot be made is the user's mistake (exit 2,
naming --out and the path), where it failed as a bug (FileExistsError, exit 1)."""

from __future__ import annotations

from ensembo.cli import main


def test_an_out_that_is_a_file_is_refused_by_name(stored_study, tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("kept\n")
    assert main(["report", "--no-plots", str(stored_study[0]), "--out", str(afile)]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"ensembo: error: --out {afile}: is a file; give a folder")
    assert "bug" not in error and afile.read_text() == "kept\n"


def test_an_out_under_a_file_is_refused_by_name(stored_study, tmp_path, capsys):
    (tmp_path / "afile").write_text("")
    out = tmp_path / "afile" / "sub" / "report"
    assert main(["report", "--no-plots", str(stored_study[0]), "--out", str(out)]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"ensembo: error: --out {out}: cannot write the report into {out}")
    assert "bug" not in error


def test_a_file_in_the_way_of_the_default_folder_is_named(tmp_path, capsys):
    (tmp_path / "results.csv").write_text("problem,method,loss\np,a,1\np,b,2\n")
    (tmp_path / "results-report").write_text("")
    assert main(["report", "--no-plots", str(tmp_path / "results.csv")]) == 2
    error = capsys.readouterr().err
    assert error.startswith(
        f"ensembo: error: {tmp_path / 'results-report'} (the default report folder): is a file"
    )
