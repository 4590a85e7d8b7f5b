"""Random conditional ConfigSpace spaces for property tests of acquisition optimizers.

The strategy is handed out by the session fixture ``conditional_spaces`` (tests run in
importlib mode, so helper modules are not importable by name).

A categorical root chooses a branch; each branch activates its own mix of float, log
float, integer, ordinal and categorical hyperparameters, one of which may open a second
level. Some spaces also forbid one value of the root choice.
"""

from __future__ import annotations

import pytest
from ConfigSpace import (
    Categorical,
    ConfigurationSpace,
    EqualsCondition,
    Float,
    ForbiddenEqualsClause,
    InCondition,
    Integer,
    OrdinalHyperparameter,
)
from hypothesis import strategies as st

from ensembo.spaces import Space


def _leaf(kind: str, name: str):
    if kind == "float":
        return Float(name, (-2.0, 3.0))
    if kind == "log-float":
        return Float(name, (1e-4, 10.0), log=True)
    if kind == "integer":
        return Integer(name, (1, 40))
    if kind == "log-integer":
        return Integer(name, (1, 1000), log=True)
    if kind == "ordinal":
        return OrdinalHyperparameter(name, ["low", "mid", "high"])
    return Categorical(name, ["u", "v", "w"])


KINDS = ["float", "log-float", "integer", "log-integer", "ordinal", "categorical"]


@st.composite
def _conditional_spaces(draw) -> Space:
    space = ConfigurationSpace()
    # A continuous root keeps every space larger than any history the tests build.
    space.add(Float("root", (0.0, 1.0)))
    n_roots = draw(st.integers(0, 2))
    space.add([_leaf(draw(st.sampled_from(KINDS)), f"root{i}") for i in range(n_roots)])
    n_branches = draw(st.integers(2, 4))
    choices = [f"b{i}" for i in range(n_branches)]
    learner = Categorical("learner", choices)
    space.add(learner)
    for branch, choice in enumerate(choices):
        kinds = draw(st.lists(st.sampled_from(KINDS), min_size=0, max_size=3))
        for index, kind in enumerate(kinds):
            child = _leaf(kind, f"{choice}_{index}")
            space.add(child)
            shared = draw(st.booleans()) and branch + 1 < n_branches
            if shared:  # active for this branch and the next one
                space.add(InCondition(child, learner, [choice, choices[branch + 1]]))
            else:
                space.add(EqualsCondition(child, learner, choice))
            if kind == "categorical" and draw(st.booleans()):
                grandchild = _leaf(draw(st.sampled_from(KINDS[:4])), f"{choice}_{index}_deep")
                space.add(grandchild)
                space.add(EqualsCondition(grandchild, child, "v"))
    if n_branches >= 3 and draw(st.booleans()):
        space.add(ForbiddenEqualsClause(learner, choices[-1]))
    return Space(space)


@pytest.fixture(scope="session")
def conditional_spaces():
    """The strategy above, for ``data.draw(conditional_spaces)``."""
    return _conditional_spaces()
