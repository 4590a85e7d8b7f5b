"""A Ctrl-C or SIGTERM says what the stopped command leaves: "finished trials are saved"
was printed by every command, ``ensembo plugins`` and ``ensembo space validate``
included, which run no trials; a report stopped while writing says its folder was not
updated, as its files are moved in together once all are written."""

from __future__ import annotations

import json
import os
import shlex
import signal
import time

import pytest

from ensembo.cli import (
    INTERRUPTED,
    TERMINATED,
    bench_command,
    main,
    plugins_command,
    report_command,
    run_command,
    space_command,
)


def _stop(terminate: bool):
    """A handler stopped as the user or a batch system stops it."""
    def stopped(*args, **kwargs):
        if not terminate:
            raise KeyboardInterrupt
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the SIGTERM handler raises KeyboardInterrupt before this ends
        raise AssertionError("SIGTERM did not stop the command")
    return stopped


@pytest.mark.parametrize(("terminate", "code", "said"), [
    (False, INTERRUPTED, "ensembo: interrupted\n"),
    (True, TERMINATED, "ensembo: terminated (SIGTERM)\n"),
])
@pytest.mark.parametrize(("module", "handler", "argv"), [
    (plugins_command, "run", ["plugins"]),
    (space_command, "run_validate", ["space", "validate", "x.yaml"]),
    (space_command, "run_show", ["space", "show", "x.yaml"]),
    (bench_command, "_check_suite", ["bench", "synthetic"]),  # before its runs
])
def test_a_command_that_runs_no_trials_promises_no_saved_trials(
    monkeypatch, capsys, module, handler, argv, terminate, code, said
):
    monkeypatch.setattr(module, handler, _stop(terminate))
    assert main(argv) == code
    assert capsys.readouterr().err == said


OBJECTIVE = """
def loss(config):
    raise KeyboardInterrupt  # a Ctrl-C while the first trial runs
"""


def _experiment(tmp_path, monkeypatch, **options):
    (tmp_path / "stopped_objective.py").write_text(OBJECTIVE)
    monkeypatch.syspath_prepend(str(tmp_path))
    experiment = tmp_path / "experiment.yaml"
    experiment.write_text(json.dumps({
        "space": {"params": {"x": {"type": "float", "low": 0.0, "high": 1.0}}},
        "objective": "stopped_objective:loss", "surrogate": None, "budget": 3, **options,
    }))
    return experiment


def test_a_run_stopped_names_the_file_its_finished_trials_are_saved_in(
    tmp_path, monkeypatch, capsys
):
    folder = tmp_path / "my runs"  # the command is quoted for a shell
    folder.mkdir()
    experiment = _experiment(folder, monkeypatch, storage="it's.db")
    assert main(["run", str(experiment)]) == INTERRUPTED
    study = folder / "it's.db"
    assert capsys.readouterr().err == (
        f"ensembo: interrupted; finished trials are saved in {study}; continue with: "
        f"ensembo resume {shlex.quote(str(study))}\n")
    assert main(["resume", str(study)]) == INTERRUPTED
    assert capsys.readouterr().err.endswith(f"ensembo resume {shlex.quote(str(study))}\n")


def test_a_run_kept_in_memory_does_not_promise_saved_trials(tmp_path, monkeypatch, capsys):
    """No ``storage:``: the CLI said "finished trials are saved", and nothing was."""
    assert main(["run", str(_experiment(tmp_path, monkeypatch))]) == INTERRUPTED
    assert capsys.readouterr().err == (
        "ensembo: interrupted; the study was kept in memory (no storage), so no trial is saved\n")


def test_a_run_stopped_before_its_study_exists_promises_nothing(monkeypatch, capsys):
    monkeypatch.setattr(run_command, "load_experiment", _stop(terminate=True))
    assert main(["run", "x.yaml"]) == TERMINATED
    assert capsys.readouterr().err == "ensembo: terminated (SIGTERM)\n"


def test_a_bench_terminated_while_running_says_so_and_exits_143(tmp_path, monkeypatch, capsys):
    """It caught the stop itself and said "interrupted" on SIGTERM too."""
    from ensembo.bench import benchmark

    monkeypatch.setattr(benchmark, "run_benchmark", _stop(terminate=True))
    out = tmp_path / "bench"
    assert main(["bench", "synthetic", "--out", str(out)]) == TERMINATED
    assert capsys.readouterr().err.startswith(
        f"ensembo bench: terminated (SIGTERM); finished run records are kept in {out}")


def test_a_report_stopped_while_writing_says_its_folder_was_not_updated(
    tmp_path, monkeypatch, capsys
):
    """Its files are staged and moved in together: it said "may be incomplete (files
    missing or cut short)" while they were written one by one in place."""
    out = tmp_path / "study-report"
    out.mkdir()  # an earlier report's

    def stopped_while_staging(source, folder, args):
        raise KeyboardInterrupt

    monkeypatch.setattr(report_command, "_write", stopped_while_staging)
    (tmp_path / "study.db").touch()
    assert main(["report", str(tmp_path / "study.db"), "--out", str(out)]) == INTERRUPTED
    assert capsys.readouterr().err == (
        f"ensembo: interrupted; the report in {out} was not updated (its files are moved in "
        "only once all are written); run the command again to write it\n"
    )


def test_a_first_report_stopped_while_writing_says_none_was_written(
    tmp_path, monkeypatch, capsys
):
    """The staging folder is made inside --out: "was not updated" named a folder that had
    held no report."""
    out = tmp_path / "study-report"

    def stopped_while_staging(source, folder, args):
        folder.mkdir()
        raise KeyboardInterrupt

    monkeypatch.setattr(report_command, "_write", stopped_while_staging)
    (tmp_path / "study.db").touch()
    assert main(["report", str(tmp_path / "study.db"), "--out", str(out)]) == INTERRUPTED
    assert capsys.readouterr().err == "ensembo: interrupted; no report was written\n"


def test_a_report_stopped_once_written_says_it_is_complete(tmp_path, monkeypatch, capsys):
    """Stopped while its paths were printed, it said the report was not updated."""
    out = tmp_path / "study-report"

    def written_then_stopped(source, folder, args):
        folder.mkdir()
        yield folder / "report.md"
        raise KeyboardInterrupt

    monkeypatch.setattr(report_command, "_write", written_then_stopped)
    (tmp_path / "study.db").touch()
    assert main(["report", str(tmp_path / "study.db"), "--out", str(out)]) == INTERRUPTED
    assert capsys.readouterr().err == f"ensembo: interrupted; the report in {out} is complete\n"


def test_a_report_stopped_before_its_folder_exists_says_none_was_written(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setattr(report_command, "_write", _stop(terminate=False))
    (tmp_path / "study.db").touch()
    assert main(["report", str(tmp_path / "study.db")]) == INTERRUPTED
    assert capsys.readouterr().err == "ensembo: interrupted; no report was written\n"
