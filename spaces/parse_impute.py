"""Parsing the impute rules a document writes, space-wide and per hyperparameter.

A rule is kept as written until every hyperparameter is known: only then can a bare
string be told apart as a fixed value (a hyperparameter it applies to can take it) or a
rule name gone wrong (``Midpoint``, ``mean``).
"""

from __future__ import annotations

from typing import Any

import attrs

from ensembo.spaces import impute
from ensembo.spaces.problems import Problems
from ensembo.spaces.spec import Param


def written_rule(raw: Any, path: str, problems: Problems) -> Any:
    """``raw`` as written (None when it is no rule); kept unnormalized, so a bare string
    can still be told from a mistyped rule name once the hyperparameters are known."""
    try:
        impute.normalize_rule(raw)
    except ValueError as error:
        problems.add(path, str(error))
        return None
    return raw


def without_mistyped_rules(params: list[Param], space_rule: Any, problems: Problems):
    """(params, space rule) without mistyped rule names, each reported once where it is
    written. A bare string is a fixed value only if a hyperparameter it applies to can
    take it; otherwise it is a rule name gone wrong (``Midpoint``, ``mean``)."""
    inheriting = [p for p in params if p.impute is None]
    if _mistyped(space_rule, inheriting):
        problems.add("impute", impute.unknown_rule(space_rule))
        space_rule = None
    checked = []
    for param in params:
        if _mistyped(param.impute, [param]):
            problems.add(f"{param.path}.impute", impute.unknown_rule(param.impute))
            param = attrs.evolve(param, impute=None)
        checked.append(param)
    return checked, space_rule


def _mistyped(rule: Any, params: list[Param]) -> bool:
    return (
        isinstance(rule, str)
        and rule not in impute.RULES
        and not any(rule in p.choices for p in params)
    )
