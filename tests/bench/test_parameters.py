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


DEMO_SPACE = """
name: demo
params:
  kernel: {type: categorical, choices: [linear, poly], default: linear, weights: [0.9, 0.1]}
  degree: {type: int, low: 1, high: 3, default: 1, when: {kernel: poly}}
  C: {type: float, low: 0.0, high: 1.0, q: 0.25, default: 0.5}
forbidden:
  - {kernel: poly, degree: 3}
"""


@pytest.fixture
def demo_space(tmp_path):
    """The audit's DSL space: a forbidden clause, a q step and categorical weights."""
    from ensembo import spaces

    path = tmp_path / "demo.yaml"
    path.write_text(DEMO_SPACE)
    return spaces.load(str(path))


def test_features_some_library_cannot_search_are_refused_by_name(demo_space):
    with pytest.raises(SpaceError) as refused:
        from_configspace(demo_space.to_configspace(), problem="demo@data")
    message = str(refused.value)
    assert message.startswith("demo@data: ")
    assert "forbidden clause" in message and "kernel == 'poly'" in message
    assert "'C': quantization step q=0.25" in message
    assert "'kernel': categorical weights [0.9, 0.1]" in message


def test_ordinals_and_non_uniform_priors_are_refused_by_name():
    from ConfigSpace import Beta, Normal, OrdinalHyperparameter

    space = ConfigurationSpace(name="priors")
    space.add([
        Float("w", (0.0, 10.0), distribution=Normal(mu=1.0, sigma=0.5), default=1.0),
        Float("b", (0.0, 1.0), distribution=Beta(alpha=2, beta=8), default=0.2),
        OrdinalHyperparameter("size", ["small", "medium", "large"]),
    ])
    with pytest.raises(SpaceError) as refused:
        from_configspace(space)
    message = str(refused.value)
    assert message.startswith("priors: ")
    assert "'w': non-uniform prior (NormalFloatHyperparameter)" in message
    assert "'b': non-uniform prior (BetaFloatHyperparameter)" in message
    assert "'size': ordinal order" in message


def test_a_problem_refuses_an_ensembo_space_its_parameters_relax(demo_space):
    from ensembo.bench.problem import Outcome, Problem

    with pytest.raises(SpaceError, match="^by-hand: .*'C': quantization step"):
        Problem(
            name="by-hand", parameters=[float_parameter("C", 0, 1)], budget=5,
            evaluate=lambda config: Outcome(loss=config["C"]), ensembo_space=demo_space,
        )


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
