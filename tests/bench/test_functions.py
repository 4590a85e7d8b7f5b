import numpy as np
import pytest

from ensembo.bench.functions import TEST_FUNCTIONS
from ensembo.bench.suite import get_suite


@pytest.mark.parametrize("name", sorted(TEST_FUNCTIONS))
def test_minimum_is_attained_and_not_beaten_by_samples(name):
    function = TEST_FUNCTIONS[name]
    assert function(np.array(function.minimizer)) == pytest.approx(function.minimum, abs=1e-5)
    rng = np.random.default_rng(0)
    samples = [function(function.from_unit(u)) for u in rng.random((2000, function.dimension))]
    assert min(samples) >= function.minimum - 1e-9


def test_synthetic_suite_budgets_and_optima_follow_the_issue():
    problems = {p.name: p for p in get_suite("synthetic").problems()}
    assert sorted(problems) == sorted(
        ["branin", "hartmann3", "hartmann6", "levy5", "rosenbrock4", "ackley5"]
    )
    assert problems["branin"].budget == problems["hartmann3"].budget == 50
    assert all(problems[n].budget == 80 for n in ("hartmann6", "levy5", "rosenbrock4", "ackley5"))
    assert problems["hartmann3"].optimum == -3.86277978733266
    assert problems["hartmann6"].optimum == -3.32236801141551
    assert problems["branin"].optimum == 0.39788735772974


def test_no_optimum_sits_at_the_default_configuration():
    for problem in get_suite("synthetic").problems():
        default = dict(problem.configspace().get_default_configuration())
        assert problem.evaluate(default).loss > problem.optimum + 1e-3, problem.name
