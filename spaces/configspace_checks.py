"""What ensembo refuses of a ConfigSpace ``ConfigurationSpace`` it is handed.

A space file is checked as it is read (:mod:`ensembo.spaces.parse`); a ConfigSpace
object, its JSON or a stored definition arrives built, so what ConfigSpace accepts but
a study cannot search or store as written is checked here. Every problem is reported
at once, each naming the hyperparameter or clause and what to write instead.
"""

from __future__ import annotations

import functools
import numbers
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
from ensembo.spaces.problems import Problems
from ensembo.spaces.quantize import off_grid, step_of

STORABLE = (str, int, float, bool, type(None))
"""The values a study file (JSON) keeps as they are; numpy scalars count as the Python
scalar they hold (a ``Space`` hands out and stores that one)."""


def check_configspace(space: str, configspace: ConfigurationSpace) -> None:
    """Raise ``SpaceDefinitionError`` listing every problem of ``configspace``."""
    problems = Problems(space)
    for hp in configspace.values():
        held_range(hp, problems)
        _check_values(hp, problems)
        if _meta_is_a_mapping(hp, problems):
            _check_step(hp, problems)
    for clause in _each_clause(configspace.forbidden_clauses):
        _check_clause(clause, problems)
    problems.raise_if_any()


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
        if not isinstance(plain, STORABLE):
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


def _check_step(hp: Any, problems: Problems) -> None:
    """A step (``meta["q"]``) checked as a space file's ``q`` is: a bad one failed deep
    in sampling (a ZeroDivisionError for 0, an AttributeError on a categorical), one
    wider than the range left a single value to search, and a default off the grid was
    evaluated as given."""
    q = step_of(hp)
    if q is None:
        return
    where = f"{hp.name}.meta.q"
    if not isinstance(hp, NumericalHyperparameter):
        problems.add(where, f"a step applies to a float or an integer, not a "
                            f"{type(hp).__name__}; remove it")
        return
    integer = isinstance(hp, IntegerHyperparameter)
    number = numbers.Integral if integer else numbers.Real
    width = hp.upper - hp.lower
    if isinstance(q, bool) or not isinstance(q, number) or not 0 < q <= width:
        kind = "an integer" if integer else "a number"
        problems.add(where, f"a step is {kind} in (0, {width}], got {q!r}")
        return
    problem = off_grid(hp, hp.default_value)
    if problem:
        problems.add(f"{hp.name}.default_value", f"the default {problem}; give a "
                     "default_value on the grid")


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
