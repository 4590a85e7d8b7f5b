"""Two ``ensembo bench`` invocations sharing one ``--out``: each counts as executed only
the runs it ran itself, not those the other finished or is running."""

from __future__ import annotations

import contextlib
import json
import os
import platform
import threading
import types
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import attrs

from ensembo.bench import runner, standalone_runs
from ensembo.bench.benchmark import run_benchmark
from ensembo.bench.record_stamps import stamp
from ensembo.bench.run_claims import claim, claim_path
from ensembo.cli import main

BRANIN_TWO_SEEDS = ["bench", "synthetic", "--problems", "branin", "--optimizers", "random",
                    "--seeds", "2", "--budget", "3", "--no-progress"]


@contextlib.contextmanager
def _running_here(spec: runner.RunSpec):
    """Inside the block, another invocation's run: its claim is held by, and its
    ``running`` marker names, a live process (this one)."""
    marker = {**attrs.asdict(spec), "status": "running", "pid": os.getpid(),
              "host": platform.node()}
    Path(spec.path).parent.mkdir(parents=True, exist_ok=True)
    Path(spec.path).write_text(json.dumps(marker))
    with claim(Path(spec.path)):
        yield


def test_a_run_another_invocation_is_running_is_not_counted_as_executed(tmp_path, capsys):
    """It was: 'N runs executed' counted every run missing when the command started."""
    seed_0, _ = runner.plan("synthetic", ["random"], [0, 1], 3, tmp_path, problems=["branin"])
    with _running_here(seed_0):
        assert main([*BRANIN_TWO_SEEDS, "--out", str(tmp_path)]) == 0
    said = capsys.readouterr().out  # was "2 runs executed"
    assert "1 runs executed, 0 already finished, 1 finished or running in another" in said
    assert json.loads(Path(seed_0.path).read_text())["status"] == "running"  # left alone


def test_the_result_says_apart_which_runs_another_invocation_took(tmp_path):
    seed_0, _ = runner.plan("synthetic", ["random"], [0, 1], 3, tmp_path, problems=["branin"])
    with _running_here(seed_0):
        result = run_benchmark("synthetic", optimizers=["random"], problems=["branin"],
                               seeds=2, budget=3, out=tmp_path, progress=False)
    assert (result.executed, result.skipped_as_finished, result.left_to_others) == (1, 1, 1)
    assert result.counts() == (
        "1 runs executed, 0 already finished, 1 finished or running in another invocation "
        "sharing --out"
    )


def test_a_run_finished_elsewhere_after_the_pool_started_is_not_returned_as_executed(tmp_path):
    """The worker reads the record back instead of running: it is not this pool's run."""
    [spec] = runner.plan("synthetic", ["random"], [0], 3, tmp_path, problems=["branin"])
    finished_elsewhere = runner.execute(spec)
    records, attempted, seen = [], set(), []
    runner._one_pool([spec], 1, records, attempted, seen.append)
    assert records == []  # was [the other invocation's record]
    assert seen == [finished_elsewhere] and attempted == {spec.path}


def _paused_after_reading(monkeypatch, module, parties: int = 2) -> None:
    """Hold the first ``parties`` record reads until all of them have read: invocations
    that check a run and then claim it would all see it free."""
    read, gate, calls = module.read_record, threading.Barrier(parties), []

    def read_then_wait(path):
        record = read(path)
        calls.append(path)
        if len(calls) <= parties:
            with contextlib.suppress(threading.BrokenBarrierError):
                gate.wait(timeout=5)
        return record

    monkeypatch.setattr(module, "read_record", read_then_wait)


