"""The parallel benchmark's report: speed-up and regret comparison from run records."""

from __future__ import annotations

import json
import types
from pathlib import Path

import pytest

from ensembo.bench import parallel
from ensembo.bench.parallel import report
from ensembo.bench.run_claims import claim, claim_path
from ensembo.bench.standalone_runs import write_record


def _record(mode, seed, regret, seconds):
    return {
        "problem": "branin", "mode": mode, "seed": seed, "trials": 50,
        "wall_seconds": seconds, "trials_per_second": 50 / seconds, "regret": regret,
        "duplicates": 0,
    }


def test_report_compares_dask_regrets_with_the_serial_range():
    serial = [_record("serial", s, r, 25.0) for s, r in enumerate([1e-6, 2e-6, 3e-6])]
    dask = [_record("dask", s, r, 5.0) for s, r in enumerate([5e-7, 2.5e-6, 9e-6])]
    lines = report(serial + dask, "cmd").splitlines()
    row = next(line for line in lines if line.startswith("| branin"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[4] == "5.00×"  # 10 against 2 trials/s
    # the median is inside; one seed inside the range, two at or below its maximum
    assert cells[7:10] == ["yes", "1/3", "2/3"]


def _without_cluster(monkeypatch) -> list[tuple[str, str, int]]:
    """``main`` runs with a stand-in client and runs; the list says which were run."""
    ran = []

    def run_one(name, mode, seed, args, client):
        ran.append((name, mode, seed))
        return _record(mode, seed, 1e-6, 25.0 if mode == "serial" else 5.0)

    client = types.SimpleNamespace(wait_for_workers=lambda count: None, close=lambda: None,
                                   cluster=types.SimpleNamespace(close=lambda: None))
    monkeypatch.setattr(parallel, "start_local_cluster", lambda workers: client)
    monkeypatch.setattr(parallel, "run_one", run_one)
    return ran


CUT_SHORT = '{"problem": "branin", "mode": "serial", "seed": 0, "tri'
BRANIN_ONE_SEED = ["--problems", "branin", "--seeds", "1", "--workers", "1"]


def test_a_record_cut_short_is_run_again_saying_so(tmp_path, monkeypatch, caplog):
    """It was skipped for ever (the file exists), and the report then failed on it with a
    JSONDecodeError."""
    ran = _without_cluster(monkeypatch)
    cut_short = tmp_path / "branin" / "serial" / "seed-0.json"
    cut_short.parent.mkdir(parents=True)
    cut_short.write_text(CUT_SHORT)
    assert parallel.main([*BRANIN_ONE_SEED, "--out", str(tmp_path)]) == 0
    assert ran == [("branin", "serial", 0), ("branin", "dask", 0)]  # was only dask
    assert json.loads(cut_short.read_text())["mode"] == "serial"
    assert f"{cut_short} cannot be read (cut short?): running it again" in caplog.text
    assert "| branin | 1/1 |" in (tmp_path / "report.md").read_text()


def test_the_report_leaves_out_a_record_cut_short_naming_it(tmp_path, caplog):
    cut_short = tmp_path / "branin" / "serial" / "seed-0.json"
    cut_short.parent.mkdir(parents=True)
    cut_short.write_text(CUT_SHORT)
    assert parallel.main(["--report-only", "--out", str(tmp_path)]) == 0  # was JSONDecodeError
    assert f"{cut_short} cannot be read (cut short?): left out of the report" in caplog.text


def test_a_record_interrupted_while_written_leaves_no_file(tmp_path, monkeypatch):
    """It was written in place: a Ctrl-C left half of it, skipped by every rerun."""
    _without_cluster(monkeypatch)
    write_text = Path.write_text

    def half_then_ctrl_c(self, data, *args, **kwargs):
        if not self.name.startswith("seed-0."):
            return write_text(self, data, *args, **kwargs)
        write_text(self, data[: len(data) // 2], *args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(Path, "write_text", half_then_ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        parallel.main([*BRANIN_ONE_SEED, "--out", str(tmp_path)])
    assert not (tmp_path / "branin" / "serial" / "seed-0.json").exists()  # was half of it


def test_a_run_another_invocation_holds_is_left_to_it(tmp_path, monkeypatch):
    """Nothing was claimed: two invocations sharing --out both ran the same run."""
    ran = _without_cluster(monkeypatch)
    held = tmp_path / "branin" / "serial" / "seed-0.json"
    with claim(held):  # another invocation is running it
        assert parallel.main([*BRANIN_ONE_SEED, "--out", str(tmp_path)]) == 0
    assert ran == [("branin", "dask", 0)]  # was serial too
    assert not held.exists()
    assert not claim_path(tmp_path / "branin" / "dask" / "seed-0.json").exists()


def test_a_run_finished_elsewhere_while_its_claim_was_awaited_is_not_run_again(
    tmp_path, monkeypatch
):
    """The record is read again under the claim: another invocation may have finished
    the run between the first look and the claim."""
    ran = _without_cluster(monkeypatch)
    finished = tmp_path / "branin" / "serial" / "seed-0.json"
    take = parallel.claim

    def finished_meanwhile(path):
        if path == finished:
            write_record(finished, _record("serial", 0, 1e-6, 25.0))
        return take(path)

    monkeypatch.setattr(parallel, "claim", finished_meanwhile)
    assert parallel.main([*BRANIN_ONE_SEED, "--out", str(tmp_path)]) == 0
    assert ran == [("branin", "dask", 0)]


def test_two_processes_writing_one_record_at_once_each_write_it_whole(tmp_path, monkeypatch):
    """The temporary name was fixed (seed-0.tmp): the second process wrote into the
    first one's temporary file and moved it away, and the first failed with a
    FileNotFoundError."""
    path = tmp_path / "seed-0.json"
    write_text = Path.write_text

    def then_another_process_writes(self, data, *args, **kwargs):
        written = write_text(self, data, *args, **kwargs)
        if "first" in data:
            write_record(path, {"by": "second"})
        return written

    monkeypatch.setattr(Path, "write_text", then_another_process_writes)
    write_record(path, {"by": "first"})
    assert json.loads(path.read_text()) == {"by": "first"}
    assert [p.name for p in tmp_path.iterdir()] == ["seed-0.json"]


def test_a_record_interrupted_while_written_leaves_no_temporary_file(tmp_path, monkeypatch):
    """Half of it was left in seed-0.tmp."""
    write_text = Path.write_text

    def half_then_ctrl_c(self, data, *args, **kwargs):
        write_text(self, data[: len(data) // 2], *args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(Path, "write_text", half_then_ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        write_record(tmp_path / "seed-0.json", {"by": "first"})
    assert list(tmp_path.iterdir()) == []
