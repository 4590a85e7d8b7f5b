"""A Ctrl-C while a report's files are moved in waits for the last one: it left the new
trials.csv beside the earlier report.md (review of the staged report)."""

from __future__ import annotations

import os
import signal

import pytest

from ensembo.report import staged_folder


def test_a_ctrl_c_while_moving_in_is_raised_once_every_file_is_in(tmp_path, monkeypatch):
    out = tmp_path / "report"
    move_in = staged_folder._move_in

    def interrupted_move(written, target):
        if target.name == "a.csv":
            os.kill(os.getpid(), signal.SIGINT)  # the user's Ctrl-C, mid-way
        move_in(written, target)

    monkeypatch.setattr(staged_folder, "_move_in", interrupted_move)
    with pytest.raises(KeyboardInterrupt), staged_folder.staged(out) as stage:
        for name in ("a.csv", "b.csv", "report.md"):
            (stage / name).write_text("new")
    assert sorted(path.name for path in out.iterdir()) == ["a.csv", "b.csv", "report.md"]
