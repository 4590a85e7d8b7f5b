"""Hyperparameters that can never be active: a static check of the conditions.

A hyperparameter is active only when its option is chosen, its ``when`` holds and every
parent it names is active. When those needs contradict each other (``depth`` in option
``tree`` conditioned on ``C`` of option ``svm``; ``{C: {gt: 2, lt: 1}}``), ConfigSpace
would silently never sample it, so the space author is told instead.
"""

from __future__ import annotations

import math
from typing import Any

from ensembo.spaces.problems import Problems
from ensembo.spaces.spec import Compare, Condition, Param


def report_never_active(params: list[Param], problems: Problems) -> None:
    """Report hyperparameters whose option and conditions need one choice to take two
    options at once (``depth`` in option ``tree`` conditioned on ``C`` of option ``svm``):
    they would silently never be sampled. A static check: a hyperparameter is active only
    when its option is chosen, its ``when`` holds and every parent in it is active."""
    dead = activity_needs(params)[1]
    for param in params:
        if param.name in dead:
            problems.add(param.path, f"can never be active: {dead[param.name]}")


def activity_needs(
    params: list[Param],
) -> tuple[dict[str, dict[str, frozenset]], dict[str, str]]:
    """(name -> {choice or categorical -> the values it must take for ``name`` to be
    active}, name -> why it can never be active), over every hyperparameter; a choice or
    categorical missing from the first is not constrained (or not statically)."""
    by_name = {p.name: p for p in params}
    needs: dict[str, dict[str, frozenset]] = {}
    dead: dict[str, str] = {}  # name -> why it can never be active

    def needed(name: str) -> dict[str, frozenset]:
        """choice -> options it must take for ``name`` to be active."""
        if name in needs:
            return needs[name]
        param = by_name[name]
        needs[name] = {}  # conditions have no cycles (checked before); stay safe anyway
        parts = []  # (requirement, what requires it)
        if param.branch is not None:
            choice, option = param.branch
            parts.append(({choice: frozenset([option])}, "its option"))
        for parent in ([param.branch[0]] if param.branch else []) + [
            c.parent for c in when_conjuncts(param.when)
        ]:
            parts.append((needed(parent), f"parent {parent!r}"))
            if parent in dead:
                dead[name] = f"its parent {parent!r} can never be active"
        for clause in when_clauses(param.when):
            parts.append((values_required(clause, by_name), "its 'when'"))
        for why in _impossible_ranges(param.when, by_name):
            dead.setdefault(name, why)
        required: dict[str, tuple[frozenset, str]] = {}
        for requirement, source in parts:
            for choice, options in requirement.items():
                before, by = required.get(choice, (options, source))
                if name in dead:
                    pass
                elif not options:
                    dead[name] = f"{source} admits no value of {choice!r}"
                elif not before & options:
                    dead[name] = (
                        f"{by} needs {choice!r} in {_listed(before)}, {source} needs it in "
                        f"{_listed(options)}"
                    )
                required[choice] = (before & options, by)
        needs[name] = {choice: options for choice, (options, _) in required.items()}
        return needs[name]

    for param in params:
        needed(param.name)
    return needs, dead


def when_conjuncts(condition: Condition | None) -> list[Compare]:
    """The comparisons that must all hold (those under ``any`` may not)."""
    return [clause for clause in when_clauses(condition) if isinstance(clause, Compare)]


def when_clauses(condition: Condition | None) -> list[Condition]:
    """The parts of ``condition`` that must all hold: comparisons and ``any`` junctions."""
    if condition is None:
        return []
    if isinstance(condition, Compare) or condition.kind == "any":
        return [condition]
    return [clause for item in condition.items for clause in when_clauses(item)]


