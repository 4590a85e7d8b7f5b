"""What ensembo refuses of a ConfigSpace ``ConfigurationSpace`` it is handed.

A space file is checked as it is read (:mod:`ensembo.spaces.parse`); a ConfigSpace
object, its JSON or a stored definition arrives built, so what ConfigSpace accepts but
a study cannot search or store as written is checked here. Every problem is reported
at once, each naming the hyperparameter or clause and what to write instead. A stepped
default off its grid is moved onto it (ConfigSpace picks a default that was not given,
and cannot tell which one was).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import ConfigSpace
import numpy as np
from ConfigSpace import ConfigurationSpace
from ConfigSpace.forbidden import ForbiddenLessThanEqualsClause
from ConfigSpace.hyperparameters import (
    CategoricalHyperparameter,
    Constant,
    IntegerHyperparameter,
    NumericalHyperparameter,
    OrdinalHyperparameter,
    UniformIntegerHyperparameter,
)

from ensembo.spaces.bounds import held_range
from ensembo.spaces.conditions import VALUES
from ensembo.spaces.problems import Problems
from ensembo.spaces.quantize import as_stored, off_grid, snap, step_of, step_problem


def checked_configspace(space: str, configspace: ConfigurationSpace) -> ConfigurationSpace:
    """``configspace`` with every stepped default on its grid (a copy when one moved);
    raises ``SpaceDefinitionError`` listing every problem of it."""
    problems = Problems(space)
    if not len(configspace):  # an empty space failed only at the first model's encoding
        problems.add("", "has no hyperparameters; a space needs at least one to search")
    stepped = []
    for hp in configspace.values():
        held_range(hp, problems)
        _check_values(hp, problems)
        if _meta_is_a_mapping(hp, problems) and _check_step(hp, problems):
            stepped.append(hp)
    for clause in _each_clause(configspace.forbidden_clauses):
        _check_clause(clause, problems)
    problems.raise_if_any()
    configspace = _defaults_on_grid(configspace, stepped, problems)
    problems.raise_if_any()
    return configspace


def _values(hp: Any) -> tuple:
    """The values a non-numeric hyperparameter takes (none for a numeric one)."""
    if isinstance(hp, CategoricalHyperparameter):
        return hp.choices
    if isinstance(hp, OrdinalHyperparameter):
        return hp.sequence
    return (hp.value,) if isinstance(hp, Constant) else ()


def _check_values(hp: Any, problems: Problems) -> None:
    """A value a study file cannot keep as it is: a tuple came back from a stored study
    as a list, which the space refused on resume ("[10] is not a value it takes"), and
    an object failed the first trial's record."""
    for value in _values(hp):
        plain = value.item() if isinstance(value, np.generic) else value
        if not isinstance(plain, VALUES):  # what a study file (JSON) keeps as it is
            problems.add(
                hp.name,
                f"value {value!r} is a {type(value).__name__}: a study stores configurations "
                "as JSON, which keeps only text, numbers, booleans and None; give each value "
                "a name (a string) and map the name to the value in the objective",
            )
            return


def _meta_is_a_mapping(hp: Any, problems: Problems) -> bool:
    """ensembo reads its imputation rule and step from ``meta`` (a ``str`` failed with
    "'str' object has no attribute 'get'")."""
    if hp.meta is None or isinstance(hp.meta, Mapping):
        return True
    problems.add(f"{hp.name}.meta", f"meta is a mapping or None, got {hp.meta!r}")
    return False


def _check_step(hp: Any, problems: Problems) -> bool:
    """Whether ``hp`` has a step (``meta["q"]``) that is one, checked as a space file's
    ``q`` is: a bad one failed deep in sampling (a ZeroDivisionError for 0, an
    AttributeError on a categorical), and one wider than the range left a single value
    to search."""
    q = step_of(hp)
    if q is None:
        return False
    where = f"{hp.name}.meta.q"
    if not isinstance(hp, NumericalHyperparameter):
        problems.add(where, f"a step applies to a float or an integer, not a "
                            f"{type(hp).__name__}; remove it")
        return False
    problem = step_problem(q, hp.lower, hp.upper, isinstance(hp, IntegerHyperparameter))
    if problem:
        problems.add(where, problem)
    return problem is None


def _defaults_on_grid(
    configspace: ConfigurationSpace, stepped: list[Any], problems: Problems
) -> ConfigurationSpace:
    """``configspace`` with each ``stepped`` hyperparameter's default moved to the
    nearest grid point, as a space file's missing default is: ConfigSpace picks the
    midpoint (5 for ``UniformInteger(0, 10)`` with a step of 2) and does not keep
    whether a default was given. Before, such a space was refused, or its off-grid
    default was run as the ``default`` design's first trial."""
    moved = {
        hp.name: _snapped_default(hp) for hp in stepped if off_grid(hp, hp.default_value)
    }
    if not moved:
        return configspace
    try:  # ConfigSpace's own copy: its hyperparameters are built once, with their default
        serialized = configspace.to_serialized_dict()
        for entry in serialized["hyperparameters"]:
            if entry["name"] in moved:
                entry["default_value"] = moved[entry["name"]]
        rebuilt = ConfigurationSpace.from_serialized_dict(serialized)
    except Exception as error:  # ConfigSpace raises several types (a forbidden default...)
        for name, value in moved.items():
            hp = configspace[name]
            problems.add(f"{name}.default_value", f"the default {off_grid(hp, hp.default_value)}; "
                         f"moved onto it ({value!r}) it is refused by ConfigSpace: "
                         f"{_first_line(error)}; give a default_value on the grid")
        return configspace
    rebuilt.meta = configspace.meta  # ConfigSpace's serialization drops it
    rebuilt.random.set_state(configspace.random.get_state())  # and its seed
    return rebuilt


def _first_line(error: Exception) -> str:
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def _snapped_default(hp: Any) -> Any:
    """``hp``'s default on its grid, a float rounded as a ``Configuration`` holds it."""
    integer = isinstance(hp, IntegerHyperparameter)
    value = snap(hp.default_value, hp.lower, hp.upper, step_of(hp), integer)
    return value if integer else float(as_stored(hp, value))


def _each_clause(clauses: Iterable[Any]) -> Iterator[Any]:
    """Every forbidden clause, those inside conjunctions too."""
    for clause in clauses:
        yield clause
        yield from _each_clause(getattr(clause, "components", ()))


def _check_clause(clause: Any, problems: Problems) -> None:
    """A clause the installed ConfigSpace does not apply as written."""
    if isinstance(clause, ForbiddenLessThanEqualsClause) and _less_equal_is_inverted():
        name, value = clause.hyperparameter.name, clause.value
        problems.add(
            name,
            f"{clause!r} is not applied as written by ConfigSpace {ConfigSpace.__version__}: "
            f"its vector check, which sampling and every proposer use, forbids {name} >= "
            f"{value!r} instead; write the same clause as ForbiddenOrConjunction("
            f"ForbiddenLessThanClause(cs[{name!r}], {value!r}), "
            f"ForbiddenEqualsClause(cs[{name!r}], {value!r}))",
        )


@functools.cache
def _less_equal_is_inverted() -> bool:
    """Whether the installed ConfigSpace's vectorized ``<=`` clause tests ``>=``, as
    1.2.0's does: a study proposed configurations it forbids (19 of 20 with ``rf``)."""
    hp = UniformIntegerHyperparameter("n", 0, 2, default_value=2)
    clause = ForbiddenLessThanEqualsClause(hp, 1)
    ConfigurationSpace().add(hp, clause)
    return not clause.is_forbidden_vector_array(np.array([[hp.to_vector(0)]]))[0]
