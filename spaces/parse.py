"""DSL document (a plain dict) -> :class:`SpaceSpec`, collecting every problem.

Structure checks live here (unknown keys, types, empty ranges, log over non-positive
bounds, defaults outside ranges, unresolvable or cyclic conditions); what only
ConfigSpace or the estimator classes can tell is checked in ``compile.py`` and
``components.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs
from ensembo.spaces import impute
from ensembo.spaces.conditions import SCALARS, parse_condition, parse_forbidden, resolve_condition
from ensembo.spaces.problems import Problems
from ensembo.spaces.spec import SEPARATOR, Component, Option, Param, SpaceSpec, Step, join, parents

COMPONENT_KEYS = ("estimator", "fixed", "rename", "pack")
TOP_KEYS = ("name", "description", "impute", "params", "forbidden", "steps", *COMPONENT_KEYS)
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


def parse(document: Any, source: str = "") -> tuple[SpaceSpec | None, Problems]:
    """Parse ``document``; returns the spec (None if unusable) and the problems found."""
    problems = Problems(source)
    if not isinstance(document, Mapping):
        problems.add("", f"a space document is a mapping, got {type(document).__name__}")
        return None, problems
    _unknown_keys(document, TOP_KEYS, "", problems)
    parser = _Parser(problems)
    raw_params = document.get("params")
    if not isinstance(raw_params, Mapping) or not raw_params:
        problems.add("params", "a space needs a non-empty 'params' mapping of hyperparameters")
        raw_params = {}
    parser.scope(raw_params, "", "params", None)
    params = parser.resolve()
    space_rule = _rule(document.get("impute", impute.DEFAULT_RULE), "impute", problems)
    spec = SpaceSpec(
        name=str(document.get("name") or source or "space"),
        description=str(document.get("description", "")),
        impute=space_rule,
        params=tuple(params),
        forbidden=tuple(
            parse_forbidden(document.get("forbidden", []), "forbidden", params, problems)
        ),
        steps=tuple(_steps(document.get("steps", []), params, problems)),
        component=_component(document, "", problems),
    )
    return spec, problems


def _unknown_keys(raw: Mapping, valid: tuple[str, ...], path: str, problems: Problems) -> None:
    for key in raw:
        if key not in valid:
            where = f"{path}.{key}" if path else str(key)
            problems.add(where, f"unknown key {key!r}; valid keys: {', '.join(valid)}")


def _rule(raw: Any, path: str, problems: Problems) -> Any:
    try:
        return impute.normalize_rule(raw)
    except ValueError as error:
        problems.add(path, str(error))
        return None


def _number(raw: Mapping, key: str, path: str, problems: Problems, integer: bool) -> Any:
    value = raw.get(key)
    wanted = int if integer else int | float
    if isinstance(value, bool) or not isinstance(value, wanted):
        kind = "an integer" if integer else "a number"
        problems.add(f"{path}.{key}", f"'{key}' must be {kind}, got {value!r}")
        return None
    return value


class _Parser:
    """Walks nested ``params`` scopes, then resolves conditions once all names are known."""

    def __init__(self, problems: Problems):
        self.problems = problems
        self.params: list[Param] = []

    def scope(self, raw: Mapping, scope: str, path: str, branch: tuple[str, str] | None) -> None:
        for local, body in raw.items():
            where = f"{path}.{local}"
            if not isinstance(local, str) or not local or SEPARATOR in local:
                self.problems.add(
                    where, f"hyperparameter names are non-empty and without {SEPARATOR!r}"
                )
                continue
            if not isinstance(body, Mapping) or "type" not in body:
                self.problems.add(
                    where,
                    f"a hyperparameter is a mapping with 'type' (one of {', '.join(TYPE_KEYS)}), "
                    f"got {body!r}",
                )
                continue
            self.param(local, body, scope, where, branch)

    def param(self, local: str, raw: Mapping, scope: str, path: str, branch) -> None:
        kind = raw["type"]
        if kind not in TYPE_KEYS:
            self.problems.add(
                f"{path}.type", f"unknown type {kind!r}; valid: {', '.join(TYPE_KEYS)}"
            )
            return
        _unknown_keys(raw, COMMON_KEYS + TYPE_KEYS[kind], path, self.problems)
        fields: dict[str, Any] = {
            "name": scope + local,
            "local": local,
            "scope": scope,
            "kind": kind,
            "path": path,
            "branch": branch,
            "description": str(raw.get("description", "")),
            "impute": _rule(raw["impute"], f"{path}.impute", self.problems)
            if "impute" in raw
            else None,
            "when": parse_condition(raw["when"], f"{path}.when", self.problems)
            if "when" in raw
            else None,
        }
        parsed = getattr(self, f"_{kind}")(raw, path, fields)
        if parsed is not None:
            self.params.append(Param(**parsed))

    def _float(self, raw, path, fields, integer=False):
        low = _number(raw, "low", path, self.problems, integer)
        high = _number(raw, "high", path, self.problems, integer)
        if low is None or high is None:
            return None
        if low >= high:
            self.problems.add(path, f"empty range: low {low!r} must be below high {high!r}")
            return None
        log = raw.get("log", False)
        if not isinstance(log, bool):
            self.problems.add(f"{path}.log", f"'log' is true or false, got {log!r}")
        elif log and low <= 0:
            self.problems.add(f"{path}.low", f"log scale needs low > 0, got {low!r}")
            return None
        q = None
        if "q" in raw:
            q = _number(raw, "q", path, self.problems, integer)
            if q is not None and not 0 < q <= high - low:
                self.problems.add(
                    f"{path}.q", f"quantization step must be in (0, {high - low}], got {q!r}"
                )
        default = None
        if "default" in raw:
            default = _number(raw, "default", path, self.problems, integer)
            if default is not None and not low <= default <= high:
                self.problems.add(
                    f"{path}.default", f"default {default!r} is outside [{low}, {high}]"
                )
                default = None
        return {**fields, "low": low, "high": high, "log": bool(log), "q": q, "default": default}

    def _int(self, raw, path, fields):
        return self._float(raw, path, fields, integer=True)

    def _values(self, raw, key, path) -> tuple | None:
        values = raw.get(key)
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

    def _default_in(self, raw, values, path):
        if "default" not in raw:
            return None
        if raw["default"] not in values or not any(type(v) is type(raw["default"]) for v in values):
            self.problems.add(
                f"{path}.default", f"default {raw['default']!r} is not one of {list(values)}"
            )
            return None
        return raw["default"]

    def _categorical(self, raw, path, fields):
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
            body = {} if body is None else body
            if not isinstance(body, Mapping):
                self.problems.add(where, f"an option is a mapping of hyperparameters, got {body!r}")
                continue
            scope = f"{name}{SEPARATOR}{option}{SEPARATOR}"
            hyperparameters = {
                k: v for k, v in body.items() if k not in COMPONENT_KEYS + ("description",)
            }
            self.scope(hyperparameters, scope, where, (name, option))
            options.append(
                Option(
                    name=option,
                    scope=scope,
                    component=_component(body, where, self.problems),
                    path=where,
                )
            )
        names = tuple(o.name for o in options)
        if "default" in raw:  # option names are strings even when written as numbers
            raw = {**raw, "default": str(raw["default"])}
        return {
            **fields,
            "choices": names,
            "options": tuple(options),
            "default": self._default_in(raw, names, path),
        }

    # --- after the walk -----------------------------------------------------------------

    def resolve(self) -> list[Param]:
        resolved = []
        for param in self.params:
            if param.when is not None:
                when = resolve_condition(param.when, param.scope, self.params, self.problems)
                if when is not None and param.name in parents(when):
                    self.problems.add(param.when.path, f"{param.name!r} cannot depend on itself")
                    when = None
                param = attrs.evolve(param, when=when)
            resolved.append(param)
        self._check_cycles(resolved)
        return resolved

    def _check_cycles(self, params: list[Param]) -> None:
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


def option_pairs(options: Any) -> list[tuple[Any, Any]] | None:
    """(name, body) of a choice's options, in order: from a mapping or from a list of
    one-key mappings (the stored form, which survives JSON with sorted keys)."""
    if isinstance(options, Mapping):
        return list(options.items())
    if isinstance(options, list) and all(isinstance(o, Mapping) and len(o) == 1 for o in options):
        return [next(iter(o.items())) for o in options]
    return None


def ordered_options(document: Any) -> Any:
    """``document`` with every choice's options as a list of one-key mappings.

    Option order is the order of a categorical's values (its encoding, its default);
    stores that serialize JSON with sorted keys would otherwise reorder them.
    """
    if not isinstance(document, Mapping):
        return document
    result = dict(document)
    if isinstance(document.get("params"), Mapping):
        result["params"] = {k: _ordered_param(v) for k, v in document["params"].items()}
    return result


def _ordered_param(param: Any) -> Any:
    if not isinstance(param, Mapping) or param.get("type") != "choice":
        return param
    pairs = option_pairs(param.get("options"))
    if pairs is None:
        return param
    ordered = []
    for name, body in pairs:
        if isinstance(body, Mapping):
            body = {k: _ordered_param(v) for k, v in body.items()}
        ordered.append({name: body})
    return {**param, "options": ordered}


def _component(raw: Mapping, path: str, problems: Problems) -> Component | None:
    present = [k for k in COMPONENT_KEYS if k in raw]
    if not present:
        return None

    def where(key: str) -> str:
        return join(path, key)

    if "estimator" not in raw:
        problems.add(where(present[0]), f"'{present[0]}' needs an 'estimator' next to it")
        return None
    estimator, by, by_options = raw["estimator"], None, ()
    if isinstance(estimator, Mapping):
        _unknown_keys(estimator, ("by", "options"), where("estimator"), problems)
        by, options = estimator.get("by"), estimator.get("options")
        if not isinstance(by, str) or not isinstance(options, Mapping) or not options:
            problems.add(
                where("estimator"),
                "a switched estimator is {by: CHOICE, options: {OPTION: ESTIMATOR}}",
            )
            return None
        by_options = tuple((str(k), str(v)) for k, v in options.items())
        estimator = None
    elif not isinstance(estimator, str) or not estimator:
        problems.add(
            where("estimator"), f"an estimator is a registry name or dotted path, got {estimator!r}"
        )
        return None
    mappings = {}
    for key in ("fixed", "rename", "pack"):
        value = raw.get(key, {})
        if not isinstance(value, Mapping):
            problems.add(where(key), f"'{key}' is a mapping, got {value!r}")
            value = {}
        mappings[key] = value
    for target, sources in mappings["pack"].items():
        if not isinstance(sources, list) or not all(isinstance(s, str) for s in sources):
            problems.add(
                where(f"pack.{target}"), f"'pack' lists hyperparameter names, got {sources!r}"
            )
    return Component(
        estimator=estimator,
        by=by,
        by_options=by_options,
        fixed=tuple((str(k), v) for k, v in mappings["fixed"].items()),
        rename=tuple((str(k), v) for k, v in mappings["rename"].items()),
        pack=tuple((str(k), tuple(v)) for k, v in mappings["pack"].items() if isinstance(v, list)),
        path=path,
    )


def _steps(raw: Any, params: list[Param], problems: Problems) -> list[Step]:
    if not isinstance(raw, list):
        problems.add("steps", f"'steps' is a list, got {raw!r}")
        return []
    steps, seen = [], set()
    for index, entry in enumerate(raw):
        where = f"steps[{index}]"
        if isinstance(entry, str):
            match = [p for p in params if p.name == entry and p.scope == ""]
            if not match or match[0].kind != "choice":
                choices = [p.name for p in params if p.kind == "choice" and p.scope == ""]
                problems.add(
                    where, f"step {entry!r} must name a top-level choice; choices: {choices}"
                )
                continue
            step = Step(name=entry, param=entry, path=where)
        elif isinstance(entry, Mapping) and len(entry) == 1:
            ((name, body),) = entry.items()
            component = (
                _component(body, f"{where}.{name}", problems) if isinstance(body, Mapping) else None
            )
            if component is None:
                problems.add(
                    f"{where}.{name}", "a fixed step is {NAME: {estimator: ..., fixed: {...}}}"
                )
                continue
            step = Step(name=str(name), component=component, path=where)
        else:
            problems.add(
                where, f"a step is a choice name or {{NAME: {{estimator: ...}}}}, got {entry!r}"
            )
            continue
        if step.name in seen:
            problems.add(where, f"duplicate step name {step.name!r}")
            continue
        seen.add(step.name)
        steps.append(step)
    return steps
