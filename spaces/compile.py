""":class:`SpaceSpec` -> ConfigSpace ``ConfigurationSpace``.

ConfigSpace does the heavy lifting (sampling, validity, neighbourhoods); ensembo's extras
ride along in each hyperparameter's ``meta``: the imputation rule (``impute``), the
quantization step (``q``) and the document path (``path``) for error messages.
"""

from __future__ import annotations

import math
from typing import Any

from ConfigSpace import (
    AndConjunction,
    CategoricalHyperparameter,
    ConfigurationSpace,
    Constant,
    EqualsCondition,
    ForbiddenAndConjunction,
    ForbiddenEqualsClause,
    ForbiddenEqualsRelation,
    ForbiddenGreaterThanRelation,
    ForbiddenInClause,
    ForbiddenLessThanRelation,
    GreaterThanCondition,
    InCondition,
    LessThanCondition,
    OrConjunction,
    OrdinalHyperparameter,
    UniformFloatHyperparameter,
    UniformIntegerHyperparameter,
)

from ensembo.spaces import impute
from ensembo.spaces.problems import Problems
from ensembo.spaces.quantize import snap
from ensembo.spaces.spec import Compare, Condition, Param, Relation, SpaceSpec

_COMPARE = {
    "eq": EqualsCondition,
    "in": InCondition,
    "gt": GreaterThanCondition,
    "lt": LessThanCondition,
}
_INCLUSIVE = {"ge": "gt", "le": "lt"}


def compile_spec(spec: SpaceSpec, problems: Problems) -> ConfigurationSpace:
    """Build the ConfigurationSpace of ``spec``; problems found are added to ``problems``."""
    space = ConfigurationSpace(name=spec.name)
    hyperparameters = {}
    paths: dict[str, str] = {}
    for param in spec.params:
        if param.name in paths:
            problems.add(
                param.path,
                f"flat name {param.name!r} is already used by {paths[param.name]}; "
                "rename one of them",
            )
            continue
        paths[param.name] = param.path
        hp = _hyperparameter(param, spec.impute, problems)
        if hp is not None:
            hyperparameters[param.name] = hp
    space.add(list(hyperparameters.values()))
    if len(hyperparameters) != len(spec.params):
        return space  # conditions would refer to missing hyperparameters
    for param in spec.params:
        condition = _conditions(param, hyperparameters, problems)
        if condition is None:
            continue
        try:
            space.add(condition)
        except Exception as error:  # ConfigSpace reports cycles and clashes with many types
            problems.add(param.path, f"condition rejected by ConfigSpace: {error}")
    return _with_forbidden(space, spec, hyperparameters, problems)


def _with_forbidden(
    space: ConfigurationSpace, spec: SpaceSpec, hyperparameters: dict, problems: Problems
) -> ConfigurationSpace:
    """``space`` with the clauses of ``spec.forbidden`` ConfigSpace accepts; each one it
    rejects is reported at its own path, with its own reason."""
    accepted = []
    for clause in spec.forbidden:
        forbidden = _forbidden(clause, hyperparameters, problems)
        if forbidden is None:
            continue
        try:
            space.add(forbidden)
        except Exception as error:
            _report_rejected(clause, error, problems)
            # ConfigSpace keeps a clause it rejects, and would blame it for the next ones
            space = _rebuilt(space, accepted)
            continue
        accepted.append(forbidden)
    return space


def _report_rejected(clause, error: Exception, problems: Problems) -> None:
    where = clause.path if isinstance(clause, Relation) else clause[0].path
    hint = (
        " (the default configuration must be allowed: change a default or the clause)"
        if "violates" in str(error)
        else ""
    )
    problems.add(where.rsplit(".", 1)[0], f"forbidden combination rejected: {error}{hint}")


def _rebuilt(space: ConfigurationSpace, forbidden: list) -> ConfigurationSpace:
    """A fresh copy of ``space``'s hyperparameters and conditions with only ``forbidden``."""
    rebuilt = ConfigurationSpace(name=space.name, meta=space.meta)
    rebuilt.add(list(space.values()), list(space.conditions), forbidden)
    return rebuilt