def test_two_invocations_starting_one_run_together_run_it_once(tmp_path, monkeypatch):
    """Both read 'no record' and then both wrote their running marker and ran it."""
    [spec] = runner.plan("synthetic", ["random"], [0], 3, tmp_path, problems=["branin"])
    _paused_after_reading(monkeypatch, runner)
    with ThreadPoolExecutor(2) as pool:
        outcomes = list(pool.map(runner.attempt, [spec, spec]))
    assert sorted(o.ran_here for o in outcomes) == [False, True]  # was [True, True]
    assert json.loads(Path(spec.path).read_text())["status"] == "complete"
    assert not claim_path(Path(spec.path)).exists()


class _ThreadPool(ThreadPoolExecutor):
    """A process pool's stand-in: the runs of two 'invocations' share this process."""

    def __init__(self, max_workers, mp_context=None, max_tasks_per_child=None):
        super().__init__(max_workers)


def test_two_standalone_invocations_run_a_shared_run_once_and_count_it_once(
    tmp_path, monkeypatch
):
    """The standalone benchmarks claimed nothing: both ran it and both said '1 runs
    executed'. Each run waits until one invocation has returned, so on the old code
    both were running it at once."""
    monkeypatch.setattr(standalone_runs, "ProcessPoolExecutor", _ThreadPool)
    run = types.SimpleNamespace(path=str(tmp_path / "estimators" / "iris" / "seed-0.json"))
    one_returned, executed = threading.Event(), []

    def execute(each):
        executed.append(each.path)
        one_returned.wait(timeout=5)
        record = {"status": "complete"}
        standalone_runs.write_record(each.path, record)
        return record

    def invocation(_):
        try:
            return standalone_runs.run_and_collect([run], execute, workers=1, label="t",
                                                   progress=False).counts("run")
        finally:
            one_returned.set()

    with ThreadPoolExecutor(2) as pool:
        said = sorted(pool.map(invocation, range(2)))
    assert executed == [run.path]  # was twice
    assert said == [
        ("0 runs executed, 0 already finished, 1 finished or running in another invocation "
         "sharing --out"),
        "1 runs executed, 0 already finished",
    ]


def test_a_standalone_run_whose_worker_died_is_not_counted_as_executed(tmp_path, monkeypatch):
    """It was: 'executed' counted every run pending when the command started."""
    monkeypatch.setattr(standalone_runs, "ProcessPoolExecutor", _ThreadPool)
    run = types.SimpleNamespace(path=str(tmp_path / "seed-0.json"))

    def worker_dies(_):
        raise RuntimeError("A process in the process pool was terminated abruptly")

    collected = standalone_runs.run_and_collect([run], worker_dies, workers=1, label="t",
                                                progress=False)
    assert collected.counts("run") == (  # was "1 runs executed, 0 already finished"
        "0 runs executed, 0 already finished, 1 not finished (their worker process died; "
        "rerun to run them)"
    )


def test_a_run_that_failed_in_an_invocation_started_together_is_not_run_again(
    tmp_path, monkeypatch
):
    """A and B plan run R together; A runs it and it fails; B, claiming R after A let
    go, found a 'failed' record (not final) and ran R again, counting it as executed."""
    monkeypatch.setattr(runner, "ProcessPoolExecutor", _ThreadPool)
    [spec] = runner.plan("synthetic", ["random"], [0], 3, tmp_path, problems=["branin"])
    made = []

    def failing_optimizer(name):
        made.append(name)
        raise ValueError("boom")

    monkeypatch.setattr(runner, "make_optimizer", failing_optimizer)
    refuse, invocation_a = runner.refuse_replacing_other_budgets, {}

    def a_runs_it_meanwhile(runs):  # B has planned R; A, started with it, runs R now
        if "records" not in invocation_a:
            invocation_a["records"] = None  # A's own run_all comes here too
            invocation_a["records"] = runner.run_all([spec])
        refuse(runs)

    monkeypatch.setattr(runner, "refuse_replacing_other_budgets", a_runs_it_meanwhile)
    seen_by_b = []
    ran_by_b = runner.run_all([spec], on_done=seen_by_b.append)
    assert len(invocation_a["records"]) == 1
    assert made == ["random"]  # was ["random", "random"]: B ran it again
    assert ran_by_b == []  # was [B's own failed record]
    assert [record["status"] for record in seen_by_b] == ["failed"]
    assert "boom" in json.loads(Path(spec.path).read_text())["error"]


