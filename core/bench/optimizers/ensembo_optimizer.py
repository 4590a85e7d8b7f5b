"""ensembo itself, with any registered plugin combination.

``ensembo:<surrogate>+<acquisition>+<acquisition optimizer>``, e.g. ``ensembo:gp+ei+lbfgs``
or ``ensembo:rf+ei+local-search``; shorter forms keep the Study defaults for the rest
(``ensembo:tpe``, ``ensembo:gp``). ``ensembo:random`` is random search and takes nothing
after it (no acquisition, optimizer or options: it would be ignored). A component
takes options after its name, each ``:key=value`` (values read as YAML scalars), e.g.
``ensembo:gp-cond:hyperparameters=mcmc+ei+lbfgs``; no commas, so a spec stays one item
of ``--optimizers``.
"""

from __future__ import annotations

from typing import Any

import attrs
import yaml

from ensembo import components, defaults
from ensembo.bench.optimizers.base import Objective
from ensembo.bench.problem import Problem
from ensembo.errors import EnsemboError, ExperimentError, UnknownComponentError
from ensembo.factory_signatures import factory_options
from ensembo.registry import registry

PREFIX = "ensembo:"
KINDS = ("surrogate", "acquisition", "acquisition_optimizer")
OPTION = ":"
RANDOM = "random"


def _refuse_extras_of_random(spec: str) -> None:
    """Random search has no model to configure: anything after ``ensembo:random`` would be
    ignored while the name suggests a model, so it is refused rather than run."""
    extras = spec[len(PREFIX + RANDOM) :]
    if extras:
        raise ExperimentError(
            "--optimizers",
            f"{spec}: ensembo:random takes no acquisition, acquisition optimizer or options "
            f"(got {extras!r}); write ensembo:random",
        )


def component_spec(part: str) -> str | dict[str, Any]:
    """``name`` as is; ``name:key=value:...`` as the mapping spec a Study takes."""
    name, *settings = part.split(OPTION)
    if not settings:
        return name
    options = {}
    for setting in settings:
        key, equals, value = setting.partition("=")
        if not key or not equals:
            raise ValueError(f"benchmark optimizer option {setting!r} of {part!r}: expected k=v")
        options[key] = yaml.safe_load(value)
    return {"name": name, **options}


def _unknown(kind: str, name: str, registered: list[str]) -> UnknownComponentError:
    """The names ``ensembo:NAME`` takes in ``kind``'s place: for the surrogate, random
    search too (a misspelt ``ensembo:randm`` listed neither it nor a suggestion)."""
    if kind != "surrogate":
        return UnknownComponentError(kind.replace("_", " "), name, registered)
    return UnknownComponentError(
        "surrogate", name, [*registered, RANDOM],
        hint=f"ensembo:{RANDOM} is random search",
    )


@attrs.frozen(kw_only=True)
class EnsemboOptimizer:
    name: str
    surrogate: str | None
    acquisition: str = "ei"
    acquisition_optimizer: str = defaults.AUTO

    @classmethod
    def from_spec(cls, spec: str) -> EnsemboOptimizer:
        parts = spec[len(PREFIX) :].split("+")
        if not parts[0] or len(parts) > 3 or not all(parts):
            raise UnknownComponentError(
                "benchmark optimizer",
                spec,
                ["ensembo:random", "ensembo:<surrogate>[+<acquisition>[+<acquisition optimizer>]]"],
            )
        if parts[0].split(OPTION)[0] == RANDOM:
            _refuse_extras_of_random(spec)
            return cls(name=spec, surrogate=None)
        for part in parts:
            component_spec(part)  # malformed options fail here, before any run
        chosen = dict(zip(KINDS, parts, strict=False))
        return cls(name=spec, **chosen)

    def check_registered(self) -> None:
        """Fail before any run starts if a named plugin is not registered."""
        names = {
            "surrogate": self.surrogate,
            "acquisition": self.acquisition,
            "acquisition_optimizer": self.acquisition_optimizer,
        }
        known = registry()
        for kind, part in names.items():
            if part is None or part == defaults.AUTO:
                continue
            name = part.split(OPTION)[0]
            available = known.names(kind)
            if name not in available:
                raise _unknown(kind, name, available)
            self._check_options(kind, part, known.factory(kind, name))

    def _check_options(self, kind: str, part: str, factory: Any) -> None:
        """An option the plugin's factory does not take fails here, not in every run."""
        spec = component_spec(part)
        options = set(spec) - {"name"} if isinstance(spec, dict) else set()
        accepted = factory_options(factory)  # None: its signature cannot tell
        unknown = sorted(options - set(accepted if accepted is not None else options))
        if unknown:
            raise ExperimentError(
                "--optimizers",
                f"{self.name}: {kind.replace('_', ' ')} {part.split(OPTION)[0]!r} has no "
                f"option {', '.join(unknown)}; its options: {', '.join(accepted) or 'none'}",
            )
        try:  # a value the plugin refuses (noise_floor=abc) failed every run, after the anchors'
            components.build(kind, spec, registry())
        except EnsemboError as error:
            raise ExperimentError("--optimizers", f"{self.name}: {error}") from None

    def prepare(self) -> None:
        """Plugin discovery is once per process, like an import: not part of overhead."""
        registry()

    def minimize(self, problem: Problem, objective: Objective, budget: int, seed: int) -> None:
        from ensembo.study import Study

        study = Study(
            problem.space_for_ensembo(),
            surrogate=None if self.surrogate is None else component_spec(self.surrogate),
            acquisition=component_spec(self.acquisition),
            acquisition_optimizer=component_spec(self.acquisition_optimizer),
            seed=seed,
        )
        study.optimize(objective, n_trials=budget, catch=())
