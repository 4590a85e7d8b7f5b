import pytest
from ConfigSpace import AndConjunction, Categorical, ConfigurationSpace, EqualsCondition, Float

from ensembo.bench.parameters import (
    ActiveWhen,
    choice_parameter,
    float_parameter,
    from_configspace,
    int_parameter,
    to_configspace,
)
from ensembo.bench.recorder import canonical_config
from ensembo.bench.suite import get_suite
from ensembo.errors import SpaceError

TREE = get_suite("conditional").problem("tree-2level").parameters


def test_configspace_round_trip_keeps_kinds_bounds_and_conditions():
    back = from_configspace(to_configspace(TREE))
    assert {p.name: p for p in back} == {p.name: p for p in TREE}


def test_from_configspace_translates_the_shared_fixture(tree_space):
    parameters = {p.name: p for p in from_configspace(tree_space)}
    assert parameters["shared"].log and parameters["shared"].active_when is None
    assert parameters["steps"].kind == "int"
    assert parameters["only_b"].active_when == ActiveWhen(parent="branch", values=["b"])


def test_conjunctions_are_refused_with_the_condition_named():
    space = ConfigurationSpace(name="conj")
    a, b, c = Categorical("a", ["x", "y"]), Categorical("b", ["u", "v"]), Float("c", (0, 1))
    space.add([a, b, c])
    space.add(AndConjunction(EqualsCondition(c, a, "x"), EqualsCondition(c, b, "u")))
    with pytest.raises(SpaceError, match="not supported"):
        from_configspace(space)


def test_parents_must_be_earlier_choices():
    with pytest.raises(SpaceError, match="earlier choice"):
        to_configspace(
            [
                float_parameter("x", 0, 1, active_when=ActiveWhen(parent="k", values=["a"])),
                choice_parameter("k", ["a"]),
            ]
        )
    with pytest.raises(SpaceError, match="not choices"):
        to_configspace(
            [
                choice_parameter("k", ["a"]),
                int_parameter("n", 1, 3, active_when=ActiveWhen(parent="k", values=["zz"])),
            ]
        )


def test_canonical_config_drops_inactive_types_and_clips():
    full = {
        "top": "A",
        "s": 1.7,
        "a_x": 0.2,
        "a_n": 3.6,
        "inner": "B2",
        "b_shared": 0.1,
        "b1_rate": 0.1,
        "b2_y": 0.4,
        "b2_z": 0.4,
    }
    assert canonical_config(TREE, full) == {"top": "A", "s": 1.0, "a_x": 0.2, "a_n": 4}
    with pytest.raises(ValueError, match="'a_x'"):
        canonical_config(TREE, {"top": "A", "s": 0.5, "a_n": 2})