def test_a_run_another_invocation_runs_at_another_budget_is_counted_once(tmp_path, capsys):
    """It was counted twice: 'planned 1; 1 finished or running in another invocation
    sharing --out, 1 made with another budget'."""
    [at_5] = runner.plan("synthetic", ["random"], [0], 5, tmp_path, problems=["branin"])
    with _running_here(at_5):
        assert main(["bench", "synthetic", "--problems", "branin", "--optimizers", "random",
                     "--seeds", "1", "--budget", "3", "--no-progress",
                     "--out", str(tmp_path)]) == 0
    said = capsys.readouterr().out
    assert said.startswith("0 runs executed, 0 already finished, 1 finished or running in "
                           "another invocation sharing --out; report:")
    assert "another budget" not in said


def test_a_result_this_invocations_worker_wrote_is_its_own_when_a_sibling_died(
    tmp_path, monkeypatch
):
    """The worker ran the run and wrote its failed record; then a sibling worker died and
    the pool failed every future: the record was taken for another invocation's result
    (summary 'finished or running in another invocation', exit 0) (review)."""
    from concurrent.futures.process import BrokenProcessPool

    from ensembo.bench.record_stamps import stamp

    run = runner.plan("synthetic", ["random"], [0], 5, tmp_path)[0]
    seen = stamp(Path(run.path), "this-invocation")

    def fails(spec):
        raise RuntimeError("boom")

    monkeypatch.setattr(runner, "make_optimizer", fails)
    ran = runner.attempt(run, seen)  # in the worker: marker, then the failed record
    assert ran.ran_here and ran.record["status"] == "failed"

    after = runner._after_worker_death(run, BrokenProcessPool("a sibling died"), seen)
    assert after.ran_here and after.record["status"] == "failed"
    other = stamp(Path(run.path), "another-invocation")  # planned before the record
    assert not runner.attempt(run, attrs.evolve(other, identity=seen.identity)).ran_here


def test_a_marker_whose_claim_is_free_is_reported_interrupted_though_its_pid_lives(tmp_path):
    """The report judged a marker by its pid, which a new process may have taken since
    (here: this test's own): it said the run was running (review)."""
    run = runner.plan("synthetic", ["random"], [0], 5, tmp_path)[0]
    marker = {**attrs.asdict(run), "status": "running", "pid": os.getpid(),
              "host": platform.node()}
    Path(run.path).parent.mkdir(parents=True, exist_ok=True)
    Path(run.path).write_text(json.dumps(marker))
    assert runner.load_records([run])[0]["status"] == "interrupted"
    with _running_here(run):  # its claim held: running indeed
        assert runner.load_records([run])[0]["status"] == "running"


def test_a_standalone_run_that_failed_in_an_invocation_started_together_is_not_run_again(
    tmp_path, monkeypatch
):
    """A and B plan run R together; A runs it and it fails; B, claiming R after A let
    go, found a 'failed' record (not final) and ran R again, counting it as executed, as
    the optimizer suites no longer do. A failed record there when B planned is retried."""
    run = types.SimpleNamespace(path=str(tmp_path / "estimators" / "iris" / "seed-0.json"))
    executed = []

    def failing(each):
        executed.append(each.path)
        record = {"status": "failed", "error": "ValueError: boom"}
        standalone_runs.write_record(each.path, record)
        return record

    def invocation():
        return standalone_runs.run_and_collect([run], failing, workers=1, label="t",
                                               progress=False).counts("run")

    said_by_a = []

    class _AStartsFirst(_ThreadPool):
        """B's pool: B has planned R; before B's worker claims it, A runs it."""

        def submit(self, fn, *args):
            if not said_by_a:
                said_by_a.append(None)  # A's own pool comes here too
                said_by_a[0] = invocation()
            return super().submit(fn, *args)

    monkeypatch.setattr(standalone_runs, "ProcessPoolExecutor", _AStartsFirst)
    said_by_b = invocation()
    assert executed == [run.path]  # was twice: B ran it again
    assert said_by_a == ["1 runs executed, 0 already finished"]
    assert said_by_b == ("0 runs executed, 0 already finished, 1 finished or running in "
                         "another invocation sharing --out")  # was "1 runs executed, ..."
    assert invocation() == "1 runs executed, 0 already finished"  # failed when planned: retried
    assert executed == [run.path, run.path]


