"""The per-optimizer overheads and the paired comparisons of each ensembo entry with
each anchor in the bench report: only runs both optimizers completed on the same
(problem, seed) are paired, so a failed seed drops out of that pair alone."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ensembo.bench.metrics import final_score
from ensembo.bench.optimizers import is_anchor
from ensembo.stats import sign_test


def _by(records, *keys):
    return {tuple(r[k] for k in keys): r for r in records}


WALL_OVERHEAD = "overhead_per_evaluation"
CPU_OVERHEAD = "cpu_overhead_per_evaluation"


def median_cpu_overheads(
    done: Sequence[dict[str, Any]], optimizers: Sequence[str]
) -> dict[str, float]:
    """Only when every record with a wall-clock overhead has a CPU one: records made
    before CPU time was recorded would leave some optimizers' medians on fewer runs."""
    timed = [r for r in done if r.get(WALL_OVERHEAD) is not None]
    if not timed or any(r.get(CPU_OVERHEAD) is None for r in timed):
        return {}
    return median_overheads(done, optimizers, CPU_OVERHEAD)


def median_overheads(
    done: Sequence[dict[str, Any]], optimizers: Sequence[str], field: str = WALL_OVERHEAD
) -> dict[str, float]:
    overhead = {}
    for o in optimizers:
        values = [r[field] for r in done if r["optimizer"] == o and r.get(field) is not None]
        if values:
            overhead[o] = float(np.median(values))
    return overhead


def against_anchors(
    done: Sequence[dict[str, Any]],
    optimizers: Sequence[str],
    problems: Sequence[str],
    seeds: Sequence[int],
) -> tuple[dict[tuple[str, str], float], dict[tuple[str, str], tuple[int, int, int, float]]]:
    """Per (ensembo entry, anchor): the median overhead ratio and the sign test on scores,
    both over the (problem, seed) runs the two share."""
    index = _by(done, "problem", "optimizer", "seed")
    ratio, head_to_head = {}, {}
    for mine in (o for o in optimizers if not is_anchor(o)):
        for anchor in (o for o in optimizers if is_anchor(o)):
            pairs = [
                (index[(p, mine, s)], index[(p, anchor, s)])
                for p in problems
                for s in seeds
                if (p, mine, s) in index and (p, anchor, s) in index
            ]
            if not pairs:
                continue
            ratio[(mine, anchor)] = float(
                np.median(
                    [
                        a["overhead_per_evaluation"] / b["overhead_per_evaluation"]
                        for a, b in pairs
                        if b.get("overhead_per_evaluation")
                    ]
                )
            )
            test = sign_test([final_score(a) for a, _ in pairs], [final_score(b) for _, b in pairs])
            head_to_head[(mine, anchor)] = (test.wins, test.losses, test.ties, test.p_value)
    return ratio, head_to_head
