"""Text rendering of a space as a tree: branches, ranges, scales, defaults, imputation.

Works from the ConfigSpace (so imported spaces show too): a hyperparameter is drawn
under the option it was written in (with a DSL spec) or, for imported spaces, under
``parent == value`` when that is its only condition; any other condition is written
after it as ``when ...``. Estimators come from the DSL spec when there is one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ConfigSpace import AndConjunction, EqualsCondition
from ConfigSpace.conditions import Conjunction
from ConfigSpace.hyperparameters import (
    CategoricalHyperparameter,
    Constant,
    NumericalHyperparameter,
    OrdinalHyperparameter,
)

from ensembo.spaces.quantize import step_of
from ensembo.spaces.spec import Compare, Condition, Junction

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
    """The (choice, option) ``name`` is drawn under. With a DSL spec that is the option
    it was written in, even when it also has a ``when`` (its ConfigSpace condition is
    then a conjunction); without one, a lone ``parent == value`` condition on a
    categorical (only their choices are drawn as branches; others say ``, when ...``)."""
    if space.spec is not None:
        return space.spec.param(name).branch
    conditions = space.configspace.parent_conditions_of[name]
    if (
        len(conditions) == 1
        and isinstance(conditions[0], EqualsCondition)
        and isinstance(conditions[0].parent, CategoricalHyperparameter)
    ):
        return conditions[0].parent.name, conditions[0].value
    return None


def _condition_text(space: Space, name: str) -> str:
    """``, when ...`` for the conditions not already shown by the branch it sits under."""
    parts = _condition_parts(space, name)
    branch = _branch_of(space, name)
    if branch is not None:
        parts = [(c, written) for c, written in parts if not _is_branch(c, branch)]
    if not parts:
        return ""
    text = " and ".join(_as_written(c, written) for c, written in parts)
    return ", when " + text.replace(f"{name} | ", "")


def _condition_parts(space: Space, name: str) -> list[tuple[Any, Condition | None]]:
    """Each part of ``name``'s ConfigSpace condition (the parts of a conjunction), with
    the document's condition it was compiled from (None for the option it sits under,
    and in an imported space)."""
    parts = []
    for condition in space.configspace.parent_conditions_of[name]:
        is_and = isinstance(condition, AndConjunction)
        parts.extend(condition.components if is_and else [condition])
    if space.spec is None:
        return [(part, None) for part in parts]
    param = space.spec.param(name)  # compiled as [option's ==] + [when] (compile.py)
    written = [None] if param.branch is not None else []
    if param.when is not None:
        if len(written) + 1 == len(parts):
            written.append(param.when)
        else:  # a top-level 'all' with no option: its items are the conjunction's parts
            written.extend(param.when.items)
    return list(zip(parts, written, strict=True))


def _as_written(condition: Any, written: Condition | None) -> str:
    """``condition`` as ConfigSpace prints it, but each part compiled from a ``ne`` as
    written (``kernel != 'poly'``), not as the ``in`` other values or ``< v || > v`` it
    compiles to: decided part by part, so an ``in`` written as such stays ``in``."""
    if isinstance(written, Compare) and written.op == "ne":
        return f"{written.parent} != {written.value!r}"
    if isinstance(written, Junction) and isinstance(condition, Conjunction):
        joint = " && " if isinstance(condition, AndConjunction) else " || "
        items = zip(condition.components, written.items, strict=True)
        return "(" + joint.join(_as_written(c, item) for c, item in items) + ")"
    return str(condition)


def _is_branch(condition: Any, branch: tuple[str, Any]) -> bool:
    return (
        isinstance(condition, EqualsCondition)
        and (condition.parent.name, condition.value) == branch
    )


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
