"""The ``when:`` and ``forbidden:`` mini-language: parsing and name resolution.

``when: {kernel: [rbf, sigmoid]}`` (in), ``{kernel: rbf}`` (equals), ``{degree: {gt: 3}}``
(range; ops eq, ne, in, gt, lt), several keys = all of them, ``{any: [...]}`` /
``{all: [...]}`` for or/and. Names resolve from the innermost scope outwards, then as
flat names, then as an unambiguous local name.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from ensembo.spaces.options import NULL_CHOICE, option_name, yaml_bool_hint
from ensembo.spaces.problems import Problems
from ensembo.spaces.reachability import values_required, when_clauses, when_conjuncts
from ensembo.spaces.spec import (
    COMPARISONS,
    NOTHING_REFUSED,
    RELATIONS,
    SEPARATOR,
    Compare,
    Condition,
    Junction,
    Param,
    Refused,
    Relation,
    Unparsed,
)

JUNCTIONS = ("all", "any")
UNKNOWN = "unknown hyperparameter"  # a forbidden clause's name: it is no condition's parent
NUMERIC_KINDS = ("float", "int")
SCALARS = (str, int, float, bool)
VALUES = (*SCALARS, type(None))  # null is checked once the parent is known, to name its values
SHOWN_NAMES = 10  # known names listed when a reference is unknown; more would drown the line


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
    return _compare(parent, "eq", raw, path, problems, written=False)


def _compare(
    parent: str, op: str, value: Any, path: str, problems: Problems, written: bool = True
) -> list[Condition]:
    """``parent op value``; ``written`` is False for the short forms (a value, a list),
    whose messages must not name an operator the user never wrote."""
    if op == "in":
        values = value if isinstance(value, list) else []
        if not values or not all(isinstance(v, VALUES) for v in values):
            problems.add(path, _bad_list(parent, value, written))
            return []
        return [Compare(parent=parent, op="in", value=tuple(value), path=path)]
    if not isinstance(value, VALUES):
        problems.add(path, f"'{op}' takes a single value, got {value!r}")
        return []
    if op in ("gt", "lt", "ge", "le") and (  # a string may be an ordinal's value
        isinstance(value, bool) or not isinstance(value, int | float | str)
    ):
        problems.add(path, f"'{op}' needs a number or a value of an ordinal, got {value!r}")
        return []
    return [Compare(parent=parent, op=op, value=value, path=path)]


def _bad_list(parent: str, value: Any, written: bool) -> str:
    if written:
        return f"'in' takes a non-empty list of values, got {value!r}"
    return (
        f"a list for {parent!r} holds the values it may take (strings, numbers, booleans), "
        f"got {value!r}"
    )


def candidates(reference: str, scope: str, params: Sequence[Param | Unparsed]) -> list[str]:
    """The flat names ``reference`` may mean when written in ``scope``: one when it
    resolves, several when it is a local name used in several places, none when unknown."""
    names = {p.name for p in params}
    for name in scoped_names(reference, scope):
        if name in names:
            return [name]
    return [p.name for p in params if p.local == reference]


def scoped_names(reference: str, scope: str) -> list[str]:
    """The flat names ``reference`` written in ``scope`` is tried as, innermost scope
    first: ``scope + reference``, then each enclosing scope's, then ``reference``."""
    names, prefix = [], scope
    while True:
        names.append(prefix + reference)
        if not prefix:
            return names
        # drop the innermost "choice:option:" pair
        parts = prefix.rstrip(SEPARATOR).split(SEPARATOR)
        prefix = SEPARATOR.join(parts[:-2]) + SEPARATOR if len(parts) > 2 else ""


def _resolved(
    reference: str,
    scope: str,
    params: list[Param],
    refused: Refused,
    report: Callable[[str], None],
    missing: str,
) -> str | None:
    """The flat name ``reference`` means when written in ``scope``, or None: reported
    (by ``report``) when it names nothing or is ambiguous, silently when it names a
    refused hyperparameter or one under a refused choice or option. Decided on the
    name it resolves to, or, when it resolves to none, on the names it was tried as:
    a valid ``kernel`` of this scope is checked even when a top-level one was refused."""
    written = [*params, *refused.params]
    found = candidates(reference, scope, written)
    tried = found if len(found) == 1 else [] if found else scoped_names(reference, scope)
    if any(refused.hides(name) for name in tried):
        return None
    if len(found) != 1:  # ambiguous among all written; else unknown: list the usable ones
        report(unresolved(reference, scope, written if found else params, missing))
        return None
    return found[0]


