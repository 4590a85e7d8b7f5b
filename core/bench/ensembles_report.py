"""Tables for ``ensembo bench ensembles``: ranks, win frequencies, PB and Wilcoxon tests.

Per experiment (and per space for ``esmbo``, as Lacoste et al.'s tables), methods are
compared on test loss over the datasets where every method finished: average rank
(Friedman mid-ranks), Lacoste's expected rank, the win-frequency matrix (ties 0.5),
the Poisson-binomial test Pr(A ≻ B) from per-example test disagreements
(classification) and the two-sided Wilcoxon signed-rank p-value — once per run
(dataset × seed) and once per dataset, as the papers count; with several seeds the
per-dataset PB is read as :mod:`ensembo.bench.ensembles_pb` explains. Beside the ranks: each
method's mean validation loss, how often it alone has the lowest test loss, and with
several seeds the ranks within each seed, so one can see whether an order holds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ensembo import environment
from ensembo.bench.ensembles_experiments import EXPERIMENTS
from ensembo.bench.ensembles_pb import PairReading, pair_reading, reversed_counts
from ensembo.bench.provenance import environment_lines, system_summary
from ensembo.stats import (
    average_ranks,
    disagreement_counts,
    expected_rank,
    friedman_test,
    pb_test_from_counts,
    tie_float_noise,
    wilcoxon_signed_rank,
    win_frequency,
)

PAPER = {
    "esmbo": "Lacoste et al. Table 8.3 (classification): ESMBO's win frequency vs SMBO 0.55 (SVM), "
             "0.67 (RF); expected ranks ESMBO 2.35/2.25, SMBO 2.54/2.89.",
    "eo": "Lévesque Table 4.6 (8 methods, budget 200, 5-fold CV, test error averaged over 10 "
          "repetitions): ranks EO-sig 2.47, EO-sqm 2.75, EO-C 2.86, BO-post 3.78, BO-best 4.81.",
    "eo-ties": "no paper table: an ablation of EO on the two-class sets. Compare with EO of "
               "`eo-large` on the same datasets and seeds (12 members, a tie counted as an "
               "error by the zero-one refill; Lévesque breaks a tie at random, thesis L1044).",
    "segor": "Roschewitz et al. Table 2 (11 methods, budget 100): DT ranks f-m 4.12, d-m 5.50, "
             "s-m-ph 6.19, s-m 10.19; MLP f-m 7.25, d-m 3.88, s-m-ph 5.56, s-m 9.38.",
}


def _groups(records: Sequence[dict[str, Any]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for record in records:
        groups.setdefault((record["experiment"], record["space"]), []).append(record)
    return groups


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _nan_test_losses(record: dict[str, Any]) -> list[str]:
    """The methods of ``record`` with a NaN test loss (final, or of a scored last
    iteration): such a run cannot be ranked, and one refused the whole report."""
    return [name for name, result in record.get("methods", {}).items()
            if _is_nan(result.get("test_loss"))
            or any(_is_nan(scored.get("test_loss")) for scored in result.get("last", ()))]


def _failure(record: dict[str, Any]) -> str | None:
    """Why ``record`` is listed as failed instead of ranked; None for a usable run."""
    if record.get("status") != "complete":
        return str(record.get("error"))
    nan = _nan_test_losses(record)
    return f"test loss is NaN for {', '.join(nan)}" if nan else None


def _matrix(records: Sequence[dict[str, Any]], methods: Sequence[str]):
    """Complete records (every method scored), their datasets and test-loss matrix."""
    complete = [r for r in records if _failure(r) is None
                and all(m in r.get("methods", {}) for m in methods)]
    complete.sort(key=lambda r: (r["dataset"], r["seed"]))
    matrix = np.array([[r["methods"][m]["test_loss"] for m in methods] for r in complete])
    return complete, matrix


def _wrong(result: dict[str, Any]) -> np.ndarray:
    return np.frombuffer(result["test_wrong"].encode(), dtype=np.uint8) == ord("1")


def _counts(record: dict[str, Any], a: str, b: str, averaged: bool) -> np.ndarray:
    """``(k_a, k_b)`` of one run; ``averaged``: mean over the scored last iterations."""
    first, second = record["methods"][a], record["methods"][b]
    if not averaged:
        return np.array(disagreement_counts(_wrong(first), _wrong(second)), dtype=float)
    return np.mean([disagreement_counts(_wrong(x), _wrong(y))
                    for x, y in zip(first["last"], second["last"], strict=True)], axis=0)


def _has_errors(complete: Sequence[dict[str, Any]], method: str) -> bool:
    return bool(complete) and "test_wrong" in complete[0]["methods"][method]


def _sole_winners(matrix: np.ndarray, methods: Sequence[str]) -> str:
    """How often one method alone has the lowest test loss: an average rank can hide a
    method that wins many problems outright and loses the rest. Losses that differ only
    by float noise share the lowest (:func:`ensembo.stats.tie_float_noise`)."""
    tied = tie_float_noise(matrix)
    lowest = tied == tied.min(axis=1, keepdims=True)
    alone = lowest.sum(axis=1) == 1
    counts = lowest[alone].sum(axis=0)
    order = sorted(range(len(methods)), key=lambda i: (-counts[i], i))
    named = ", ".join(f"{methods[i]} {counts[i]}" for i in order if counts[i])
    shared = int((~alone).sum())
    return (f"Lowest test loss alone on {int(alone.sum())} of {len(matrix)}"
            + (f": {named}" if named else "") + f"; {shared} shared the lowest.")


def _per_seed(complete: Sequence[dict[str, Any]], matrix: np.ndarray,
              methods: Sequence[str]) -> list[str]:
    """Average rank within each seed of ``matrix`` (one row per run of ``complete``), to
    show whether the order holds from seed to seed. Columns follow the overall ranks."""
    order = np.argsort(average_ranks(matrix))
    seeds = np.array([r["seed"] for r in complete])
    lines = ["Average rank within each seed (does the order hold from seed to seed?):", "",
             "| seed | datasets | " + " | ".join(methods[i] for i in order) + " | Friedman p |",
             "|---" * (len(methods) + 3) + "|"]
    for seed in sorted(set(seeds.tolist())):
        runs = matrix[seeds == seed]
        if len(runs) < 2:
            continue
        ranks = average_ranks(runs)
        p = f"{friedman_test(runs).p_value:.3g}" if len(methods) >= 3 else "–"
        lines.append(f"| {seed} | {len(runs)} | " + " | ".join(f"{ranks[i]:.2f}" for i in order)
                     + f" | {p} |")
    return lines


def _comparison(matrix: np.ndarray, methods: Sequence[str], complete: Sequence[dict[str, Any]],
                pb: Callable[[str, str], float | None], pb_reading: str = "") -> list[str]:
    """Rank table, Friedman test and the pairwise win / PB / Wilcoxon matrix of ``matrix``
    (problems × methods test losses) from the runs ``complete``; ``pb_reading`` says how
    ``pb`` counts when that is not one test over the rows of ``matrix``."""
    sizes = [np.median([r["methods"][m]["size"] for r in complete]) for m in methods]
    validation = [np.mean([r["methods"][m]["validation_loss"] for r in complete]) for m in methods]
    ranks, expected = average_ranks(matrix), expected_rank(matrix)
    wins = win_frequency(matrix)
    # A tied vote is broken by the members' mean probability (records since 4202f60).
    ties = all("test_ties" in r["methods"][m] for r in complete for m in methods)
    header = (
        "| method | average rank | expected rank (Lacoste) | mean test loss "
        "| mean validation loss (final ensemble) | median ensemble size |"
        + (" mean tied test votes |" if ties else "")
    )
    lines = [header, "|---" * (7 if ties else 6) + "|"]
    for i in np.argsort(ranks):
        tied = (f" {np.mean([r['methods'][methods[i]]['test_ties'] for r in complete]):.2f} |"
                if ties else "")
        lines.append(f"| {methods[i]} | {ranks[i]:.2f} | {expected[i]:.2f} | "
                     f"{matrix[:, i].mean():.4f} | {validation[i]:.4f} | {sizes[i]:.0f} |{tied}")
    if len(methods) >= 3:
        lines += ["", f"Friedman p = {friedman_test(matrix).p_value:.3g}."]
    lines += ["", _sole_winners(matrix, methods)]
    rows, tested = [], False
    for i, a in enumerate(methods):
        cells = []
        for j, b in enumerate(methods):
            if i == j:
                cells.append("–")
                continue
            probability = pb(a, b)
            tested = tested or probability is not None
            p = wilcoxon_signed_rank(matrix[:, i], matrix[:, j]).p_value
            pb_text = f", PB {probability:.2f}" if probability is not None else ""
            cells.append(f"{wins[i, j]:.2f}{pb_text}, W p={p:.2g}")
        rows.append(f"| {a} | " + " | ".join(cells) + " |")
    pb_text = f", PB test Pr(row ≻ column){pb_reading}" if tested else ""
    return lines + [
        "",
        f"Win frequency of row over column (ties 0.5){pb_text}, Wilcoxon two-sided p:",
        "",
        "| row \\ column | " + " | ".join(methods) + " |",
        "|---" * (len(methods) + 1) + "|",
        *rows,
    ]


def _pair_readings(complete: Sequence[dict[str, Any]], methods: Sequence[str],
                   averaged: bool) -> dict[tuple[str, str], PairReading]:
    """The per-dataset PB readings of every ordered pair with per-example errors; each
    unordered pair's counts are decoded once."""
    readings = {}
    for i, a in enumerate(methods):
        for b in methods[i + 1:]:
            if not (_has_errors(complete, a) and _has_errors(complete, b)):
                continue
            runs = {(r["space"], r["dataset"], r["seed"]): tuple(_counts(r, a, b, averaged))
                    for r in complete}
            readings[a, b] = pair_reading(runs)
            readings[b, a] = pair_reading(reversed_counts(runs))
    return readings


