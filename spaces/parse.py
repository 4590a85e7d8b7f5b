"""DSL document (a plain dict) -> :class:`SpaceSpec`, collecting every problem.

Structure checks live here (unknown keys, types, empty ranges, log over non-positive
bounds, defaults outside ranges, unresolvable or cyclic conditions); what only
ConfigSpace or the estimator classes can tell is checked in ``compile.py`` and
``check_components.py``; estimator components and steps are read by
``parse_components.py``, impute rules by ``parse_impute.py``.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from typing import Any

import attrs

from ensembo.spaces import impute
from ensembo.spaces.bounds import exact_integer_bounds, storable_float_bounds
from ensembo.spaces.conditions import (
    JUNCTIONS,
    SCALARS,
    parse_condition,
    parse_forbidden,
    resolve_condition,
)
from ensembo.spaces.options import NULL_CHOICE, option_name, option_pairs, yaml_bool_hint
from ensembo.spaces.parse_components import COMPONENT_KEYS, parse_component, parse_steps
from ensembo.spaces.parse_impute import without_mistyped_rules, written_rule
from ensembo.spaces.problems import Problems, unknown_keys
from ensembo.spaces.quantize import grid_problem, step_problem, whole_step
from ensembo.spaces.reachability import report_never_active
from ensembo.spaces.spec import (
    SEPARATOR,
    Option,
    Param,
    Refused,
    SpaceSpec,
    Unparsed,
    parents,
)

TOP_KEYS = (
    "name",
    "description",
    "impute",
    "params",
    "forbidden",
    "steps",
    "categorical_steps",
    *COMPONENT_KEYS,
)
COMMON_KEYS = ("type", "when", "impute", "description")
TYPE_KEYS = {
    "float": ("low", "high", "log", "default", "q"),
    "int": ("low", "high", "log", "default", "q"),
    "categorical": ("choices", "default", "weights"),
    "bool": ("default",),
    "ordinal": ("sequence", "default"),
    "constant": ("value",),
    "choice": ("options", "default"),
}
PARAM_KEYS = {*COMMON_KEYS, *(key for keys in TYPE_KEYS.values() for key in keys)}


def parse(document: Any, source: str = "") -> tuple[SpaceSpec | None, Problems]:
    """Parse ``document``; returns the spec (None if unusable) and the problems found."""
    problems = Problems(source)
    if not isinstance(document, Mapping):
        found = "an empty document" if document is None else type(document).__name__
        problems.add("", f"a space document is a mapping with 'params', got {found}")
        return None, problems
    unknown_keys(document, TOP_KEYS, "", problems)
    parser = _Parser(problems)
    raw_params = document.get("params")
    if not isinstance(raw_params, Mapping) or not raw_params:
        problems.add("params", "a space needs a non-empty 'params' mapping of hyperparameters")
        raw_params = {}
    parser.scope(raw_params, "", "params", None)
    params = parser.resolve()
    space_rule = written_rule(document.get("impute", impute.DEFAULT_RULE), "impute", problems)
    params, space_rule = without_mistyped_rules(params, space_rule, problems)
    refused = parser.refused
    steps = tuple(parse_steps(document.get("steps", []), params, problems, refused=refused))
    categorical_steps = tuple(
        parse_steps(
            document.get("categorical_steps", []), params, problems, key="categorical_steps",
            refused=refused,
        )
    )
    shared = {s.param for s in steps if s.param} & {s.param for s in categorical_steps}
    for step in categorical_steps:
        if step.param in shared:
            problems.add(step.path, f"choice {step.param!r} is already a step of 'steps'")
    for key in ("name", "description"):
        if key in document and not isinstance(document[key], str):
            problems.add(key, f"must be a string, got {document[key]!r}")
    spec = SpaceSpec(
        name=str(document.get("name") or source or "space"),
        description=str(document.get("description", "")),
        impute=space_rule,
        params=tuple(params),
        forbidden=tuple(
            parse_forbidden(
                document.get("forbidden", []), "forbidden", params, problems, refused
            )
        ),
        steps=steps,
        categorical_steps=categorical_steps,
        component=parse_component(document, "", problems),
        refused=refused,
    )
    return spec, problems


def _option_hint(written: Any, names: tuple[str, ...]) -> str:
    """Why a choice's ``default`` written as a boolean or null names no option."""
    if written is None and NULL_CHOICE in names:
        return ' (the option null is named "null": quote it)'
    return yaml_bool_hint(written)


