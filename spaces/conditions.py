"""The ``when:`` and ``forbidden:`` mini-language: parsing and name resolution.

``when: {kernel: [rbf, sigmoid]}`` (in), ``{kernel: rbf}`` (equals), ``{degree: {gt: 3}}``
(range; ops eq, ne, in, gt, lt), several keys = all of them, ``{any: [...]}`` /
``{all: [...]}`` for or/and. Names resolve from the innermost scope outwards, then as
flat names, then as an unambiguous local name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from ensembo.spaces.options import option_name, yaml_bool_hint
from ensembo.spaces.problems import Problems
from ensembo.spaces.spec import (
    COMPARISONS,
    RELATIONS,
    SEPARATOR,
    Compare,
    Condition,
    Junction,
    Param,
    Relation,
)

JUNCTIONS = ("all", "any")
NUMERIC_KINDS = ("float", "int")
SCALARS = (str, int, float, bool)


def parse_condition(raw: Any, path: str, problems: Problems) -> Condition | None:
    if not isinstance(raw, Mapping) or not raw:
        problems.add(path, f"a condition is a non-empty mapping {{parent: value}}, got {raw!r}")
        return None
    items: list[Condition] = []
    for key, value in raw.items():
        where = f"{path}.{key}"
        if key in JUNCTIONS:
            items.extend(_junction(key, value, where, problems))
        else:
            items.extend(_comparisons(str(key), value, where, problems))
    if not items:
        return None
    return items[0] if len(items) == 1 else Junction(kind="all", items=tuple(items), path=path)


def _junction(kind: str, raw: Any, path: str, problems: Problems) -> list[Condition]:
    if not isinstance(raw, list) or len(raw) < 2:
        problems.add(path, f"'{kind}' takes a list of at least two conditions, got {raw!r}")
        return []
    parsed = [parse_condition(item, f"{path}[{i}]", problems) for i, item in enumerate(raw)]
    parsed = [item for item in parsed if item is not None]
    return [Junction(kind=kind, items=tuple(parsed), path=path)] if len(parsed) == len(raw) else []


def _comparisons(parent: str, raw: Any, path: str, problems: Problems) -> list[Condition]:
    if isinstance(raw, list):
        return _compare(parent, "in", raw, path, problems)
    if isinstance(raw, Mapping):
        unknown = sorted(set(raw) - set(COMPARISONS))
        if unknown or not raw:
            problems.add(
                path, f"unknown comparison {unknown or '{}'}; valid: {', '.join(COMPARISONS)}"
            )
            return []
        found = []
        for op, value in raw.items():
            found.extend(_compare(parent, op, value, f"{path}.{op}", problems))
        return found
    return _compare(parent, "eq", raw, path, problems)


def _compare(parent: str, op: str, value: Any, path: str, problems: Problems) -> list[Condition]:
    if op == "in":
        if (
            not isinstance(value, list)
            or not value
            or not all(isinstance(v, SCALARS) for v in value)
        ):
            problems.add(path, f"'in' takes a non-empty list of values, got {value!r}")
            return []
        return [Compare(parent=parent, op="in", value=tuple(value), path=path)]
    if not isinstance(value, SCALARS):
        problems.add(path, f"'{op}' takes a single value, got {value!r}")
        return []
    if op in ("gt", "lt", "ge", "le") and (
        isinstance(value, bool) or not isinstance(value, int | float)
    ):
        problems.add(path, f"'{op}' needs a number, got {value!r}")
        return []
    return [Compare(parent=parent, op=op, value=value, path=path)]


def candidates(reference: str, scope: str, params: list[Param]) -> list[str]:
    """The flat names ``reference`` may mean when written in ``scope``: one when it
    resolves, several when it is a local name used in several places, none when unknown."""
    names = {p.name for p in params}
    prefix = scope
    while True:
        if prefix + reference in names:
            return [prefix + reference]
        if not prefix:
            break
        # drop the innermost "choice:option:" pair
        parts = prefix.rstrip(SEPARATOR).split(SEPARATOR)
        prefix = SEPARATOR.join(parts[:-2]) + SEPARATOR if len(parts) > 2 else ""
    return [p.name for p in params if p.local == reference]


def resolve_name(reference: str, scope: str, params: list[Param]) -> str | None:
    """The flat name ``reference`` means when written in ``scope``, or None."""
    found = candidates(reference, scope, params)
    return found[0] if len(found) == 1 else None


def unresolved(reference: str, scope: str, params: list[Param], missing: str) -> str:
    """Why ``reference`` resolves to no single hyperparameter: ambiguous (listing the flat
    names it may mean, to write instead) or missing (``missing`` and the known names)."""
    found = candidates(reference, scope, params)
    if len(found) > 1:
        return f"{reference!r} is ambiguous: it may mean {', '.join(found)}; write the full name"
    known = ", ".join(p.name for p in params)
    return f"{missing} {reference!r}; known hyperparameters: {known}"


def resolve_condition(
    condition: Condition, scope: str, params: list[Param], problems: Problems
) -> Condition | None:
    """``condition`` with parent references replaced by flat names and values of a
    choice by option names (None on failure)."""
    if isinstance(condition, Junction):
        items = [resolve_condition(item, scope, params, problems) for item in condition.items]
        if any(item is None for item in items):
            return None
        return attrs.evolve(condition, items=tuple(items))
    name = resolve_name(condition.parent, scope, params)
    if name is None:
        problems.add(
            condition.path,
            unresolved(condition.parent, scope, params, "condition on missing parent"),
        )
        return None
    parent = next(p for p in params if p.name == name)
    written = condition.value
    if parent.kind == "choice":  # option names are strings even when written as numbers
        value = written
        if condition.op == "in":
            value = tuple(option_name(v) for v in value)
        elif condition.op in ("eq", "ne"):
            value = option_name(value)
        condition = attrs.evolve(condition, value=value)
    condition = attrs.evolve(condition, parent=name)
    illegal = _illegal_values(condition, parent)
    if illegal:
        hint = "".join({yaml_bool_hint(v) for v in _values(written)} - {""})
        problems.add(
            condition.path,
            f"{', '.join(map(repr, illegal))} {'is' if len(illegal) == 1 else 'are'} not "
            f"{'a value' if len(illegal) == 1 else 'values'} of {name!r}; legal values: "
            f"{', '.join(map(repr, parent.choices))}{hint}",
        )
        return None
    return condition


def _values(value: Any) -> tuple:
    return tuple(value) if isinstance(value, list | tuple) else (value,)


def _illegal_values(condition: Compare, parent: Param) -> list[Any]:
    """Values an equality test compares a categorical-like parent with that it never
    takes; checked here so they are reported with the other problems, listing the legal
    ones (ConfigSpace only says "illegal value", and only at compile time)."""
    if parent.kind in NUMERIC_KINDS or condition.op not in ("eq", "ne", "in"):
        return []
    return [
        value
        for value in _values(condition.value)
        if not any(
            choice == value and isinstance(choice, bool) == isinstance(value, bool)
            for choice in parent.choices
        )
    ]


def parse_forbidden(
    raw: Any, path: str, params: list[Param], problems: Problems
) -> list[tuple[Compare, ...] | Relation]:
    """``forbidden: [{a: 1, b: [x, y]}, {relation: "a > b"}, ...]``: each mapping forbids
    that combination of values, each ``relation`` that relation between two
    hyperparameters (``<``, ``>`` or ``==``)."""
    if not isinstance(raw, list):
        problems.add(path, f"'forbidden' is a list of {{name: value}} mappings, got {raw!r}")
        return []
    clauses: list[tuple[Compare, ...] | Relation] = []
    for index, entry in enumerate(raw):
        where = f"{path}[{index}]"
        if not isinstance(entry, Mapping) or not entry:
            problems.add(
                where, f"a forbidden combination is a mapping {{name: value}}, got {entry!r}"
            )
            continue
        if "relation" in entry and not any(p.name == "relation" for p in params):
            relation = _relation(entry, where, params, problems)
            if relation is not None:
                clauses.append(relation)
            continue
        compares = []
        for key, value in entry.items():
            op = "in" if isinstance(value, list) else "eq"
            parsed = _compare(str(key), op, value, f"{where}.{key}", problems)
            for compare in parsed:
                resolved = resolve_condition(compare, "", params, problems)
                if resolved is not None:
                    compares.append(resolved)
        if len(compares) == len(entry):
            clauses.append(tuple(compares))
    return clauses


def _relation(
    entry: Mapping, path: str, params: list[Param], problems: Problems
) -> Relation | None:
    """``{relation: "left > right"}`` with both sides resolved to flat names."""
    where = f"{path}.relation"
    if len(entry) != 1:
        others = sorted(str(key) for key in entry if key != "relation")
        problems.add(path, f"a relation stands alone in its entry; move {others} to another")
        return None
    text = entry["relation"]
    parts = text.split() if isinstance(text, str) else []
    if len(parts) != 3 or parts[1] not in RELATIONS:
        problems.add(
            where,
            f"a relation is 'left OP right' with OP one of {' '.join(RELATIONS)}, got {text!r}",
        )
        return None
    names = [resolve_name(side, "", params) for side in (parts[0], parts[2])]
    for side, name in zip((parts[0], parts[2]), names, strict=True):
        if name is None:
            problems.add(where, unresolved(side, "", params, "relation on missing hyperparameter"))
    if None in names:
        return None
    if names[0] == names[1]:
        problems.add(where, f"a relation needs two different hyperparameters, got {text!r}")
        return None
    kinds = {p.name: p.kind for p in params}
    numeric = [kinds[name] in NUMERIC_KINDS for name in names]
    if not all(numeric) and (parts[1] != "==" or any(numeric)):
        problems.add(
            where,
            f"{text!r} relates {kinds[names[0]]} {names[0]!r} and {kinds[names[1]]} "
            f"{names[1]!r}: '<' and '>' need two numeric hyperparameters, '==' two numeric "
            "or two non-numeric ones",
        )
        return None
    return Relation(left=names[0], op=RELATIONS[parts[1]], right=names[1], path=where)