def _pb_seed_table(readings: dict[tuple[str, str], PairReading], methods: Sequence[str],
                   seeds: Sequence[int]) -> list[str]:
    """Each pair's per-seed PB values (median, range, how many reach Lacoste's 0.9) beside
    the summed-count reading reported before 7 Dec 2026, which overstates."""
    full = next(iter(readings.values())).seeds
    left_out = sorted(set(seeds) - set(full))
    lines = [
        (f"PB per seed, Pr(row ≻ column), over the {len(full)} seeds holding every dataset"
         + (f" (seed{'s' if len(left_out) > 1 else ''} {_seed_ranges(left_out)} left out)"
            if left_out else "")
         + ": median [lowest–highest], how many seeds reach 0.9, and the test on counts "
         "summed over all seeds (which counts the test rows the seeds share again, so "
         "overstates):"),
        "",
        "| row \\ column | " + " | ".join(methods) + " |",
        "|---" * (len(methods) + 1) + "|",
    ]
    for a in methods:
        cells = []
        for b in methods:
            reading = readings.get((a, b))
            if reading is None:
                cells.append("–")
                continue
            values = reading.per_seed
            reach = sum(value >= 0.9 for value in values)
            cells.append(f"{reading.value:.2f} [{min(values):.2f}–{max(values):.2f}], "
                         f"{reach}/{len(values)}; summed {reading.summed:.2f}")
        lines.append(f"| {a} | " + " | ".join(cells) + " |")
    return lines


