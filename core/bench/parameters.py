"""A library-neutral description of a search space.

Every optimizer under test gets the same problem in its own native form: ConfigSpace
for ensembo and SMAC, define-by-run for Optuna, nested ``hp.choice`` for Hyperopt and a
flat box for scikit-optimize. This module is that common source: a list of parameters
in topological order, each optionally active only when an earlier categorical
parameter takes one of some values (shared hyperparameters list several values).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
from ConfigSpace import (
    Categorical,
    ConfigurationSpace,
    EqualsCondition,
    Float,
    InCondition,
    Integer,
)
from ConfigSpace.hyperparameters import (
    CategoricalHyperparameter,
    Constant,
    IntegerHyperparameter,
    NumericalHyperparameter,
    OrdinalHyperparameter,
    UniformFloatHyperparameter,
    UniformIntegerHyperparameter,
)

from ensembo.errors import SpaceError


@attrs.frozen(kw_only=True)
class ActiveWhen:
    """The parameter is active iff ``parent`` is active and its value is in ``values``."""

    parent: str
    values: tuple[Any, ...] = attrs.field(converter=tuple)


@attrs.frozen(kw_only=True)
class Parameter:
    """One hyperparameter: ``kind`` is "float", "int" or "choice".

    Numeric kinds use ``low``/``high`` (inclusive) and ``log``; "choice" uses ``choices``.
    """

    name: str
    kind: str = attrs.field(validator=attrs.validators.in_(("float", "int", "choice")))
    low: float | None = None
    high: float | None = None
    log: bool = False
    choices: tuple[Any, ...] = attrs.field(default=(), converter=tuple)
    active_when: ActiveWhen | None = None


def float_parameter(
    name: str, low: float, high: float, *, log: bool = False, active_when: ActiveWhen | None = None
) -> Parameter:
    return Parameter(
        name=name, kind="float", low=float(low), high=float(high), log=log, active_when=active_when
    )


def int_parameter(
    name: str, low: int, high: int, *, log: bool = False, active_when: ActiveWhen | None = None
) -> Parameter:
    return Parameter(
        name=name, kind="int", low=int(low), high=int(high), log=log, active_when=active_when
    )


def choice_parameter(
    name: str, choices: Sequence[Any], *, active_when: ActiveWhen | None = None
) -> Parameter:
    return Parameter(name=name, kind="choice", choices=tuple(choices), active_when=active_when)


def check_order(parameters: Sequence[Parameter]) -> None:
    """Parents must be earlier categorical parameters, and names unique."""
    seen: dict[str, Parameter] = {}
    for parameter in parameters:
        if parameter.name in seen:
            raise SpaceError(parameter.name, "parameter declared twice")
        condition = parameter.active_when
        if condition is not None:
            parent = seen.get(condition.parent)
            if parent is None or parent.kind != "choice":
                raise SpaceError(
                    parameter.name,
                    f"parent {condition.parent!r} must be an earlier choice parameter",
                )
            unknown = set(condition.values) - set(parent.choices)
            if unknown:
                raise SpaceError(
                    parameter.name,
                    f"active for {sorted(map(str, unknown))}, not choices of {parent.name!r}: "
                    f"{list(parent.choices)}",
                )
        seen[parameter.name] = parameter


def active_subset(parameters: Sequence[Parameter], values: Mapping[str, Any]) -> dict[str, Any]:
    """Keep only the values of parameters active under ``values`` (a full assignment)."""
    active: dict[str, Any] = {}
    for parameter in parameters:
        condition = parameter.active_when
        if condition is None or (
            condition.parent in active and active[condition.parent] in condition.values
        ):
            active[parameter.name] = values[parameter.name]
    return active


def is_conditional(parameters: Sequence[Parameter]) -> bool:
    return any(p.active_when is not None for p in parameters)


def to_configspace(parameters: Sequence[Parameter], name: str = "problem") -> ConfigurationSpace:
    check_order(parameters)
    space = ConfigurationSpace(name=name)
    built = {}
    for p in parameters:
        if p.kind == "float":
            built[p.name] = Float(p.name, (p.low, p.high), log=p.log)
        elif p.kind == "int":
            built[p.name] = Integer(p.name, (int(p.low), int(p.high)), log=p.log)
        else:
            built[p.name] = Categorical(p.name, list(p.choices))
    space.add(list(built.values()))
    conditions = []
    for p in parameters:
        if p.active_when is None:
            continue
        child, parent = built[p.name], built[p.active_when.parent]
        values = list(p.active_when.values)
        if len(values) == 1:
            conditions.append(EqualsCondition(child, parent, values[0]))
        else:
            conditions.append(InCondition(child, parent, values))
    space.add(conditions)
    return space


UNIFORM_NUMERIC = (UniformFloatHyperparameter, UniformIntegerHyperparameter)


def untranslatable(space: ConfigurationSpace) -> list[str]:
    """What of ``space`` the neutral form cannot give every library (forbidden clauses,
    ``q`` steps, weights, ordinal order, non-uniform priors): the anchors would search a
    bigger space than ensembo, and the Recorder would score configurations the problem
    excludes."""
    found = [f"forbidden clause {clause}" for clause in space.forbidden_clauses]
    for hp in space.values():
        found += [f"hyperparameter {hp.name!r}: {feature}" for feature in _features_lost(hp)]
    return found


def _features_lost(hp) -> list[str]:
    """The features of one hyperparameter that the neutral form would drop."""
    lost = []
    if "q" in (hp.meta or {}):
        lost.append(f"quantization step q={hp.meta['q']}")
    if isinstance(hp, OrdinalHyperparameter):
        lost.append("ordinal order")
    if isinstance(hp, CategoricalHyperparameter) and len(set(hp.weights or ())) > 1:
        lost.append(f"categorical weights {list(hp.weights)}")
    if isinstance(hp, NumericalHyperparameter) and not isinstance(hp, UNIFORM_NUMERIC):
        lost.append(f"non-uniform prior ({type(hp).__name__})")
    return lost


def refuse_untranslatable(space: ConfigurationSpace, problem: str) -> None:
    """Refuse rather than relax a space the anchors would not search as given."""
    found = untranslatable(space)
    if found:
        raise SpaceError(
            problem,
            f"the benchmark translation cannot give every library {'; '.join(found)}; "
            "remove them from the space: every optimizer must search the same configurations",
        )


def from_configspace(space: ConfigurationSpace, problem: str | None = None) -> list[Parameter]:
    """The neutral form of a ConfigSpace whose conditions are Equals/In on categoricals.

    Conjunctions, numeric parents and what :func:`untranslatable` lists have no form in
    some library; they are refused, naming ``problem`` (default: the space's name) and
    the hyperparameter or clause, rather than silently flattened.
    """
    refuse_untranslatable(space, problem or space.name or "space")
    conditions = {}
    for condition in space.conditions:
        if not isinstance(condition, EqualsCondition | InCondition):
            raise SpaceError(
                space.name or "space",
                f"condition {condition} is not supported by the benchmark translation "
                "(only EqualsCondition/InCondition on a categorical parent)",
            )
        values = condition.values if isinstance(condition, InCondition) else [condition.value]
        conditions[condition.child.name] = ActiveWhen(parent=condition.parent.name, values=values)
    parameters = []
    for hp in _topological(space):
        when = conditions.get(hp.name)
        if isinstance(hp, Constant):
            parameters.append(choice_parameter(hp.name, [hp.value], active_when=when))
        elif isinstance(hp, CategoricalHyperparameter):
            parameters.append(choice_parameter(hp.name, hp.choices, active_when=when))
        elif isinstance(hp, NumericalHyperparameter):
            make = int_parameter if isinstance(hp, IntegerHyperparameter) else float_parameter
            parameters.append(make(hp.name, hp.lower, hp.upper, log=hp.log, active_when=when))
        else:
            raise SpaceError(hp.name, f"hyperparameter type {type(hp).__name__} is not supported")
    check_order(parameters)
    return parameters


def _topological(space: ConfigurationSpace):
    """Hyperparameters with every parent before its children."""
    parents = {c.child.name: c.parent.name for c in space.conditions}
    ordered, placed = [], set()
    pending = list(space.values())
    while pending:
        remaining = []
        for hp in pending:
            parent = parents.get(hp.name)
            if parent is None or parent in placed:
                ordered.append(hp)
                placed.add(hp.name)
            else:
                remaining.append(hp)
        if len(remaining) == len(pending):
            raise SpaceError(space.name or "space", "conditions form a cycle")
        pending = remaining
    return ordered