def values_required(condition: Condition, by_name: dict[str, Param]) -> dict[str, frozenset]:
    """choice or categorical -> the values ``condition`` lets it take, for those it
    constrains. Of an ``any``, only what every branch constrains, to any branch's values."""
    if isinstance(condition, Compare):
        admitted = _values_admitted(by_name[condition.parent], condition)
        return {} if admitted is None else {condition.parent: admitted}
    branches = [values_required(item, by_name) for item in condition.items]
    if condition.kind == "all":
        merged: dict[str, frozenset] = {}
        for branch in branches:
            for key, values in branch.items():
                merged[key] = merged.get(key, values) & values
        return merged
    common = set.intersection(*(set(branch) for branch in branches))
    return {key: frozenset().union(*(branch[key] for branch in branches)) for key in common}


def _values_admitted(parent: Param, compare: Compare) -> frozenset | None:
    """The values of a choice, categorical, constant or ordinal ``parent`` that satisfy ``compare``
    (an ordinal compares by position in its sequence, as ConfigSpace does)."""
    if parent.kind == "choice":
        universe = frozenset(option.name for option in parent.options)
    elif parent.kind in ("categorical", "constant"):  # a constant: its one value
        universe = frozenset(parent.choices)
    elif parent.kind == "ordinal":
        universe = frozenset(parent.choices)
        if compare.op in _ORDERED:
            return _positions_admitted(list(parent.choices), compare)
    else:
        return None
    if compare.op == "in":
        return universe & frozenset(compare.value)
    if compare.op == "eq":
        return universe & {compare.value}
    if compare.op == "ne":
        return universe - {compare.value}
    return None


_ORDERED = {"gt": lambda i, j: i > j, "ge": lambda i, j: i >= j,
            "lt": lambda i, j: i < j, "le": lambda i, j: i <= j}


def _positions_admitted(sequence: list[Any], compare: Compare) -> frozenset | None:
    """The values of an ordinal ``sequence`` whose position satisfies ``compare``; None
    for a value not in it (reported as illegal where the condition is resolved)."""
    if compare.value not in sequence or isinstance(compare.value, bool):
        return None
    bound = sequence.index(compare.value)
    holds = _ORDERED[compare.op]
    return frozenset(v for i, v in enumerate(sequence) if holds(i, bound))


def _listed(values: frozenset) -> list[Any]:
    return sorted(values, key=str)  # categorical values may mix types


_BOUNDS = ("gt", "ge", "lt", "le", "eq")


def _impossible_ranges(condition: Condition | None, by_name: dict[str, Param]) -> list[str]:
    """Why the comparisons that must all hold on a number admit none of its values."""
    on_numbers: dict[str, list[Compare]] = {}
    for compare in when_conjuncts(condition):
        parent = by_name[compare.parent]
        numeric = parent.kind in ("float", "int") and isinstance(compare.value, (int, float))
        # a value outside the parent's range is reported as illegal where it is resolved
        if numeric and compare.op in _BOUNDS and parent.low <= compare.value <= parent.high:
            on_numbers.setdefault(compare.parent, []).append(compare)
    reasons = []
    for name, compares in on_numbers.items():
        parent = by_name[name]
        if not _admits_some(parent, compares):
            stated = " and ".join(f"{c.op} {c.value}" for c in compares)
            reasons.append(
                f"its 'when' needs {name!r} {stated}, which no value in "
                f"[{parent.low}, {parent.high}] satisfies"
            )
    return reasons


def _admits_some(parent: Param, compares: list[Compare]) -> bool:
    """Whether some value of the numeric ``parent`` satisfies every one of ``compares``."""
    low, low_strict = parent.low, False
    high, high_strict = parent.high, False
    for compare in compares:
        value, op = compare.value, compare.op
        if op in ("gt", "ge", "eq") and (value, op == "gt") > (low, low_strict):
            low, low_strict = value, op == "gt"
        if op in ("lt", "le", "eq") and (value, op != "lt") < (high, not high_strict):
            high, high_strict = value, op == "lt"
    if parent.kind == "int":
        smallest = math.floor(low) + 1 if low_strict else math.ceil(low)
        largest = math.ceil(high) - 1 if high_strict else math.floor(high)
        return smallest <= largest
    return low < high or (low == high and not (low_strict or high_strict))