def _per_dataset(complete: Sequence[dict[str, Any]], methods: Sequence[str],
                 pooled: bool) -> list[str]:
    """The comparison on one value per dataset, as the papers report: each run's test loss
    (averaged over the last iterations where they were scored, as Lacoste et al.) is
    averaged over the seeds. The PB test is read as :mod:`ensembo.bench.ensembles_pb`
    says; a pooled group gets none (:func:`render_group`)."""
    averaged = all("last" in r["methods"][m] for r in complete for m in methods)
    by_dataset: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for record in complete:
        by_dataset.setdefault((record["space"], record["dataset"]), []).append(record)

    def run_loss(record: dict[str, Any], method: str) -> float:
        result = record["methods"][method]
        return (
            float(np.mean([s["test_loss"] for s in result["last"]]))
            if averaged
            else result["test_loss"]
        )

    # Unrounded: the paired tests must see equal differences of means as equal
    # (paired_differences); ranks, wins and the sole winners tie float noise themselves.
    matrix = np.array([[np.mean([run_loss(r, m) for r in runs]) for m in methods]
                       for runs in by_dataset.values()])
    readings = {} if pooled else _pair_readings(complete, methods, averaged)
    seeds = sorted({r["seed"] for r in complete})
    several = len(seeds) > 1 and any(reading.per_seed for reading in readings.values())
    summed_over = [] if several else [dataset for (_, dataset), runs in by_dataset.items()
                                      if len(runs) > 1]
    how = (" (the median over seeds of the test on each seed's splits)" if several
           else " (PB on counts summed over seeds, overstates)" if summed_over else "")
    last = len(complete[0]["methods"][methods[0]]["last"]) if averaged else 0
    over = f" and over the last {last} trials" if averaged else ""
    lines = [f"Per dataset ({len(by_dataset)} problems; each value the mean over seeds{over}):", ""]
    lines += _comparison(matrix, methods, complete,
                         lambda a, b: readings[a, b].value if (a, b) in readings else None, how)
    if len(seeds) > 1 and readings:
        lines += [""] + (_pb_seed_table(readings, methods, seeds) if several
                         else [_summed_note(summed_over, len(by_dataset))])
    return lines + [""]