def unresolved(
    reference: str, scope: str, params: Sequence[Param | Unparsed], missing: str
) -> str:
    """Why ``reference`` resolves to no single hyperparameter: ambiguous (listing the flat
    names it may mean, to write instead) or missing (``missing``, close matches and the
    first known names: a large space has hundreds)."""
    found = candidates(reference, scope, params)
    if len(found) > 1:
        return f"{reference!r} is ambiguous: it may mean {', '.join(found)}; write the full name"
    close = close_names(reference, scope, params)
    hint = f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""
    return f"{missing} {reference!r}{hint}; known hyperparameters: {_known(params)}"


def close_names(reference: str, scope: str, params: Sequence[Param | Unparsed]) -> list[str]:
    """Names close to ``reference`` (flat or local), as they may be written in ``scope``: a
    local name that would be ambiguous there is replaced by its flat names."""
    names = list(dict.fromkeys([p.name for p in params] + [p.local for p in params]))
    close = []
    for match in difflib.get_close_matches(reference, names, n=3, cutoff=0.75):
        found = candidates(match, scope, params)
        close.extend([match] if len(found) == 1 else found)
    return list(dict.fromkeys(close))[:3]


def _known(params: Sequence[Param | Unparsed]) -> str:
    """The first known flat names, outer scopes first, and how many more there are."""
    names = sorted((p.name for p in params), key=lambda name: name.count(SEPARATOR))
    shown = ", ".join(names[:SHOWN_NAMES])
    more = len(names) - SHOWN_NAMES
    return f"{shown} (and {more} more)" if more > 0 else shown


def resolve_condition(
    condition: Condition,
    scope: str,
    params: list[Param],
    problems: Problems,
    missing: str = "condition on missing parent",
    refused: Refused = NOTHING_REFUSED,
) -> Condition | None:
    """``condition`` with parent references replaced by flat names and values of a
    choice by option names (None on failure); ``missing`` starts the message for an
    unknown name; a reference to what was ``refused`` (a hyperparameter, or an option as
    a choice's value) fails without a message."""
    if isinstance(condition, Junction):
        items = [
            resolve_condition(item, scope, params, problems, missing, refused)
            for item in condition.items
        ]
        if any(item is None for item in items):
            return None
        return attrs.evolve(condition, items=tuple(items))
    name = _resolved(
        condition.parent, scope, params, refused,
        lambda message: problems.add(condition.path, message), missing,
    )
    if name is None:
        return None
    parent = next(p for p in params if p.name == name)
    mistyped = _numeric_mismatch(condition, parent)
    if mistyped:
        problems.add(condition.path, mistyped)
        return None
    written = condition.value
    if parent.kind == "choice":  # option names are strings even when written as numbers
        value = written
        if condition.op == "in":
            value = tuple(option_name(v) for v in value)
        elif condition.op in ("eq", "ne"):
            value = option_name(value)
        condition = attrs.evolve(condition, value=value)
    condition = attrs.evolve(condition, parent=name)
    never_taken = _illegal_values(condition, parent)
    illegal = [value for value in never_taken if (name, value) not in refused.options]
    if never_taken and not illegal:  # only refused options, reported where written
        return None
    if illegal:
        hint = "".join({yaml_bool_hint(v) for v in _values(written)} - {""})
        if None in illegal and NULL_CHOICE in parent.choices:
            hint += ' (the choice null is named "null": quote it)'
        problems.add(
            condition.path,
            f"{', '.join(map(_shown, illegal))} {'is' if len(illegal) == 1 else 'are'} not "
            f"{'a value' if len(illegal) == 1 else 'values'} of {name!r}; legal values: "
            f"{', '.join(map(repr, parent.choices))}{hint}",
        )
        return None
    return condition


def _values(value: Any) -> tuple:
    return tuple(value) if isinstance(value, list | tuple) else (value,)


def _shown(value: Any) -> str:
    """``value`` as written in YAML or JSON when Python spells it differently."""
    return "null" if value is None else repr(value)


def _numeric_mismatch(condition: Compare, parent: Param) -> str:
    """Why a numeric parent never equals the strings, booleans or nulls it is compared
    with (ConfigSpace would only call them illegal values and give the range)."""
    wrong = [v for v in _values(condition.value) if v is None or isinstance(v, bool | str)]
    if parent.kind not in NUMERIC_KINDS or not wrong:
        return ""
    integer = parent.kind == "int"
    kind = "an integer" if integer else "a number"
    found = ", ".join(_kind_of(v) for v in wrong)
    message = f"{parent.name!r} is {kind} in [{parent.low}, {parent.high}], but {found}"
    unquoted = [_unquoted(v, integer) for v in wrong]
    if all(unquoted):
        message += f": write {', '.join(unquoted)} unquoted"
    return message