def _with_null_choice(raw: Mapping) -> dict[str, Any]:
    """A categorical with a ``null`` choice, which ConfigSpace cannot hold: the choice is
    named ``"null"`` (in conditions and defaults too) and passes None to the estimator."""
    choices = [NULL_CHOICE if value is None else value for value in raw["choices"]]
    default = raw.get("default", ...)
    return {**raw, "choices": choices, **({"default": NULL_CHOICE} if default is None else {})}


def _number(raw: Mapping, key: str, path: str, problems: Problems, integer: bool) -> Any:
    value = raw.get(key)
    wanted = int if integer else int | float
    if isinstance(value, bool) or not isinstance(value, wanted):
        kind = "an integer" if integer else "a number"
        if key not in raw:  # "got None" read as if a null had been written
            problems.add(f"{path}.{key}", f"'{key}' is missing: give {kind}")
            return None
        hint = f" (write {int(value)})" if isinstance(value, float) and value.is_integer() else ""
        problems.add(f"{path}.{key}", f"'{key}' must be {kind}, got {value!r}{hint}")
        return None
    return value


def _option_name_ok(option: str, path: str, problems: Problems) -> bool:
    """An option name joins flat names (``choice:option:param``), so it must not hold the
    separator: ``svm:kernel:rbf`` would give flat names that collide with nested ones."""
    if option and SEPARATOR not in option:
        return True
    problems.add(path, f"option names are non-empty and without {SEPARATOR!r}, got {option!r}")
    return False


