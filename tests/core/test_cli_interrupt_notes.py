"""A Ctrl-C or SIGTERM says what the stopped command leaves: "finished trials are saved"
was printed by every command, ``ensembo plugins`` and ``ensembo space validate``
included, which run no trials; a report stopped while writing says its folder may be
incomplete, as its files are written one by one."""

from __future__ import annotations

import os
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
    def stopped(*args):
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


@pytest.mark.parametrize("argv", [["run", "x.yaml"], ["resume", "x.db"]])
def test_a_run_stopped_says_its_finished_trials_are_saved(monkeypatch, capsys, argv):
    monkeypatch.setattr(run_command, argv[0], _stop(terminate=True))
    assert main(argv) == TERMINATED
    assert capsys.readouterr().err == "ensembo: terminated (SIGTERM); finished trials are saved\n"


def test_a_report_stopped_while_writing_says_its_folder_may_be_incomplete(
    tmp_path, monkeypatch, capsys
):
    out = tmp_path / "study-report"

    def half_written(source, folder, args):
        folder.mkdir()
        (folder / "trials.md").write_text("| number |")
        raise KeyboardInterrupt

    monkeypatch.setattr(report_command, "_write", half_written)
    (tmp_path / "study.db").touch()
    assert main(["report", str(tmp_path / "study.db"), "--out", str(out)]) == INTERRUPTED
    assert capsys.readouterr().err == (
        f"ensembo: interrupted; the report in {out} may be incomplete (files missing or cut "
        "short); run the command again to rewrite it\n"
    )


def test_a_report_stopped_before_its_folder_exists_says_only_that(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(report_command, "_write", _stop(terminate=False))
    (tmp_path / "study.db").touch()
    assert main(["report", str(tmp_path / "study.db")]) == INTERRUPTED
    assert capsys.readouterr().err == "ensembo: interrupted\n"
