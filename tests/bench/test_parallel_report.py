"""The parallel benchmark's report: speed-up and regret comparison from run records."""

from __future__ import annotations

from ensembo.bench.parallel import report


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
