"""Imputation rules: what a surrogate sees for an inactive hyperparameter.

A rule is declared per hyperparameter or space-wide and resolved to one encoded value
in [0, 1] (or NaN for ``none``, for surrogates that handle missing values). Rules are
kept in each ConfigSpace hyperparameter's ``meta["impute"]`` so they survive
``to_configspace()`` / ``from_configspace()`` and serialization.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from ConfigSpace.hyperparameters import (
    CategoricalHyperparameter,
    Hyperparameter,
    NumericalHyperparameter,
    OrdinalHyperparameter,
)

RULES = ("default", "midpoint", "lower", "upper", "none")
"""Named rules; a fixed value is written ``{"value": x}`` (or a bare non-rule scalar)."""

DEFAULT_RULE = "midpoint"
"""The Lévesque thesis imputes the middle of the normalized range (L1322, L1458)."""


def normalize_rule(rule: Any) -> str | dict[str, Any]:
    """Canonical form of a declared rule: a rule name or ``{"value": x}``.

    Raises ``ValueError`` with the valid forms when ``rule`` is none of them.
    """
    if isinstance(rule, str) and rule in RULES:
        return rule
    if isinstance(rule, Mapping):
        if set(rule) != {"value"}:
            raise ValueError(f"a fixed-value rule is {{value: X}}, got keys {sorted(rule)}")
        if isinstance(rule["value"], list | Mapping):  # ConfigSpace cannot even compare it
            raise ValueError(f"a fixed value is a number or string, got {rule['value']!r}")
        return {"value": rule["value"]}
    if isinstance(rule, bool | int | float | str):
        return {"value": rule}
    raise ValueError(unknown_rule(rule))


def override_rule(hp: Hyperparameter, rule: Any) -> str | dict[str, Any]:
    """:func:`normalize_rule` for a rule given through the API (``impute=``,
    ``with_imputation``): a string that is no rule name and no value ``hp`` takes is a
    mistyped rule (``'Midpoint'``), as in a document, not a fixed value."""
    takes = (*getattr(hp, "choices", ()), *getattr(hp, "sequence", ()), getattr(hp, "value", None))
    if isinstance(rule, str) and rule not in RULES and rule not in takes:
        raise ValueError(unknown_rule(rule))
    return normalize_rule(rule)


def unknown_rule(rule: Any) -> str:
    """Why ``rule`` is refused, with the valid forms and the rule it is closest to."""
    close = difflib.get_close_matches(str(rule).lower(), RULES, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown rule {rule!r}; use one of {', '.join(RULES)} or {{value: X}}{hint}"


def index_spread(hp: Hyperparameter) -> float:
    """Divisor mapping a ConfigSpace vector value onto [0, 1] (1 for numeric ones)."""
    if isinstance(hp, CategoricalHyperparameter | OrdinalHyperparameter):
        return float(max(hp.size - 1, 1))
    return 1.0


def encoded_value(hp: Hyperparameter, value: Any) -> float:
    """``value`` of ``hp`` as its index encoding in [0, 1]."""
    return float(hp.to_vector(value)) / index_spread(hp)


def imputed_value(hp: Hyperparameter, rule: str | Mapping[str, Any]) -> float:
    """The encoded value in [0, 1] (NaN for ``none``) that ``rule`` gives ``hp``.

    Raises ``ValueError`` when a fixed value is not a legal value of ``hp``.
    """
    if rule == "none":
        return float("nan")
    if rule == "midpoint":
        return 0.5
    if rule == "lower":
        return 0.0
    if rule == "upper":
        return 1.0
    value = hp.default_value if rule == "default" else rule["value"]
    if isinstance(hp, NumericalHyperparameter) and isinstance(value, int | float):
        # ConfigSpace rounds stored bounds; a value written as the bound is still legal
        tolerance = 1e-9 * max(1.0, abs(hp.lower), abs(hp.upper))
        if hp.lower - tolerance <= value <= hp.upper + tolerance:
            value = min(max(value, hp.lower), hp.upper)
    if not hp.legal_value(value):
        raise ValueError(f"imputed value {value!r} is not a legal value of {hp.name!r}")
    return encoded_value(hp, value)


def rule_of(hp: Hyperparameter) -> str | dict[str, Any]:
    """The rule stored on ``hp`` (``midpoint`` when none was declared)."""
    meta = hp.meta or {}
    return normalize_rule(meta.get("impute", DEFAULT_RULE))
