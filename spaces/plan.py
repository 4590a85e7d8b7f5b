"""Configuration -> estimator: a plain *plan* first (inspectable, testable), then objects.

Rules, per component (the top level, an option, or a fixed step):
- its arguments are the active hyperparameters of its scope under their local names,
  plus those of chosen options that declare no estimator of their own (merged);
- a choice whose chosen option declares an estimator passes that built estimator
  (e.g. AdaBoost's base learner); otherwise it passes the option name;
- then ``pack`` gathers, ``rename`` maps (None drops), ``fixed`` adds constant arguments.
Top-level choices listed in ``steps`` (or ``categorical_steps``) become pipeline steps
instead; an option without an estimator in a step choice means "skip this step".
Inactive hyperparameters are absent from ``config`` and so never reach an estimator.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from ensembo.spaces.options import NULL_CHOICE, option_argument, option_name
from ensembo.spaces.spec import Component, Option, Param, SpaceSpec, Step

MODEL_STEP = "model"


@attrs.frozen(kw_only=True)
class EstimatorPlan:
    """One estimator to create: ``estimator`` reference and its keyword ``arguments``."""

    estimator: str
    arguments: tuple[tuple[str, Any], ...]

    def argument_dict(self) -> dict[str, Any]:
        return dict(self.arguments)


PlannedSteps = tuple[tuple[str, EstimatorPlan], ...]


@attrs.frozen(kw_only=True)
class BuildPlan:
    """Ordered pipeline steps ``(name, EstimatorPlan)``; a single step is a bare estimator.

    ``categorical_steps``: what categorical columns go through when the build is given
    some (the space's ``categorical_steps``); None when the space declares none, and the
    build's default (most-frequent imputation, one-hot encoding) applies.
    """

    steps: PlannedSteps
    categorical_steps: PlannedSteps | None = None


class Planner:
    def __init__(self, spec: SpaceSpec):
        self.spec = spec
        self.step_params = spec.step_params

    def plan(self, config: Mapping[str, Any]) -> BuildPlan:
        steps = self._pipeline(self.spec.steps, config)
        if self.spec.component is not None:
            steps += ((MODEL_STEP, self.component(self.spec.component, "", config)),)
        categorical = self.spec.categorical_steps
        return BuildPlan(
            steps=steps,
            categorical_steps=self._pipeline(categorical, config) if categorical else None,
        )

    def _pipeline(self, steps: tuple[Step, ...], config: Mapping[str, Any]) -> PlannedSteps:
        """Fixed steps as declared; a choice step as its chosen option's estimator, or
        nothing when that option has none (the step is skipped)."""
        planned = []
        for step in steps:
            if step.component is not None:
                planned.append(
                    (step.name, self.component(step.component, "", config, with_params=False))
                )
                continue
            option = self._option(self.spec.param(step.param), config)
            if option is not None and option.component is not None:
                planned.append((step.name, self.component(option.component, option.scope, config)))
        return tuple(planned)

    def _option(self, param: Param, config: Mapping[str, Any]) -> Option | None:
        if param.name not in config:
            return None
        return next(o for o in param.options if o.name == str(config[param.name]))

    def component(
        self, component: Component, scope: str, config, with_params: bool = True
    ) -> EstimatorPlan:
        values = self.collect(scope, config, skip={component.by}) if with_params else {}
        for target, sources in component.pack:
            packed = tuple(values.pop(s) for s in sources if s in values)
            values[target] = packed
        renames = dict(component.rename)  # all at once: {a: b, b: c} passes both values
        values = {renames.get(k, k): v for k, v in values.items() if renames.get(k, k) is not None}
        values.update(dict(component.fixed))
        estimator = component.estimator
        if component.by is not None:  # the switch lives in the component's own scope
            estimator = dict(component.by_options)[str(option_name(config[scope + component.by]))]
        return EstimatorPlan(estimator=estimator, arguments=tuple(sorted(values.items())))

    def collect(self, scope: str, config, skip=frozenset()) -> dict[str, Any]:
        """Local name -> value (or nested plan) of the active hyperparameters of ``scope``."""
        values: dict[str, Any] = {}
        for param in self.spec.in_scope(scope):
            if param.name not in config or param.name in self.step_params or param.local in skip:
                continue
            if param.kind != "choice":
                value = config[param.name]
                values[param.local] = None if param.null_choice and value == NULL_CHOICE else value
                continue
            option = self._option(param, config)
            if option.component is not None:
                values[param.local] = self.component(option.component, option.scope, config)
            else:
                values[param.local] = option_argument(option.name)
                values.update(self.collect(option.scope, config))
        return values


def static_arguments(
    spec: SpaceSpec, component: Component, scope: str, with_params: bool
) -> set[str]:
    """Every argument name ``component`` may receive, over all configurations."""
    if not with_params:
        return set()
    return {param.local for param in argument_params(spec, component, scope)}


def argument_params(spec: SpaceSpec, component: Component, scope: str) -> list[Param]:
    """The hyperparameters ``component`` takes its arguments from: those of ``scope``
    and, through options without an estimator, of the scopes below it."""
    return [
        param
        for current in argument_scopes(spec, component, scope)
        for param in _scope_arguments(spec, component, scope, current)
    ]


def argument_scopes(spec: SpaceSpec, component: Component, scope: str) -> list[str]:
    """The scopes ``component`` takes its arguments from: its own and, through options
    without an estimator, those below it; an option with its own estimator takes them."""
    scopes: list[str] = []

    def walk(current: str) -> None:
        scopes.append(current)
        for param in _scope_arguments(spec, component, scope, current):
            for option in param.options:
                if option.component is None:
                    walk(option.scope)

    walk(scope)
    return scopes


def _scope_arguments(
    spec: SpaceSpec, component: Component, scope: str, current: str
) -> list[Param]:
    """The hyperparameters of ``current`` that are arguments: not pipeline steps, nor
    the selector of a switched estimator."""
    step_params = spec.step_params
    return [
        param
        for param in spec.in_scope(current)
        if param.name not in step_params
        and not (current == scope and param.local == component.by)
    ]
