"""How a run's trials ended, as its summary reports them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ensembo.trial_state import TrialState

if TYPE_CHECKING:
    from ensembo.trials import History


def outcome_counts(history: History) -> dict[str, int]:
    """How many trials a run has and how they ended, as a run's summary reports them;
    ``pending``: queued (``enqueue:`` beyond the budget) and never run, not failures."""
    return {
        "trials": len(history),
        "complete": len(history.completed()),
        "failed": len(history.in_state(TrialState.FAILED)),
        "pending": len(history.in_state(TrialState.PENDING)),
    }


def outcome_text(counts: Mapping[str, int]) -> str:
    """``12 (10 complete, 1 failed, 1 pending)``, the pending part only when there are any."""
    outcome = f"{counts['complete']} complete, {counts['failed']} failed"
    if counts.get("pending"):
        outcome += f", {counts['pending']} pending"
    return f"{counts['trials']} ({outcome})"
