import math

import pytest

from ensembo.bench.functions import TEST_FUNCTIONS
from ensembo.bench.recorder import canonical_config
from ensembo.bench.suite import get_suite


def problem(name):
    return get_suite("conditional").problem(name)


def test_choice_problem_optimum_is_in_the_hartmann3_branch():
    choice = problem("choice-3branch")
    best = dict(
        zip(
            ["x0", "hartmann3_x1", "hartmann3_x2"],
            TEST_FUNCTIONS["hartmann3"].minimizer,
            strict=True,
        )
    )
    assert choice.evaluate({"branch": "hartmann3", **best}).loss == pytest.approx(
        choice.optimum, abs=1e-5
    )
    dimensions = {
        len(choice.parameters)
        and sum(1 for p in choice.parameters if p.active_when and p.active_when.values == (b,))
        for b in ("branin", "hartmann3", "hartmann6")
    }
    assert dimensions == {1, 2, 5}  # plus the shared x0: branches of dimension 2, 3 and 6


def test_tree_problem_has_a_choice_inside_a_branch_and_shared_parameters():
    tree = problem("tree-2level")
    by_name = {p.name: p for p in tree.parameters}
    assert by_name["inner"].active_when.parent == "top"
    assert by_name["b1_rate"].active_when.parent == "inner"
    assert by_name["b_shared"].active_when.parent == "top"  # shared by B1 and B2
    assert by_name["s"].active_when is None  # shared by every branch
    x = TEST_FUNCTIONS["hartmann3"].minimizer
    optimum = {"top": "B", "s": x[0], "inner": "B2", "b_shared": 0.5, "b2_y": x[1], "b2_z": x[2]}
    assert tree.evaluate(optimum).loss == pytest.approx(tree.optimum, abs=1e-5)
    b1 = {"top": "B", "s": 0.8, "inner": "B1", "b_shared": 0.25, "b1_rate": 0.01}
    assert tree.evaluate(b1).loss == pytest.approx(0.2)


@pytest.mark.parametrize("name", ["choice-3branch", "tree-2level"])
def test_random_configurations_never_beat_the_known_optimum(name):
    conditional = problem(name)
    space = conditional.configspace()
    space.seed(1)
    for configuration in space.sample_configuration(3000):
        config = canonical_config(conditional.parameters, dict(configuration))
        loss = conditional.evaluate(config).loss
        assert math.isfinite(loss) and loss >= conditional.optimum - 1e-9