def _hyperparameter(param: Param, space_rule: Any, problems: Problems):
    """The ConfigSpace hyperparameter of ``param``; a fixed value it cannot impute is
    reported where the rule is written (its own ``impute`` or the space-wide one)."""
    written, where = param.impute, f"{param.path}.impute"
    if written is None:
        written, where = space_rule, "impute"
    rule = None if written is None else impute.normalize_rule(written)
    meta = {"impute": rule, "path": param.path}
    try:
        hp = _build(param, meta)
    except Exception as error:
        problems.add(param.path, f"rejected by ConfigSpace: {with_cause(error)}")
        return None
    if rule is not None:
        try:
            impute.imputed_value(hp, rule)
        except ValueError as error:
            problems.add(where, str(error))
    return hp


def with_cause(error: Exception) -> str:
    """ConfigSpace wraps the reason of a refusal ("Negative lower bound 0.000000 for
    log-scale is not possible") in a bare "has illegal settings": keep both."""
    cause = error.__cause__
    return f"{error}: {cause}" if cause is not None else str(error)


def _build(param: Param, meta: dict[str, Any]):
    if param.kind in ("float", "int"):
        integer = param.kind == "int"
        cls = UniformIntegerHyperparameter if integer else UniformFloatHyperparameter
        default = param.default
        if param.q is not None:
            meta["q"] = param.q
            if default is None:
                default = cls(param.name, param.low, param.high, log=param.log).default_value
            default = snap(default, param.low, param.high, param.q, integer)
        return cls(
            param.name, param.low, param.high, default_value=default, log=param.log, meta=meta
        )
    if param.kind in ("categorical", "choice"):
        kwargs = {} if param.default is None else {"default_value": param.default}
        if param.weights is not None:  # sampling prior over the choices
            kwargs["weights"] = list(param.weights)
        return CategoricalHyperparameter(param.name, list(param.choices), meta=meta, **kwargs)
    if param.kind == "ordinal":
        kwargs = {} if param.default is None else {"default_value": param.default}
        return OrdinalHyperparameter(param.name, list(param.choices), meta=meta, **kwargs)
    return Constant(param.name, param.default, meta=meta)


def _conditions(param: Param, hyperparameters: dict, problems: Problems):
    child = hyperparameters[param.name]
    parts = []
    if param.branch is not None:
        choice, option = param.branch
        parts.append(EqualsCondition(child, hyperparameters[choice], option))
    if param.when is not None:
        compiled = _condition(param.when, child, hyperparameters, problems)
        if compiled is None:
            return None
        parts.append(compiled)
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else AndConjunction(*parts)


def _condition(condition: Condition, child, hyperparameters: dict, problems: Problems):
    if isinstance(condition, Compare):
        parent = hyperparameters[condition.parent]
        op, value = _integral_bound(parent, condition.op, condition.value)
        value = list(value) if op == "in" else value
        try:
            if op in _INCLUSIVE:  # ConfigSpace has only strict comparisons
                strict = _COMPARE[_INCLUSIVE[op]](child, parent, value)
                return OrConjunction(strict, EqualsCondition(child, parent, value))
            if op == "ne":
                return _not_equal(child, parent, value)
            return _COMPARE[op](child, parent, value)
        except Exception as error:
            problems.add(condition.path, _condition_problem(condition, parent, error))
            return None
    items = [_condition(item, child, hyperparameters, problems) for item in condition.items]
    if any(item is None for item in items):
        return None
    return (AndConjunction if condition.kind == "all" else OrConjunction)(*items)