def _kind_of(value: Any) -> str:
    if value is None:
        return "null is no number"
    if isinstance(value, bool):
        return f"{str(value).lower()} is a boolean"
    return f"{value!r} is a string"


def _unquoted(value: Any, integer: bool) -> str:
    """The number a string spells, as it should be written (empty if it spells none)."""
    try:
        number = float(value) if isinstance(value, str) else math.nan
    except ValueError:
        return ""
    if not math.isfinite(number) or (integer and not number.is_integer()):
        return ""
    return str(int(number)) if integer else value.strip()


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
    raw: Any, path: str, params: list[Param], problems: Problems,
    refused: Refused = NOTHING_REFUSED,
) -> list[tuple[Compare, ...] | Relation]:
    """``forbidden: [{a: 1, b: [x, y]}, {relation: "a > b"}, ...]``: each mapping forbids
    that combination of values, each ``relation`` that relation between two
    hyperparameters (``<``, ``>`` or ``==``); an entry naming what was ``refused`` is
    dropped without a message of its own."""
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
            relation = _relation(entry, where, params, problems, refused)
            if relation is not None:
                clauses.append(relation)
            continue
        compares = []
        for key, value in entry.items():
            for compare in _forbidden_value(str(key), value, f"{where}.{key}", problems):
                resolved = resolve_condition(compare, "", params, problems, UNKNOWN, refused)
                if resolved is not None:
                    compares.append(resolved)
        if len(compares) == len(entry):
            clash = _never_together(compares, params)
            if clash:
                problems.add(where, f"this combination can never occur: {clash}")
                continue
            clauses.append(tuple(compares))
    return clauses


def _never_together(compares: list[Compare], params: list[Param]) -> str:
    """Why a forbidden clause can never match, from the tree alone ('' if it can): its
    hyperparameters need options of one choice that exclude each other (``depth`` of
    option ``rf`` with ``classifier: svm``). Such a clause forbids nothing, silently."""
    by_name = {p.name: p for p in params}
    needed: dict[str, tuple[set[str], str]] = {}  # choice -> (allowed options, why)

    def need(choice: str, options: set[str], why: str) -> str:
        allowed, reason = needed.get(choice, (None, ""))
        if allowed is not None and not allowed & options:
            return f"{reason}, but {why}"
        needed[choice] = (options if allowed is None else allowed & options, why)
        return ""

    for compare in compares:
        param = by_name[compare.parent]
        if param.kind in ("choice", "categorical"):
            values = set(compare.value) if compare.op == "in" else {compare.value}
            if param.kind == "choice":
                values = {str(v) for v in values}
            clash = need(param.name, values, f"the clause asks "
                         f"{param.name} in {sorted(map(str, values))}")
            if clash:
                return clash
        for choice, options, why in _activity_needs(param, by_name):
            clash = need(choice, set(options), f"{param.name} is active only when {why}")
            if clash:
                return clash
    return ""


def _activity_needs(param: Param, by_name: dict[str, Param]) -> list[tuple[str, Any, str]]:
    """(choice or categorical, values it must take, in words) for ``param`` to be active:
    its options up the tree, and what the ``when`` of it and of every parent it reads
    require (``gamma`` with ``when: {kernel: rbf}`` needs ``kernel`` to be ``rbf``)."""
    found, seen, todo = [], set(), [param.name]
    while todo:
        current = by_name[todo.pop()]
        if current.name in seen:
            continue
        seen.add(current.name)
        if current.branch is not None:
            choice, option = current.branch
            found.append((choice, {option}, f"{choice} is {option!r}"))
            todo.append(choice)
        for clause in when_clauses(current.when):
            for parent, values in values_required(clause, by_name).items():
                found.append((parent, values, f"{parent} is in {sorted(map(str, values))}"))
        todo.extend(compare.parent for compare in when_conjuncts(current.when))
    return found


def _forbidden_value(name: str, value: Any, path: str, problems: Problems) -> list[Compare]:
    """A forbidden entry's ``name: value`` (equals) or ``name: [values]`` (in): ConfigSpace
    forbids values, not comparisons."""
    if isinstance(value, Mapping):
        problems.add(
            path,
            f"forbidden clauses take values, not comparisons: write {{{name}: VALUE}} or "
            f"{{{name}: [VALUES]}} listing the values to forbid (got {value!r}); a relation "
            'between two hyperparameters is {relation: "left OP right"}',
        )
        return []
    op = "in" if isinstance(value, list) else "eq"
    return _compare(name, op, value, path, problems, written=False)


def _relation(
    entry: Mapping, path: str, params: list[Param], problems: Problems, refused: Refused
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
    names = [
        _resolved(side, "", params, refused, lambda message: problems.add(where, message),
                  UNKNOWN)
        for side in (parts[0], parts[2])
    ]
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