def _summed_note(summed_over: Sequence[str], datasets: int) -> str:
    """Why, with no seed holding every dataset, the PB is the test on summed counts, and
    whether that overstates: the seeds of one dataset split the same table."""
    if not summed_over:
        return ("No seed holds every dataset, so the PB above is the test on counts summed "
                "over the seeds (runs of different datasets share no test rows).")
    return ("No seed holds every dataset, so the PB above is the test on counts summed over "
            "the seeds, which overstates: the seeds of one dataset split the same table, so "
            "their test rows overlap and the shared rows are counted once per seed "
            f"({len(summed_over)} of {datasets} datasets have several seeds: "
            f"{', '.join(summed_over)}).")


def render_group(experiment: str, space: str, records: Sequence[dict[str, Any]],
                 methods: Sequence[str], pooled: bool = False) -> list[str]:
    """One group's tables. A ``pooled`` group (several spaces) has no PB test: its spaces
    share each seed's test split of a dataset, so the test would count those rows once
    per space."""
    complete, matrix = _matrix(records, methods)
    datasets = len({(r["space"], r["dataset"]) for r in complete})
    runs = "" if datasets == len(complete) else f" ({len(complete)} dataset × seed runs)"
    sets = f"{datasets} dataset{'' if datasets == 1 else 's'}"
    lines = [f"### `{experiment}` — space `{space}`: {sets} complete{runs}", ""]
    failed = [r for r in records if _failure(r) is not None]
    if len(complete) < 2:
        lines += ["Too few complete datasets for ranks and tests.", ""]
    else:
        def pb(a: str, b: str) -> float | None:
            if pooled or not (_has_errors(complete, a) and _has_errors(complete, b)):
                return None
            return pb_test_from_counts([_counts(r, a, b, averaged=False) for r in complete])

        if pooled and _has_errors(complete, methods[0]):
            lines += [("No PB test pooled: the spaces share each seed's test split of a "
                       "dataset, so it would count those rows once per space."), ""]
        if runs:
            lines += [("Per run (final ensembles, one row per dataset × seed). The runs of "
                       "one dataset are not independent, so the tests here overstate the "
                       "evidence; the per-dataset view below is the one to judge by."), ""]
        lines += _comparison(matrix, methods, complete, pb)
        if len({r["seed"] for r in complete}) > 1:
            lines += [""] + _per_seed(complete, matrix, methods)
        averaged = any("last" in r["methods"][methods[0]] for r in complete)
        if (runs or averaged) and datasets >= 2:
            lines += [""] + _per_dataset(complete, methods, pooled)
        lines += [
            "",
            "<details><summary>Test loss per dataset</summary>",
            "",
            "| dataset | seed | " + " | ".join(methods) + " |",
            "|---" * (len(methods) + 2) + "|",
        ]
        for record, row in zip(complete, matrix, strict=True):
            lines.append(f"| {record['dataset']} | {record['seed']} | "
                         + " | ".join(f"{v:.4f}" for v in row) + " |")
        lines += ["", "</details>"]
    for record in failed:
        lines.append(f"- failed: {record['dataset']} seed {record['seed']}: {_failure(record)}")
    return lines + [""]


