"""The parsed form of a DSL document: frozen values, no behaviour beyond small queries.

``parse.py`` builds these from a dict, ``compile.py`` turns them into ConfigSpace
objects, ``plan.py`` uses the components to build estimators. Every node keeps ``path``,
its location in the document, so later stages can still name the offending key.
"""

from __future__ import annotations

from typing import Any

import attrs

SEPARATOR = ":"
"""Joins a choice, its option and a hyperparameter into a flat name: ``classifier:svm:C``."""

COMPARISONS = ("eq", "ne", "in", "gt", "lt", "ge", "le")


def join(path: str, key: str) -> str:
    """``path.key``, or ``key`` at the document's top level."""
    return f"{path}.{key}" if path else key


@attrs.frozen(kw_only=True)
class Unparsed:
    """A hyperparameter written in the document but refused (unknown type, duplicate
    choices, ...), its own problems reported."""

    name: str
    local: str


@attrs.frozen
class Refused:
    """What the document wrote but the parser refused, each with its own problems
    reported: hyperparameters and options (as ``(choice, option)``). A condition,
    forbidden clause, step, selector, ``rename`` or ``pack`` naming one is skipped
    rather than reported again as naming something missing."""

    params: tuple[Unparsed, ...] = ()
    options: tuple[tuple[str, str], ...] = ()

    def hides(self, name: str) -> bool:
        """Whether the flat ``name`` is a refused hyperparameter, or lies under one (a
        refused choice) or under a refused option."""
        return any(
            name == param.name or name.startswith(param.name + SEPARATOR) for param in self.params
        ) or any(
            name.startswith(f"{choice}{SEPARATOR}{option}{SEPARATOR}")
            for choice, option in self.options
        )


NOTHING_REFUSED = Refused()


@attrs.frozen(kw_only=True)
class Compare:
    """``parent <op> value`` with op in :data:`COMPARISONS` (``in``: value is a tuple)."""

    parent: str
    op: str
    value: Any
    path: str


RELATIONS = {"<": "lt", ">": "gt", "==": "eq"}
"""Operators of a forbidden relation between two hyperparameters (ConfigSpace's three)."""


@attrs.frozen(kw_only=True)
class Relation:
    """Forbids ``left <op> right`` between two hyperparameters; op in ``RELATIONS`` values."""

    left: str
    op: str
    right: str
    path: str


@attrs.frozen(kw_only=True)
class Junction:
    """All (``all``) or any (``any``) of several conditions."""

    kind: str
    items: tuple[Compare | Junction, ...]
    path: str


Condition = Compare | Junction


def parents(condition: Condition | None) -> set[str]:
    if condition is None:
        return set()
    if isinstance(condition, Compare):
        return {condition.parent}
    return set().union(*(parents(item) for item in condition.items))


@attrs.frozen(kw_only=True)
class Component:
    """What a scope builds: an estimator reference with fixed arguments.

    ``estimator`` is a registry name or dotted path; or, with ``by`` set, the estimator
    is picked by that choice's value from ``by_options`` (option -> reference).
    ``rename`` maps hyperparameter local names to estimator arguments (None: keep the
    hyperparameter out of the estimator); ``pack`` gathers several active
    hyperparameters into one tuple argument (e.g. ``hidden_layer_sizes``).
    """

    estimator: str | None = None
    by: str | None = None
    by_options: tuple[tuple[str, str], ...] = ()
    fixed: tuple[tuple[str, Any], ...] = ()
    rename: tuple[tuple[str, str | None], ...] = ()
    pack: tuple[tuple[str, tuple[str, ...]], ...] = ()
    path: str

    @property
    def references(self) -> tuple[tuple[str, str], ...]:
        """(document path, estimator reference) for every estimator named here."""
        if self.by is None:
            return ((join(self.path, "estimator"), self.estimator),) if self.estimator else ()
        return tuple((join(self.path, f"estimator.options.{o}"), ref) for o, ref in self.by_options)


@attrs.frozen(kw_only=True)
class Option:
    """One branch of a choice; its hyperparameters live in scope ``scope``."""

    name: str
    scope: str
    component: Component | None
    path: str


@attrs.frozen(kw_only=True)
class Param:
    """One hyperparameter; ``name`` is flat and unique, ``local`` as written.

    ``branch`` is the (choice, option) it sits under, ``when`` its own extra condition;
    the compiled condition is the conjunction of both.
    """

    name: str
    local: str
    scope: str
    kind: str
    path: str
    low: float | int | None = None
    high: float | int | None = None
    log: bool = False
    q: float | int | None = None
    default: Any = None
    choices: tuple[Any, ...] = ()
    weights: tuple[float, ...] | None = None
    options: tuple[Option, ...] = ()
    impute: Any = None  # the rule as written (compile normalizes it); None: the space's
    null_choice: bool = False  # a categorical whose choice "null" passes None
    when: Condition | None = None
    branch: tuple[str, str] | None = None
    description: str = ""


@attrs.frozen(kw_only=True)
class Step:
    """A pipeline step: a top-level choice (``param``) or a fixed component."""

    name: str
    param: str | None = None
    component: Component | None = None
    path: str


@attrs.frozen(kw_only=True)
class SpaceSpec:
    """A whole parsed document."""

    name: str
    description: str = ""
    impute: Any = "midpoint"
    params: tuple[Param, ...]
    forbidden: tuple[tuple[Compare, ...] | Relation, ...] = ()
    steps: tuple[Step, ...] = ()
    categorical_steps: tuple[Step, ...] = ()  # for categorical columns; () = the default
    component: Component | None = None
    refused: Refused = NOTHING_REFUSED  # reported already; later checks skip references to it

    @property
    def is_executable(self) -> bool:
        return bool(self.steps) or self.component is not None

    @property
    def all_steps(self) -> tuple[Step, ...]:
        return self.steps + self.categorical_steps

    @property
    def step_params(self) -> set[str]:
        """Top-level choices that are pipeline steps (not arguments of the model)."""
        return {s.param for s in self.all_steps if s.param}

    @property
    def unbuilt_choices(self) -> list[Param]:
        """Top-level choices with estimators in their options (or deeper) that nothing
        builds: only ``steps`` and a top-level ``estimator`` make a space build, so
        without them those estimators were silently dead declarations."""
        if self.is_executable:
            return []
        declaring = {
            p.name.split(SEPARATOR)[0]
            for p in self.params
            if any(o.component is not None for o in p.options)
        }
        categorical = {s.param for s in self.categorical_steps if s.param}
        return [p for p in self.in_scope("") if p.name in declaring - categorical]

    def param(self, name: str) -> Param:
        for param in self.params:
            if param.name == name:
                return param
        raise KeyError(name)

    def in_scope(self, scope: str) -> list[Param]:
        return [p for p in self.params if p.scope == scope]
