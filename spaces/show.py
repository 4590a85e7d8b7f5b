"""Text rendering of a space as a tree: branches, ranges, scales, defaults, imputation.

Works from the ConfigSpace (so imported spaces show too): a hyperparameter whose only
condition is ``parent == value`` is drawn under that branch; any other condition is
written after it as ``when ...``. Estimators come from the DSL spec when there is one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ConfigSpace import EqualsCondition
from ConfigSpace.hyperparameters import (
    CategoricalHyperparameter,
    Constant,
    NumericalHyperparameter,
    OrdinalHyperparameter,
)

from ensembo.spaces.quantize import step_of

if TYPE_CHECKING:
    from ensembo.spaces.space import Space

INDENT = "  "


def _rule(rule: Any) -> str:
    return f"value {rule['value']!r}" if isinstance(rule, dict) else str(rule)


def describe(space: Space, name: str) -> str:
    hp = space.configspace[name]
    if isinstance(hp, NumericalHyperparameter):
        kind = "int" if hp.__class__.__name__.startswith("UniformInteger") else "float"
        text = f"{kind} [{hp.lower:g}, {hp.upper:g}]{' log' if hp.log else ''}"
        if step_of(hp) is not None:
            text += f" step {step_of(hp):g}"
    elif isinstance(hp, OrdinalHyperparameter):
        text = f"ordinal ({', '.join(map(str, hp.sequence))})"
    elif isinstance(hp, CategoricalHyperparameter):
        is_choice = space.spec is not None and space.spec.param(name).kind == "choice"
        text = f"{'choice' if is_choice else 'categorical'} {{{', '.join(map(str, hp.choices))}}}"
    elif isinstance(hp, Constant):
        return f"constant {hp.value!r}"
    else:  # pragma: no cover - ConfigSpace has no other kinds we compile to
        text = type(hp).__name__
    default = hp.default_value
    return (
        f"{text}, default {default:g}"
        if isinstance(default, float)
        else f"{text}, default {default!r}"
    )


def _branch_of(space: Space, name: str) -> tuple[str, Any] | None:
    conditions = space.configspace.parent_conditions_of[name]
    if len(conditions) == 1 and isinstance(conditions[0], EqualsCondition):
        return conditions[0].parent.name, conditions[0].value
    return None


def _condition_text(space: Space, name: str) -> str:
    conditions = space.configspace.parent_conditions_of[name]
    if not conditions or _branch_of(space, name) is not None:
        return ""
    return ", when " + " and ".join(str(c).replace(f"{name} | ", "") for c in conditions)


def _estimators(space: Space) -> dict[tuple[str, str], str]:
    """(choice, option) -> estimator shown next to that branch."""
    found = {}
    if space.spec is None:
        return found
    for param in space.spec.params:
        for option in param.options:
            if option.component is not None:
                refs = [ref for _, ref in option.component.references]
                found[(param.name, option.name)] = " | ".join(refs)
    return found


def render(space: Space) -> str:
    lines = [f"{space.name}: {space.dimension} hyperparameters"]
    spec = space.spec
    if spec is not None and spec.is_executable:
        steps = [s.name for s in spec.steps] + (["model"] if spec.component else [])
        lines.append(f"builds: {' -> '.join(steps)}")
        if spec.categorical_steps:
            names = " -> ".join(s.name for s in spec.categorical_steps)
            lines.append(f"categorical columns: {names}")
        if spec.component is not None:
            lines.append(f"model: {' | '.join(ref for _, ref in spec.component.references)}")
    children: dict[tuple[str, Any], list[str]] = {}
    roots = []
    for name in space.names:
        branch = _branch_of(space, name)
        (children.setdefault(branch, []) if branch else roots).append(name)
    estimators = _estimators(space)

    def draw(name: str, depth: int) -> None:
        rule = _rule(space.imputation_rule(name))
        text = f"{describe(space, name)}, impute {rule}{_condition_text(space, name)}"
        lines.append(f"{INDENT * depth}{_short(space, name)}: {text}")
        hp = space.configspace[name]
        for value in getattr(hp, "choices", ()):
            under = children.get((name, value), [])
            estimator = estimators.get((name, str(value)))
            if not under and not estimator:
                continue
            lines.append(
                f"{INDENT * (depth + 1)}= {value}{f'  -> {estimator}' if estimator else ''}"
            )
            for child in under:
                draw(child, depth + 2)

    for root in roots:
        draw(root, 1)
    for forbidden in space.configspace.forbidden_clauses:
        lines.append(f"forbidden: {forbidden}")
    return "\n".join(lines)


def _short(space: Space, name: str) -> str:
    if space.spec is None:
        return name
    return space.spec.param(name).local
