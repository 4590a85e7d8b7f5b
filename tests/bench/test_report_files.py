"""The files a bench writes into --out (a suite's report.md, its convergence plots) are
replaced whole: a Ctrl-C while one is written leaves the earlier file as it was."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from ensembo.bench.report_file import write_report
from ensembo.errors import ExperimentError
from ensembo.report import staged_folder
from ensembo.report.staged_folder import STAGING_PREFIX

OLD = "# the earlier report\n"


def _synthetic(out: Path) -> Path:
    from ensembo.bench.benchmark import run_benchmark

    run_benchmark("synthetic", optimizers=["random"], problems=["branin"], seeds=1,
                  budget=3, out=out, progress=False, execute=False)
    return out / "synthetic" / "report.md"


def _estimators(out: Path) -> Path:
    from ensembo.bench.estimators import run_estimators

    return run_estimators(datasets=["iris"], seeds=1, n_trials=5, out=out, progress=False,
                          run=False).report


def _overfitting(out: Path) -> Path:
    from ensembo.bench.overfitting import run_overfitting

    return run_overfitting(datasets=["banana"], seeds=1, budget=5, out=out, progress=False,
                           run=False).report


def _ensembles(out: Path) -> Path:
    from ensembo.bench.ensembles import run_ensembles

    return run_ensembles(experiments=["esmbo-large"], datasets=["banana"],
                         spaces={"esmbo-large": {"svm"}}, seeds=1, out=out, progress=False,
                         run=False).report


def _parallel(out: Path) -> Path:
    from ensembo.bench.parallel import main

    assert main(["--report-only", "--out", str(out)]) == 0
    return out / "report.md"


SUITES = {"synthetic": (_synthetic, "synthetic/report.md"),
          "estimators": (_estimators, "estimators/report.md"),
          "overfitting": (_overfitting, "overfitting/report.md"),
          "ensembles": (_ensembles, "ensembles/report.md"),
          "parallel": (_parallel, "report.md")}


def _interrupted_halfway(monkeypatch, name: str) -> None:
    """Writing a file called ``name`` stops halfway with a Ctrl-C."""
    write_text = Path.write_text

    def half_then_ctrl_c(self, data, *args, **kwargs):
        if self.name != name:
            return write_text(self, data, *args, **kwargs)
        write_text(self, data[: len(data) // 2], *args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(Path, "write_text", half_then_ctrl_c)


@pytest.mark.parametrize("suite", list(SUITES))
def test_a_report_interrupted_while_written_leaves_the_earlier_one(suite, tmp_path, capsys,
                                                                   monkeypatch):
    """It was written in place: the Ctrl-C left report.md cut short."""
    write, where = SUITES[suite]
    report = tmp_path / where
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text(OLD)
    with monkeypatch.context() as patched:
        _interrupted_halfway(patched, "report.md")
        with pytest.raises(KeyboardInterrupt):
            write(tmp_path)
    assert report.read_text() == OLD  # was the first half of the new report
    assert not list(tmp_path.rglob(f"{STAGING_PREFIX}*"))
    assert write(tmp_path) == report
    assert report.read_text() != OLD and report.read_text().strip()


def test_plots_interrupted_while_written_leave_the_earlier_ones(tmp_path, monkeypatch):
    """A figure was saved in place: the Ctrl-C left the PNG cut short."""
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    from ensembo.bench.plots import convergence_plots

    record = {"problem": "branin", "optimizer": "random", "status": "complete",
              "best_so_far": [3.0, 2.0, 1.0], "optimum": 0.0}
    figure = tmp_path / "plots" / "branin.png"
    figure.parent.mkdir()
    figure.write_bytes(b"the earlier figure")
    savefig = Figure.savefig

    def half_then_ctrl_c(self, where, *args, **kwargs):
        savefig(self, where, *args, **kwargs)
        Path(where).write_bytes(Path(where).read_bytes()[:100])
        raise KeyboardInterrupt

    with monkeypatch.context() as patched:
        patched.setattr(Figure, "savefig", half_then_ctrl_c)
        with pytest.raises(KeyboardInterrupt):
            convergence_plots([record], ["random"], ["branin"], tmp_path / "plots")
    assert figure.read_bytes() == b"the earlier figure"  # was 100 bytes of a PNG
    assert convergence_plots([record], ["random"], ["branin"], tmp_path / "plots") == {
        "branin": "plots/branin.png"}
    assert figure.read_bytes().startswith(b"\x89PNG")
    assert not list(tmp_path.rglob(f"{STAGING_PREFIX}*"))


def _folder_takes_no_new_files(monkeypatch, code: int = errno.EACCES) -> None:
    """The staging folder cannot be made (a shared results folder, a read-only mount)."""
    def refused(*args, dir=None, **kwargs):
        raise OSError(code, os.strerror(code), str(dir))

    monkeypatch.setattr(staged_folder.tempfile, "mkdtemp", refused)


def test_a_writable_report_in_a_folder_taking_no_new_files_is_written_in_place(
    tmp_path, monkeypatch, caplog
):
    """It failed with a PermissionError naming a staging folder that never existed; the
    report was rewritten in place before staging."""
    report = tmp_path / "report.md"
    report.write_text(OLD)
    _folder_takes_no_new_files(monkeypatch)
    assert write_report(report, "# new\n") == report
    assert report.read_text() == "# new\n"
    assert f"{tmp_path} takes no new files" in caplog.text


@pytest.mark.parametrize("code", [errno.EACCES, errno.EROFS])
def test_a_report_that_cannot_be_written_at_all_is_named_with_its_folder(
    tmp_path, monkeypatch, code
):
    _folder_takes_no_new_files(monkeypatch, code)
    with pytest.raises(ExperimentError, match=(
            rf"{tmp_path / 'report.md'}: cannot write it: its folder {tmp_path} takes no new "
            rf"files \({os.strerror(code)}\)")):
        write_report(tmp_path / "report.md", "# new\n")
    assert not (tmp_path / "report.md").exists()


def test_other_failures_to_stage_are_not_hidden(tmp_path, monkeypatch):
    _folder_takes_no_new_files(monkeypatch, errno.ENOSPC)
    (tmp_path / "report.md").write_text(OLD)
    with pytest.raises(OSError, match="No space left"):
        write_report(tmp_path / "report.md", "# new\n")
    assert (tmp_path / "report.md").read_text() == OLD


def test_writable_plots_in_a_folder_taking_no_new_files_are_written_in_place(
    tmp_path, monkeypatch, caplog
):
    """They failed with the staging PermissionError, as report.md did before dcbbe10."""
    pytest.importorskip("matplotlib")
    from ensembo.bench.plots import convergence_plots

    records = [{"problem": problem, "optimizer": "random", "status": "complete",
                "best_so_far": [3.0, 2.0, 1.0], "optimum": 0.0}
               for problem in ("branin", "hartmann3")]
    plots = tmp_path / "plots"
    plots.mkdir()
    for name in ("branin.png", "hartmann3.png"):
        (plots / name).write_bytes(b"the earlier figure")
    _folder_takes_no_new_files(monkeypatch)
    assert convergence_plots(records, ["random"], ["branin", "hartmann3"], plots) == {
        "branin": "plots/branin.png", "hartmann3": "plots/hartmann3.png"}
    for name in ("branin.png", "hartmann3.png"):
        assert (plots / name).read_bytes().startswith(b"\x89PNG")
        assert f"{plots} takes no new files (Permission denied): {name} is written" \
            in caplog.text


def test_plots_are_not_written_in_place_unless_every_one_can_be(tmp_path, monkeypatch):
    """A figure new to a folder taking no new files is named; the others stay as they were."""
    pytest.importorskip("matplotlib")
    from ensembo.bench.plots import convergence_plots

    records = [{"problem": problem, "optimizer": "random", "status": "complete",
                "best_so_far": [3.0, 2.0, 1.0], "optimum": 0.0}
               for problem in ("branin", "hartmann3")]
    plots = tmp_path / "plots"
    plots.mkdir()
    (plots / "branin.png").write_bytes(b"the earlier figure")
    _folder_takes_no_new_files(monkeypatch)
    with pytest.raises(ExperimentError, match=(
            rf"{plots / 'hartmann3.png'}: cannot write it: its folder {plots} takes no new "
            "files")):
        convergence_plots(records, ["random"], ["branin", "hartmann3"], plots)
    assert (plots / "branin.png").read_bytes() == b"the earlier figure"


def test_a_suite_folder_taking_no_new_files_rewrites_its_report(tmp_path, monkeypatch):
    """run_benchmark draws its plots before the report: their staging failed the suite
    with a PermissionError before the report could be written in place."""
    report = tmp_path / "synthetic" / "report.md"
    (tmp_path / "synthetic" / "plots").mkdir(parents=True)
    report.write_text(OLD)
    _folder_takes_no_new_files(monkeypatch)
    assert _synthetic(tmp_path) == report
    assert report.read_text() != OLD and report.read_text().startswith("## `synthetic` suite")