def test_a_standalone_run_that_failed_elsewhere_after_planning_is_not_run_again(
    tmp_path, monkeypatch
):
    """B decided to run R (no record yet); A's run of R failed and wrote its record
    before B's run_pending took its stamps: B saw that record as older than its decision
    and ran R again, saying '1 runs executed'."""
    monkeypatch.setattr(standalone_runs, "ProcessPoolExecutor", _ThreadPool)
    run = types.SimpleNamespace(path=str(tmp_path / "estimators" / "iris" / "seed-0.json"))
    executed = []

    def failing(each):
        executed.append(each.path)
        record = {"status": "failed", "error": "ValueError: boom"}
        standalone_runs.write_record(each.path, record)
        return record

    run_pending = standalone_runs.run_pending

    def a_ran_it_meanwhile(*args, **kwargs):  # B has decided; A runs R now
        failing(run)
        return run_pending(*args, **kwargs)

    monkeypatch.setattr(standalone_runs, "run_pending", a_ran_it_meanwhile)
    said_by_b = standalone_runs.run_and_collect([run], failing, workers=1, label="t",
                                                progress=False).counts("run")
    assert executed == [run.path]  # was twice: B ran it again
    assert said_by_b == ("0 runs executed, 0 already finished, 1 finished or running in "
                         "another invocation sharing --out")


def test_a_suite_run_that_failed_elsewhere_after_planning_is_not_run_again(
    tmp_path, monkeypatch
):
    """run_benchmark chose its missing runs before run_all took its stamps: a failed
    record another invocation wrote in between was run again, as B's own."""
    monkeypatch.setattr(runner, "ProcessPoolExecutor", _ThreadPool)
    made = []

    def optimizer_never_made(name):
        made.append(name)
        raise ValueError("B ran it")

    monkeypatch.setattr(runner, "make_optimizer", optimizer_never_made)
    [spec] = runner.plan("synthetic", ["random"], [0], 3, tmp_path, problems=["branin"])
    failed_in_a = {**attrs.asdict(spec), "status": "failed", "error": "A's failure",
                   "invocation": "A"}
    run_all = runner.run_all

    def a_ran_it_meanwhile(*args, **kwargs):  # B has chosen R; A's run of R fails now
        runner._write_atomically(Path(spec.path), failed_in_a)
        return run_all(*args, **kwargs)

    monkeypatch.setattr(runner, "run_all", a_ran_it_meanwhile)
    result = run_benchmark("synthetic", optimizers=["random"], problems=["branin"], seeds=1,
                           budget=3, out=tmp_path, progress=False)
    assert made == []  # was ["random"]: B ran it again
    assert result.counts() == ("0 runs executed, 0 already finished, 1 finished or running "
                               "in another invocation sharing --out")
    assert json.loads(Path(spec.path).read_text())["error"] == "A's failure"


def _run_at_budget(each) -> dict:
    record = {"status": "complete", "budget": each.budget}
    standalone_runs.write_record(each.path, record)
    return record


