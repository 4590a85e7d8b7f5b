"""Which seeds each method's summary of a problem stands on.

A failed run is left out of its method's median (bench ``report.md``) or mean
(``ensembo report``'s ``ranks.md``), not counted against it, so a method that failed a
seed is summarised over fewer seeds than the others. Reports name every such
(problem, method) with the seeds it lacks and why, since a reader comparing the
summaries or their ranks would otherwise take them as made on the same seeds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs


@attrs.frozen(kw_only=True)
class MissingSeed:
    seed: Any
    state: str  # the record's status (failed, skipped, interrupted...), "has no record",
    # or "made with budget N"
    reason: str  # the last line of its error, "" when it has none


@attrs.frozen(kw_only=True)
class SeedShortfall:
    """A (problem, method) summarised over ``completed`` of the ``planned`` seeds."""

    problem: str
    method: str
    completed: int
    planned: int
    missing: tuple[MissingSeed, ...]

    def describe(self, statistic: str) -> str:
        """``optuna-tpe: median over 4 of 5 seeds (seed 3 failed: ValueError: boom)``."""
        why = "; ".join(
            f"seed {m.seed} {m.state}" + (f": {m.reason}" if m.reason else "")
            for m in self.missing
        )
        return (f"{self.method}: {statistic} over {self.completed} of {self.planned} seeds "
                f"({why})")


REASON_CHARACTERS = 160
OTHER_BUDGET = "other budget"  # the status a report gives a record made with another budget


def last_line(text: str | None, limit: int | None = None) -> str:
    """The last line of an error (a traceback ends with the exception), cut to ``limit``."""
    lines = (text or "").strip().splitlines()
    line = lines[-1].strip() if lines else ""
    return line if limit is None or len(line) <= limit else line[: limit - 1] + "…"


def shortfall_lines(shortfalls: Sequence[SeedShortfall], statistic: str) -> list[str]:
    """One bullet per (problem, method) summarised over fewer seeds than planned."""
    return [f"- {s.problem} / {s.describe(statistic)}" for s in shortfalls]


def bench_shortfall_note(
    shortfalls: Sequence[SeedShortfall], common_seeds: Mapping[str, Sequence[Any]]
) -> list[str]:
    """The bench report's note: the short medians, then per problem concerned the seeds
    its per-seed (paired) ranks use, ``common_seeds`` being those every optimizer with a
    result there completed."""
    lines = [
        ("Fewer seeds than planned: a failed or skipped run is left out of its optimizer's "
         "median, [min–max] and rank of median, not counted against it."),
        "",
        *shortfall_lines(shortfalls, "median"),
    ]
    for problem in dict.fromkeys(s.problem for s in shortfalls):
        seeds = common_seeds.get(problem, ())
        lines.append(
            f"- on {problem}, the mean ranks in parentheses use only the {len(seeds)} "
            f"seed{'' if len(seeds) == 1 else 's'} every optimizer there completed "
            f"({', '.join(map(str, seeds)) or 'none'}), the mean of per-seed ranks the seeds "
            "every ranked optimizer completed, and the overhead ratios and head to head the "
            "seeds both optimizers of a pair completed"
        )
    return lines


def seed_shortfalls(
    records: Iterable[Mapping[str, Any]],
    problem_of: Any,
    problems: Sequence[str],
    planned_seeds: Mapping[str, Sequence[Any]],
) -> tuple[SeedShortfall, ...]:
    """The (problem, method) pairs of ``problems`` with some but not all of the
    problem's ``planned_seeds`` complete, in problem then method order.

    ``problem_of(record)`` names a record's problem as ``problems`` do. A method with no
    complete seed on a problem is left to the reports' own "no result" notes.
    """
    by_pair: dict[tuple[str, str], dict[Any, Mapping[str, Any]]] = {}
    for record in records:
        pair = (problem_of(record), str(record.get("optimizer")))
        seeds = by_pair.setdefault(pair, {})
        if seeds.get(record.get("seed"), {}).get("status") != "complete":
            seeds[record.get("seed")] = record  # a complete record wins over a copy of it
    found = []
    for problem in problems:
        for (where, method), seeds in by_pair.items():
            if where != problem:
                continue
            complete = {s for s, r in seeds.items() if r.get("status") == "complete"}
            planned = list(planned_seeds.get(problem, ()))
            lacking = [s for s in planned if s not in complete]
            if complete and lacking:
                found.append(SeedShortfall(
                    problem=problem,
                    method=method,
                    completed=len(complete),
                    planned=len(set(planned) | complete),
                    missing=tuple(_missing(seeds.get(s), s) for s in lacking),
                ))
    return tuple(found)


def _missing(record: Mapping[str, Any] | None, seed: Any) -> MissingSeed:
    if record is None:
        return MissingSeed(seed=seed, state="has no record", reason="")
    if record.get("status") == OTHER_BUDGET:  # its error says what to pass: not repeated
        return MissingSeed(seed=seed, state=f"made with budget {record.get('budget')}",
                           reason="")
    return MissingSeed(seed=seed, state=str(record.get("status", "?")),
                       reason=last_line(record.get("error"), REASON_CHARACTERS))
