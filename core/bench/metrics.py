"""Per-run metrics: best-so-far curve, final regret or validation/test error, overhead."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ensembo.bench.recorder import Evaluated


def summarize(
    evaluations: Sequence[Evaluated],
    optimum: float | None,
    wall_seconds: float | None,
    cpu_seconds: float | None = None,
) -> dict[str, Any]:
    """Everything the report needs from one run (JSON-ready).

    The overhead per evaluation is the optimizer's own time: wall time minus the time
    spent inside the objective, divided by the number of evaluations. The CPU overhead is
    the same on the process's CPU time, which other processes' load does not inflate.
    """
    losses = np.array([e.loss for e in evaluations], dtype=float)
    objective_seconds = float(sum(e.objective_seconds for e in evaluations))
    objective_cpu_seconds = float(sum(e.objective_cpu_seconds for e in evaluations))
    summary: dict[str, Any] = {
        "n_evaluations": len(evaluations),
        "losses": losses.tolist(),
        "test_losses": [e.test_loss for e in evaluations],
        "configs": [e.config for e in evaluations],
        "finished_at": [e.finished_at for e in evaluations],
        "objective_seconds": objective_seconds,
        "objective_cpu_seconds": objective_cpu_seconds,
    }
    if not len(evaluations):
        return summary
    best_so_far = np.minimum.accumulate(losses)
    incumbent = int(np.argmin(losses))
    summary.update(
        best_so_far=best_so_far.tolist(),
        final_loss=float(best_so_far[-1]),
        incumbent_index=incumbent,
        incumbent_test_loss=evaluations[incumbent].test_loss,
    )
    if optimum is not None:
        summary["final_regret"] = float(best_so_far[-1] - optimum)
    if wall_seconds is not None:
        summary["overhead_per_evaluation"] = (wall_seconds - objective_seconds) / len(evaluations)
    if cpu_seconds is not None:
        summary["cpu_overhead_per_evaluation"] = (cpu_seconds - objective_cpu_seconds) / len(
            evaluations
        )
    return summary


def final_score(record: dict[str, Any]) -> float:
    """What the report ranks by: simple regret if f* is known, else validation loss."""
    if record.get("final_regret") is not None:
        return float(record["final_regret"])
    return float(record["final_loss"])
