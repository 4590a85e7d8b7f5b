"""Every adapter spends exactly its budget on a conditional problem, reproducibly."""

import re

import pytest

from ensembo.bench.optimizers import make_optimizer
from ensembo.bench.optimizers.ensembo_optimizer import EnsemboOptimizer, component_spec
from ensembo.bench.recorder import BudgetExhausted, Recorder
from ensembo.bench.suite import get_suite
from ensembo.errors import ExperimentError, UnknownComponentError

TREE = get_suite("conditional").problem("tree-2level")


def run(spec, budget=6, seed=0):
    optimizer = make_optimizer(spec)
    optimizer.prepare()
    recorder = Recorder(TREE, budget)
    optimizer.minimize(TREE, recorder, budget, seed)
    return recorder.evaluations


ANCHOR_MODULES = {  # what an anchor needs; without it the benchmark skips its runs
    "hyperopt-tpe": "hyperopt", "optuna-tpe": "optuna", "skopt-gp": "skopt",
    "smac-hpo": "smac", "smac-bb": "smac", "optuna-gp": "torch",
}


@pytest.mark.parametrize(
    "spec", ["random", "ensembo:random", "hyperopt-tpe", "optuna-tpe", "skopt-gp"]
)
def test_fast_adapters_spend_the_budget_and_are_seeded(spec):
    if spec in ANCHOR_MODULES:
        pytest.importorskip(ANCHOR_MODULES[spec])
    first = run(spec)
    assert len(first) == 6
    assert [e.loss for e in first] == [e.loss for e in run(spec)]


@pytest.mark.slow
@pytest.mark.parametrize("spec", ["smac-hpo", "smac-bb", "optuna-gp"])
def test_slow_adapters_spend_the_budget(spec):
    pytest.importorskip(ANCHOR_MODULES[spec])
    assert len(run(spec, budget=8)) == 8


def test_ensembo_spec_parsing():
    gp = EnsemboOptimizer.from_spec("ensembo:gp-cond+ei+lbfgs")
    assert (gp.surrogate, gp.acquisition, gp.acquisition_optimizer) == ("gp-cond", "ei", "lbfgs")
    assert EnsemboOptimizer.from_spec("ensembo:random").surrogate is None
    assert EnsemboOptimizer.from_spec("ensembo:tpe").surrogate == "tpe"
    with pytest.raises(UnknownComponentError):
        EnsemboOptimizer.from_spec("ensembo:gp++lbfgs")


def test_ensembo_spec_options_become_a_mapping_spec():
    spec = "ensembo:gp-cond:hyperparameters=mcmc:samples=4+ei+lbfgs:n_sobol=64"
    optimizer = EnsemboOptimizer.from_spec(spec)
    assert component_spec(optimizer.surrogate) == {
        "name": "gp-cond", "hyperparameters": "mcmc", "samples": 4
    }
    assert component_spec(optimizer.acquisition) == "ei"
    assert component_spec(optimizer.acquisition_optimizer) == {"name": "lbfgs", "n_sobol": 64}
    optimizer.check_registered()
    with pytest.raises(UnknownComponentError, match="surrogate 'gq'"):
        EnsemboOptimizer.from_spec("ensembo:gq:samples=4").check_registered()
    with pytest.raises(ValueError, match="'samples' of 'gp:samples'"):
        EnsemboOptimizer.from_spec("ensembo:gp:samples")


@pytest.mark.parametrize(
    ("spec", "extras"),
    [
        ("ensembo:random+ei", "'+ei'"),
        ("ensembo:random+ei+lbfgs", "'+ei+lbfgs'"),
        ("ensembo:random:foo=1", "':foo=1'"),
    ],
)
def test_ensembo_random_refuses_anything_after_it(spec, extras):
    with pytest.raises(ExperimentError, match=f"ensembo:random takes no .*got {re.escape(extras)}"):
        EnsemboOptimizer.from_spec(spec)


def test_unknown_names_list_what_is_available():
    with pytest.raises(UnknownComponentError, match="smac-hpo"):
        make_optimizer("smac")
    with pytest.raises(UnknownComponentError, match="surrogate 'no-such-surrogate'"):
        EnsemboOptimizer.from_spec("ensembo:no-such-surrogate").check_registered()


def test_recorder_refuses_to_exceed_the_budget():
    recorder = Recorder(TREE, 1)
    config = {"top": "A", "s": 0.3, "a_x": 0.6, "a_n": 7}
    assert recorder(config) == pytest.approx(0.5)
    with pytest.raises(BudgetExhausted):
        recorder(config)
