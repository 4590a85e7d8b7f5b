"""Parsing the executable parts of a document: estimator components and pipeline steps."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ensembo.spaces.options import option_name
from ensembo.spaces.problems import Problems, unknown_keys
from ensembo.spaces.spec import NOTHING_REFUSED, Component, Param, Refused, Step, join

COMPONENT_KEYS = ("estimator", "fixed", "rename", "pack")


def parse_component(raw: Mapping, path: str, problems: Problems) -> Component | None:
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
        unknown_keys(estimator, ("by", "options"), where("estimator"), problems)
        by, options = estimator.get("by"), estimator.get("options")
        if not isinstance(by, str) or not isinstance(options, Mapping) or not options:
            problems.add(
                where("estimator"),
                "a switched estimator is {by: CHOICE, options: {OPTION: ESTIMATOR}}",
            )
            return None
        by_options = tuple((str(option_name(k)), str(v)) for k, v in options.items())
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
    mappings["rename"] = _renames(mappings["rename"], where("rename"), problems)
    return Component(
        estimator=estimator,
        by=by,
        by_options=by_options,
        fixed=tuple((str(k), v) for k, v in mappings["fixed"].items()),
        rename=tuple((str(k), v) for k, v in mappings["rename"].items()),
        pack=tuple((str(k), tuple(v)) for k, v in mappings["pack"].items() if isinstance(v, list)),
        path=path,
    )


def _renames(raw: Mapping, path: str, problems: Problems) -> dict[str, str | None]:
    """The renames whose new name is an argument name or null (drop the hyperparameter);
    any other target would reach the estimator as a keyword it cannot take."""
    renames = {}
    for local, target in raw.items():
        if target is None or (isinstance(target, str) and target):
            renames[local] = target
        else:
            problems.add(
                join(path, str(local)),
                f"the new name of {local!r} must be an argument name (a string), or null to "
                f"keep it out of the estimator; got {target!r}",
            )
    return renames


def parse_steps(
    raw: Any, params: list[Param], problems: Problems, key: str = "steps",
    refused: Refused = NOTHING_REFUSED,
) -> list[Step]:
    """The pipeline entries under ``key`` (``steps`` or ``categorical_steps``); one
    naming a ``refused`` hyperparameter is dropped without a message of its own."""
    if not isinstance(raw, list):
        problems.add(key, f"'{key}' is a list, got {raw!r}")
        return []
    steps, seen = [], set()
    for index, entry in enumerate(raw):
        where = f"{key}[{index}]"
        if isinstance(entry, str):
            match = [p for p in params if p.name == entry and p.scope == ""]
            if not match and refused.hides(entry):
                continue
            if not match or match[0].kind != "choice":
                choices = [p.name for p in params if p.kind == "choice" and p.scope == ""]
                problems.add(
                    where, f"step {entry!r} must name a top-level choice; choices: {choices}"
                )
                continue
            step = Step(name=entry, param=entry, path=where)
        elif isinstance(entry, Mapping) and len(entry) == 1:
            ((name, body),) = entry.items()
            if isinstance(body, Mapping) and any(key not in COMPONENT_KEYS for key in body):
                unknown_keys(body, COMPONENT_KEYS, f"{where}.{name}", problems)
                continue
            component = (
                parse_component(body, f"{where}.{name}", problems)
                if isinstance(body, Mapping)
                else None
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
