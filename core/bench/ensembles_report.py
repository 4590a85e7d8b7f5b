"""Tables for ``ensembo bench ensembles``: ranks, win frequencies, PB and Wilcoxon tests.

Per experiment (and per space for ``esmbo``, as Lacoste et al.'s tables), methods are
compared on test loss over the datasets where every method finished: average rank
(Friedman mid-ranks), Lacoste's expected rank, the win-frequency matrix (ties 0.5),
the Poisson-binomial test Pr(A ≻ B) from per-example test disagreements
(classification) and the two-sided Wilcoxon signed-rank p-value.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ensembo.stats import (
    average_ranks,
    disagreement_counts,
    expected_rank,
    friedman_test,
    pb_test_from_counts,
    wilcoxon_signed_rank,
    win_frequency,
)

PAPER = {
    "esmbo": "Lacoste et al. Table 8.3 (classification): ESMBO's win frequency vs SMBO 0.55 (SVM), "
             "0.67 (RF); expected ranks ESMBO 2.35/2.25, SMBO 2.54/2.89.",
    "eo": "Lévesque Table 4.6 (8 methods, budget 200, 5-fold CV): ranks EO 2.47–2.86, BO-post 3.78, "
          "BO-best 4.81.",
    "segor": "Roschewitz et al. Table 2 (11 methods, budget 100): DT ranks f-m 4.12, d-m 5.50, "
             "s-m-ph 6.19, s-m 10.19; MLP f-m 7.25, d-m 3.88, s-m-ph 5.56, s-m 9.38.",
}


def _groups(records: Sequence[dict[str, Any]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for record in records:
        groups.setdefault((record["experiment"], record["space"]), []).append(record)
    return groups


def _matrix(records: Sequence[dict[str, Any]], methods: Sequence[str]):
    """Complete records (every method scored), their datasets and test-loss matrix."""
    complete = [r for r in records if r.get("status") == "complete"
                and all(m in r.get("methods", {}) for m in methods)]
    complete.sort(key=lambda r: (r["dataset"], r["seed"]))
    matrix = np.array([[r["methods"][m]["test_loss"] for m in methods] for r in complete])
    return complete, matrix


def _pb(complete: Sequence[dict[str, Any]], a: str, b: str) -> float | None:
    if not complete or "test_wrong" not in complete[0]["methods"][a]:
        return None
    counts = []
    for record in complete:
        wrong = [np.frombuffer(record["methods"][m]["test_wrong"].encode(), dtype=np.uint8) == ord("1")
                 for m in (a, b)]
        counts.append(disagreement_counts(*wrong))
    return pb_test_from_counts(counts)


def render_group(experiment: str, space: str, records: Sequence[dict[str, Any]],
                 methods: Sequence[str]) -> list[str]:
    complete, matrix = _matrix(records, methods)
    datasets = len({(r["space"], r["dataset"]) for r in complete})
    runs = "" if datasets == len(complete) else f" ({len(complete)} dataset × seed runs)"
    lines = [f"### `{experiment}` — space `{space}`: {datasets} datasets complete{runs}", ""]
    failed = [r for r in records if r.get("status") != "complete"]
    if len(complete) < 2:
        lines += ["Too few complete datasets for ranks and tests.", ""]
    else:
        ranks, expected = average_ranks(matrix), expected_rank(matrix)
        wins = win_frequency(matrix)
        friedman = friedman_test(matrix) if len(methods) >= 3 else None
        lines += ["| method | average rank | expected rank (Lacoste) | mean test loss | median ensemble size |",
                  "|---|---|---|---|---|"]
        for i in np.argsort(ranks):
            sizes = [r["methods"][methods[i]]["size"] for r in complete]
            lines.append(f"| {methods[i]} | {ranks[i]:.2f} | {expected[i]:.2f} | "
                         f"{matrix[:, i].mean():.4f} | {np.median(sizes):.0f} |")
        if friedman is not None:
            lines += ["", f"Friedman p = {friedman.p_value:.3g}."]
        lines += ["", "Win frequency of row over column (ties 0.5), PB test Pr(row ≻ column) where "
                  "per-example test errors exist, Wilcoxon two-sided p:", "",
                  "| row \\ column | " + " | ".join(methods) + " |", "|---" * (len(methods) + 1) + "|"]
        for i, a in enumerate(methods):
            cells = []
            for j, b in enumerate(methods):
                if i == j:
                    cells.append("–")
                    continue
                pb = _pb(complete, a, b)
                p = wilcoxon_signed_rank(matrix[:, i], matrix[:, j]).p_value
                pb_text = f", PB {pb:.2f}" if pb is not None else ""
                cells.append(f"{wins[i, j]:.2f}{pb_text}, W p={p:.2g}")
            lines.append(f"| {a} | " + " | ".join(cells) + " |")
        lines += ["", "<details><summary>Test loss per dataset</summary>", "",
                  "| dataset | seed | " + " | ".join(methods) + " |", "|---" * (len(methods) + 2) + "|"]
        for record, row in zip(complete, matrix):
            lines.append(f"| {record['dataset']} | {record['seed']} | "
                         + " | ".join(f"{v:.4f}" for v in row) + " |")
        lines += ["", "</details>"]
    for record in failed:
        lines.append(f"- failed: {record['dataset']} seed {record['seed']}: {record.get('error')}")
    return lines + [""]


def render_report(records: Sequence[dict[str, Any]], *, command: str, budget: int, seeds: int) -> str:
    from ensembo.bench.ensembles import EXPERIMENTS

    lines = ["## `ensembles` suite: ensemble strategies vs the seeds' baselines", "",
             f"Command: `{command}`", "",
             f"Budget {budget} trials per search, {seeds} seed(s); test loss of each method's final "
             "ensemble (zero-one for classification, mse of standardized targets for regression).", ""]
    groups = _groups(records)
    for name, experiment in EXPERIMENTS.items():
        spaces = [s for s in experiment.spaces if (name, s) in groups]
        if not spaces:
            continue
        lines += [f"Reference: {PAPER[name]}", ""]
        for space in spaces:
            lines += render_group(name, space, groups[(name, space)], experiment.methods)
        if len(spaces) > 1:
            pooled = [r for s in spaces for r in groups[(name, s)]]
            lines += render_group(name, " + ".join(spaces), pooled, experiment.methods)
    return "\n".join(lines) + "\n"