def _unknown_type(kind: Any) -> str:
    """``kind`` is no type: with the type a misspelt name is close to (``categoric``)."""
    written = kind if isinstance(kind, str) else ""  # a list or mapping is close to no name
    close = difflib.get_close_matches(written, TYPE_KEYS, n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown type {kind!r}{hint}; use one of {', '.join(TYPE_KEYS)}"


def _without_type(body: Any) -> str:
    """Why ``body`` is no hyperparameter, naming a key that looks like a misspelt 'type'."""
    expected = f"a hyperparameter is a mapping with 'type' (one of {', '.join(TYPE_KEYS)})"
    if isinstance(body, Mapping):
        for key in body:
            if difflib.get_close_matches(str(key), ("type",), n=1, cutoff=0.75):
                return f"unknown key {key!r}; did you mean 'type'? ({expected})"
    return f"{expected}, got {body!r}"


def _misspelt_option_key(key: str, body: Any, path: str, problems: Problems) -> bool:
    """Report ``key`` if it looks like a misspelt option key, not a hyperparameter missing
    its 'type' (``n_estimators: {low: 1, high: 9}``): an ``estimater:`` was reported as a
    hyperparameter without 'type'."""
    if isinstance(body, Mapping) and any(key in PARAM_KEYS for key in body):
        return False
    close = difflib.get_close_matches(key, (*COMPONENT_KEYS, "description"), n=1, cutoff=0.75)
    if close:
        problems.add(path, f"unknown key {key!r}; did you mean {close[0]!r}?")
    return bool(close)


class _Parser:
    """Walks nested ``params`` scopes, then resolves conditions once all names are known."""

    def __init__(self, problems: Problems):
        self.problems = problems
        self.params: list[Param] = []
        self.unparsed: list[Unparsed] = []  # refused, each with its own problems reported
        self.refused_options: list[tuple[str, str]] = []  # (choice, option), likewise
        self.refused = Refused()  # both, once the walk is done (set by resolve)

    def scope(self, raw: Mapping, scope: str, path: str, branch: tuple[str, str] | None) -> None:
        for local, body in raw.items():
            where = f"{path}.{local}"
            if not isinstance(local, str) or not local or SEPARATOR in local:
                self.problems.add(
                    where, f"hyperparameter names are non-empty and without {SEPARATOR!r}"
                )
                continue
            if local in JUNCTIONS:  # `when: {any: [...]}` could never name it
                self.problems.add(where, f"{local!r} cannot name a hyperparameter: in 'when' it "
                                  "joins conditions (any: or, all: and); rename it")
                continue
            if not isinstance(body, Mapping) or "type" not in body:
                if branch is not None and _misspelt_option_key(local, body, where, self.problems):
                    continue
                self.problems.add(where, _without_type(body))
                self.unparsed.append(Unparsed(name=scope + local, local=local))
                continue
            if not self.param(local, body, scope, where, branch):
                self.unparsed.append(Unparsed(name=scope + local, local=local))

    def param(self, local: str, raw: Mapping, scope: str, path: str, branch) -> bool:
        """Parse one hyperparameter; False when it is refused (its problems reported)."""
        kind = raw["type"]
        if not isinstance(kind, str) or kind not in TYPE_KEYS:  # a list is not hashable
            self.problems.add(f"{path}.type", _unknown_type(kind))
            return False
        unknown_keys(raw, COMMON_KEYS + TYPE_KEYS[kind], path, self.problems)
        fields: dict[str, Any] = {
            "name": scope + local,
            "local": local,
            "scope": scope,
            "kind": kind,
            "path": path,
            "branch": branch,
            "description": str(raw.get("description", "")),
            "impute": written_rule(raw["impute"], f"{path}.impute", self.problems)
            if "impute" in raw
            else None,
            "when": parse_condition(raw["when"], f"{path}.when", self.problems)
            if "when" in raw
            else None,
        }
        parsed = getattr(self, f"_{kind}")(raw, path, fields)
        if parsed is not None:
            self.params.append(Param(**parsed))
        return parsed is not None

    def _float(self, raw, path, fields, integer=False):
        low = _number(raw, "low", path, self.problems, integer)
        high = _number(raw, "high", path, self.problems, integer)
        if low is None or high is None:
            return None
        if not (math.isfinite(low) and math.isfinite(high)):
            return None  # named as no finite number already: its range would say it again
        if low >= high:
            self.problems.add(path, f"empty range: low {low!r} must be below high {high!r}")
            return None
        log = raw.get("log", False)
        if not isinstance(log, bool):
            self.problems.add(f"{path}.log", f"'log' is true or false, got {log!r}")
        elif log and low <= 0:
            self.problems.add(f"{path}.low", f"log scale needs low > 0, got {low!r}")
            return None
        if not integer and not storable_float_bounds(low, high, log is True, path, self.problems):
            return None
        if integer and not exact_integer_bounds(low, high, path, self.problems):
            return None
        q = None
        if "q" in raw:  # a whole number for an int (2.0 is 2), as in a ConfigSpace meta
            q = _number(raw, "q", path, self.problems, integer=False)
            problem = None if q is None else step_problem(q, low, high, integer)
            if problem:
                self.problems.add(f"{path}.q", problem)
                q = None
            elif integer:
                q = whole_step(q)
        default = None
        if "default" in raw:
            default = _number(raw, "default", path, self.problems, integer)
            if default is not None and not low <= default <= high:
                self.problems.add(
                    f"{path}.default", f"default {default!r} is outside [{low}, {high}]"
                )
                default = None
        if default is not None and q is not None:
            default = self._on_grid(default, low, high, q, f"{path}.default")
        return {**fields, "low": low, "high": high, "log": bool(log), "q": q, "default": default}

    def _on_grid(self, default, low, high, q, path):
        """``default`` if it lies on the grid ``low + k * q``, else None, reported with the
        document's other problems (it was a second-round problem, hidden by any other)."""
        off_grid = grid_problem(default, low, high, q)
        if off_grid:
            self.problems.add(path, off_grid)
            return None
        return default

    def _int(self, raw, path, fields):
        return self._float(raw, path, fields, integer=True)

    def _values(self, raw, key, path) -> tuple | None:
        values = raw.get(key)
        if key not in raw:
            self.problems.add(f"{path}.{key}", f"'{key}' is missing: give a non-empty list")
            return None
        if not isinstance(values, list) or not values:
            self.problems.add(f"{path}.{key}", f"'{key}' must be a non-empty list, got {values!r}")
            return None
        if not all(isinstance(v, SCALARS) for v in values) or len(set(map(repr, values))) != len(
            values
        ):
            self.problems.add(
                f"{path}.{key}", f"'{key}' must hold distinct scalars, got {values!r}"
            )
            return None
        return tuple(values)

    def _default_in(self, raw, values, path, hint=""):
        if "default" not in raw:
            return None
        if raw["default"] not in values or not any(type(v) is type(raw["default"]) for v in values):
            shown = "null" if raw["default"] is None else repr(raw["default"])  # as written
            self.problems.add(
                f"{path}.default", f"default {shown} is not one of {list(values)}{hint}"
            )
            return None
        return raw["default"]

    def _categorical(self, raw, path, fields):
        if isinstance(raw.get("choices"), list) and None in raw["choices"]:
            raw = _with_null_choice(raw)
            fields = {**fields, "null_choice": True}
        choices = self._values(raw, "choices", path)
        if choices is None:
            return None
        weights = raw.get("weights")
        if weights is not None:
            valid = isinstance(weights, list) and len(weights) == len(choices)
            if (
                not valid
                or not all(
                    isinstance(w, int | float) and not isinstance(w, bool) and w >= 0
                    for w in weights
                )
                or not sum(weights) > 0
            ):
                self.problems.add(
                    f"{path}.weights",
                    f"weights are {len(choices)} non-negative numbers (not all 0), one per "
                    f"choice, got {weights!r}",
                )
                weights = None
            else:
                weights = tuple(float(w) for w in weights)
        default = self._default_in(raw, choices, path)
        return {**fields, "choices": choices, "default": default, "weights": weights}

    def _bool(self, raw, path, fields):
        default = raw.get("default", True)
        if not isinstance(default, bool):
            self.problems.add(
                f"{path}.default", f"a bool default is true or false, got {default!r}"
            )
            default = True
        return {**fields, "kind": "categorical", "choices": (True, False), "default": default}

    def _ordinal(self, raw, path, fields):
        sequence = self._values(raw, "sequence", path)
        if sequence is None:
            return None
        return {**fields, "choices": sequence, "default": self._default_in(raw, sequence, path)}

    def _constant(self, raw, path, fields):
        value = raw.get("value")
        if not isinstance(value, str | int | float) or isinstance(value, bool):
            self.problems.add(
                f"{path}.value", f"a constant value is a string or number, got {value!r}"
            )
            return None
        return {**fields, "choices": (value,), "default": value}

    def _choice(self, raw, path, fields):
        pairs = option_pairs(raw.get("options"))
        if not pairs:
            self.problems.add(
                f"{path}.options",
                "a choice needs non-empty 'options': a mapping, or a list of one-key mappings",
            )
            return None
        if len({str(k) for k, _ in pairs}) != len(pairs):
            self.problems.add(f"{path}.options", "duplicate option names")
            return None
        name = fields["name"]
        options = []
        for option, body in pairs:
            where = f"{path}.options.{option}"
            option = str(option)
            if not _option_name_ok(option, where, self.problems):
                self.refused_options.append((name, option))
                continue
            body = {} if body is None else body
            if not isinstance(body, Mapping):
                self.problems.add(where, f"an option is a mapping of hyperparameters, got {body!r}")
                self.refused_options.append((name, option))
                continue
            if "description" in body and not isinstance(body["description"], str):
                self.problems.add(  # a hyperparameter of that name would vanish silently
                    f"{where}.description", "an option's description is text; a "
                    "hyperparameter cannot be called 'description'",
                )
            scope = f"{name}{SEPARATOR}{option}{SEPARATOR}"
            hyperparameters = {
                k: v for k, v in body.items() if k not in COMPONENT_KEYS + ("description",)
            }
            self.scope(hyperparameters, scope, where, (name, option))
            options.append(
                Option(
                    name=option,
                    scope=scope,
                    component=parse_component(body, where, self.problems),
                    path=where,
                )
            )
        names = tuple(o.name for o in options)
        default, written = None, raw.get("default")
        # option names are strings even when written as numbers; a refused one is reported
        if "default" in raw and (name, option_name(written)) not in self.refused_options:
            default = self._default_in(
                {"default": option_name(written)}, names, path, _option_hint(written, names)
            )
        return {**fields, "choices": names, "options": tuple(options), "default": default}

    # --- after the walk -----------------------------------------------------------------

    def resolve(self) -> list[Param]:
        resolved, refused = [], Refused(tuple(self.unparsed), tuple(self.refused_options))
        self.refused = refused
        for param in self.params:
            if param.when is not None:
                when = resolve_condition(
                    param.when, param.scope, self.params, self.problems, refused=refused
                )
                if when is not None and param.name in parents(when):
                    self.problems.add(param.when.path, f"{param.name!r} cannot depend on itself")
                    when = None
                param = attrs.evolve(param, when=when)
            resolved.append(param)
        if not self._check_cycles(resolved):
            report_never_active(resolved, self.problems)
        return resolved

    def _check_cycles(self, params: list[Param]) -> bool:
        """Report conditions that form a cycle; True when there is one."""
        found = len(self.problems.items)
        depends = {p.name: parents(p.when) | ({p.branch[0]} if p.branch else set()) for p in params}
        state: dict[str, int] = {}  # 1 = on the stack, 2 = done

        def visit(name: str, trail: list[str]) -> None:
            if state.get(name) == 2 or name not in depends:
                return
            if state.get(name) == 1:
                cycle = trail[trail.index(name) :] + [name]
                param = next(p for p in params if p.name == name)
                self.problems.add(param.path, f"conditions form a cycle: {' -> '.join(cycle)}")
                return
            state[name] = 1
            for parent in sorted(depends[name]):
                visit(parent, trail + [name])
            state[name] = 2

        for param in params:
            visit(param.name, [])
        return len(self.problems.items) > found