def _seed_ranges(seeds: Sequence[int]) -> str:
    """``0, 5–9`` for seeds 0, 5, 6, 7, 8, 9."""
    ranges: list[list[int]] = []
    for seed in sorted(seeds):
        if ranges and seed == ranges[-1][-1] + 1:
            ranges[-1].append(seed)
        else:
            ranges.append([seed])
    return ", ".join(f"{r[0]}–{r[-1]}" if len(r) > 1 else f"{r[0]}" for r in ranges)


def _seeds_held(records: Sequence[dict[str, Any]], asked: int) -> str:
    """The seeds that have complete records, against the number asked for, and whether
    datasets have unequal numbers of them: the header must not claim seeds that never
    ran, nor count a failed block (listed apart) as a seed its dataset's means hold."""
    records = [r for r in records if _failure(r) is None]
    seeds = sorted({r["seed"] for r in records})
    text = (f"{len(seeds)} seed{'' if len(seeds) == 1 else 's'}"
            + (f" ({_seed_ranges(seeds)})" if seeds else ""))
    if len(seeds) != asked:
        text = f"records for {text} of the {asked} asked for"
    per_dataset: dict[tuple[str, str, str], set[int]] = {}
    for record in records:
        key = (record["experiment"], record["space"], record["dataset"])
        per_dataset.setdefault(key, set()).add(record["seed"])
    counts = {len(held) for held in per_dataset.values()}
    if len(counts) > 1:
        text += f"; datasets have {min(counts)}–{max(counts)} seeds each"
    return text


def _description(record: dict[str, Any]) -> str | None:
    """What ``record`` was made on, as far as it says."""
    parts = []
    if record.get("system"):
        parts.append(system_summary(record["system"]))
    if record.get("environment"):
        parts.append(environment.summary(record["environment"]))
    return "; ".join(parts) or None


def render_report(
    records: Sequence[dict[str, Any]], *, command: str, budget: int, seeds: int,
    notes: Sequence[str] = (),
) -> str:
    """The whole report; ``seeds`` is the number of seeds asked for, ``notes`` sentences
    to put under the header (records left out, say)."""
    lines = [
        "## `ensembles` suite: ensemble strategies vs the seeds' baselines",
        "",
        f"Command: `{command}`",
        "",
        (
            f"Budget {budget} trials per search, {_seeds_held(records, seeds)}; test loss of "
            "each method's final ensemble (zero-one for classification, mse of standardized "
            "targets for regression)."
        ),
        "",
    ]
    for note in notes:
        lines += [note, ""]
    if records:
        lines += ["Environment (records made on each):", ""]
        lines += environment_lines(_description(r) for r in records) + [""]
    groups = _groups(records)
    for name, experiment in EXPERIMENTS.items():
        spaces = [s for s in experiment.spaces if (name, s) in groups]
        if not spaces:
            continue
        lines += [f"Reference: {PAPER[experiment.kind]}", ""]
        for space in spaces:
            lines += render_group(name, space, groups[(name, space)], experiment.methods)
        if len(spaces) > 1:
            pooled = [r for s in spaces for r in groups[(name, s)]]
            lines += render_group(name, " + ".join(spaces), pooled, experiment.methods,
                                  pooled=True)
    return "\n".join(lines) + "\n"