def test_a_standalone_record_of_another_budget_written_after_planning_is_redone(
    tmp_path, monkeypatch
):
    """B (--budget 10) planned R; A (--budget 5) then finished R. B left A's record as
    'finished or running in another invocation': nobody ran R at budget 10, and B's
    report lacked it."""
    path = str(tmp_path / "overfitting" / "banana" / "seed-0.json")
    budgets_run = []

    def execute(each):
        budgets_run.append(each.budget)
        return _run_at_budget(each)

    class _AFinishesFirst(_ThreadPool):
        def submit(self, fn, *args):
            if not budgets_run:  # B has planned and stamped R: A finishes it at budget 5
                execute(types.SimpleNamespace(path=path, budget=5))
            return super().submit(fn, *args)

    monkeypatch.setattr(standalone_runs, "ProcessPoolExecutor", _AFinishesFirst)
    collected = standalone_runs.run_and_collect(
        [types.SimpleNamespace(path=path, budget=10)], execute, workers=1, label="t",
        progress=False)
    assert budgets_run == [5, 10]  # was [5]
    assert collected.counts("run") == "1 runs executed, 0 already finished"
    assert collected.records == [{"status": "complete", "budget": 10}]
    assert not collected.other_sizes  # was {5: 1}


def test_a_standalone_record_of_another_budget_there_when_planned_is_redone(
    tmp_path, monkeypatch
):
    """A complete record of budget 5 is not final for a run at budget 10 (the suite's
    own test of a final record, not the optimizer suites', decides)."""
    monkeypatch.setattr(standalone_runs, "ProcessPoolExecutor", _ThreadPool)
    path = str(tmp_path / "overfitting" / "banana" / "seed-0.json")
    standalone_runs.write_record(path, {"status": "complete", "budget": 5})
    collected = standalone_runs.run_and_collect(
        [types.SimpleNamespace(path=path, budget=10)], _run_at_budget, workers=1, label="t",
        progress=False)
    assert collected.counts("run") == "1 runs executed, 0 already finished"
    assert collected.records == [{"status": "complete", "budget": 10}]


def test_a_suite_record_of_another_budget_written_after_planning_is_redone(
    tmp_path, monkeypatch
):
    """B (--budget 3) planned R; A (--budget 5) then wrote R's failed record. B took it
    for A's result of R ('finished or running in another invocation'): nobody ran R at
    budget 3, and B's report lacked it. The standalone suites redo it (6765289)."""
    monkeypatch.setattr(runner, "ProcessPoolExecutor", _ThreadPool)
    [spec] = runner.plan("synthetic", ["random"], [0], 3, tmp_path, problems=["branin"])
    failed_in_a = {**attrs.asdict(spec), "budget": 5, "status": "failed",
                   "error": "A's failure", "invocation": "A"}
    run_all = runner.run_all

    def a_ran_it_meanwhile(*args, **kwargs):  # B has chosen R; A's run of R fails now
        runner._write_atomically(Path(spec.path), failed_in_a)
        return run_all(*args, **kwargs)

    monkeypatch.setattr(runner, "run_all", a_ran_it_meanwhile)
    result = run_benchmark("synthetic", optimizers=["random"], problems=["branin"], seeds=1,
                           budget=3, out=tmp_path, progress=False)
    assert result.counts() == "1 runs executed, 0 already finished"  # was 1 in another
    record = json.loads(Path(spec.path).read_text())
    assert (record["status"], record["budget"]) == ("complete", 3)


def test_a_record_of_another_budget_after_a_worker_died_leaves_the_run_pending(tmp_path):
    """Its worker died before the run started, and another invocation wrote a failed
    record at another budget since: the run was counted as left to that invocation."""
    [spec] = runner.plan("synthetic", ["random"], [0], 3, tmp_path, problems=["branin"])
    seen = stamp(Path(spec.path), "B")
    runner._write_atomically(Path(spec.path), {**attrs.asdict(spec), "budget": 5,
                                               "status": "failed", "invocation": "A"})
    assert runner._after_worker_death(spec, RuntimeError("died"), seen) is None
