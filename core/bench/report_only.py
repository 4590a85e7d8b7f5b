"""``--report-only`` that finds no record of the planned budget but some of another (the
runs' ``--budget`` was not passed): an empty report would replace the full one, so
``report.md`` is left as it was, the command says so and exits 2. One rule and one
wording for the optimizer suites and the standalone benchmarks."""

from __future__ import annotations

from pathlib import Path


def keeps_report(*, report_only: bool, of_this_budget: bool, of_other_budgets: bool) -> bool:
    """Whether ``report.md`` must be left as it was rather than written anew."""
    return report_only and of_other_budgets and not of_this_budget


def report_kept(report_path: Path) -> str:
    """The stderr line saying the report was not written, and why; where there was none
    (deleted, or the records copied alone), that none is written, not that it was left."""
    kept = (f"{report_path} is left as it was" if Path(report_path).exists()
            else f"no {report_path} is written")
    return f"ensembo bench: no record of the planned runs was made with this budget; {kept}"