def _not_equal(child, parent, value: Any):
    """``parent != value`` that is false while ``parent`` is inactive.

    ConfigSpace's ``NotEqualsCondition`` holds on an inactive (NaN) parent, so its child
    would be active without its parent, against the DSL's rule (a child of an inactive
    parent is inactive) that reachability.py and the estimator checks assume. A
    categorical-like parent becomes ``in`` its other values, a number ``< value or >
    value``: both are false on NaN and mean ``!=`` on every value the parent takes.
    """
    if isinstance(parent, UniformFloatHyperparameter | UniformIntegerHyperparameter):
        return OrConjunction(
            LessThanCondition(child, parent, value), GreaterThanCondition(child, parent, value)
        )
    others = [choice for choice in _values_of(parent) if not _same_value(choice, value)]
    return InCondition(child, parent, others)


def _values_of(hp) -> tuple:
    return tuple(getattr(hp, "choices", None) or getattr(hp, "sequence", None) or (hp.value,))


def _same_value(choice: Any, value: Any) -> bool:
    """``choice == value`` without ``True`` standing for ``1`` (as conditions.py reads it)."""
    return choice == value and isinstance(choice, bool) == isinstance(value, bool)


def _integral_bound(parent, op: str, value: Any) -> tuple[str, Any]:
    """A fractional bound on an integer parent as the integer bound it means
    (``n >= 2.5`` is ``n >= 3``, ``n < 2.5`` is ``n <= 2``): ConfigSpace takes only
    values an integer hyperparameter can hold."""
    fractional = (
        isinstance(value, float) and math.isfinite(value) and not value.is_integer()
    )
    if not isinstance(parent, UniformIntegerHyperparameter) or not fractional:
        return op, value
    if op in ("gt", "ge"):
        return "ge", math.ceil(value)
    if op in ("lt", "le"):
        return "le", math.floor(value)
    return op, value


def _condition_problem(condition: Compare, parent, error: Exception) -> str:
    """Why ConfigSpace refused a condition, with the values ``parent`` takes."""
    if isinstance(parent, UniformIntegerHyperparameter) and condition.op in ("eq", "ne", "in"):
        values = condition.value if condition.op == "in" else [condition.value]
        if any(isinstance(v, float) and not v.is_integer() for v in values):
            return (f"{condition.parent!r} is an integer in [{parent.lower}, {parent.upper}]: "
                    f"'{condition.op}' needs whole numbers, got {condition.value!r}")
    if isinstance(parent, CategoricalHyperparameter) and condition.op in ("gt", "ge", "lt", "le"):
        return (f"{condition.parent!r} is a categorical, whose values have no order: "
                f"'{condition.op}' needs a number or an ordinal; use 'in' with the values "
                f"meant ({_legal_values(parent)})")
    return (f"invalid condition on {condition.parent!r}: {error}; "
            f"legal values: {_legal_values(parent)}")


def _legal_values(hp) -> str:
    """The values ``hp`` takes, for messages: ConfigSpace only says which one is illegal."""
    if hasattr(hp, "lower"):
        return f"[{hp.lower}, {hp.upper}]"
    return ", ".join(map(repr, _values_of(hp)))


FORBIDDEN_RELATIONS = {
    "lt": ForbiddenLessThanRelation,
    "gt": ForbiddenGreaterThanRelation,
    "eq": ForbiddenEqualsRelation,
}


def _forbidden(clause: tuple[Compare, ...] | Relation, hyperparameters: dict, problems: Problems):
    if isinstance(clause, Relation):
        left, right = hyperparameters[clause.left], hyperparameters[clause.right]
        try:
            return FORBIDDEN_RELATIONS[clause.op](left, right)
        except Exception as error:
            problems.add(clause.path, f"invalid relation {clause.left} / {clause.right}: {error}")
            return None
    parts = []
    for compare in clause:
        hp = hyperparameters[compare.parent]
        try:
            if compare.op == "in":
                parts.append(ForbiddenInClause(hp, list(compare.value)))
            else:
                parts.append(ForbiddenEqualsClause(hp, compare.value))
        except Exception as error:
            problems.add(compare.path, f"invalid forbidden value for {compare.parent!r}: {error}")
            return None
    return parts[0] if len(parts) == 1 else ForbiddenAndConjunction(*parts)
