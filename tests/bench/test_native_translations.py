"""Each anchor receives the conditional problem in its own native form."""

import numpy as np
import pytest

from ensembo.bench.optimizers.hyperopt_optimizer import flatten, native_space
from ensembo.bench.optimizers.optuna_optimizer import suggest_active
from ensembo.bench.recorder import canonical_config
from ensembo.bench.suite import get_suite

TREE = get_suite("conditional").problem("tree-2level").parameters


def test_hyperopt_nested_choice_samples_only_active_parameters():
    hyperopt = pytest.importorskip("hyperopt")
    from hyperopt.pyll import stochastic

    space = native_space(hyperopt.hp, TREE)
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(200):
        flat = flatten(stochastic.sample(space, rng=rng))
        assert canonical_config(TREE, flat) == {k: flat[k] for k in canonical_config(TREE, flat)}
        assert set(flat) == set(canonical_config(TREE, flat))  # nothing inactive sampled
        seen.add((flat["top"], flat.get("inner")))
    assert seen == {("A", None), ("B", "B1"), ("B", "B2")}


def test_hyperopt_labels_shared_parameters_once_per_branch():
    hyperopt = pytest.importorskip("hyperopt")
    from ensembo.bench.parameters import ActiveWhen, choice_parameter, float_parameter

    parameters = [
        choice_parameter("k", ["a", "b", "c"]),
        float_parameter("x", 0, 1, active_when=ActiveWhen(parent="k", values=["a", "b"])),
    ]
    domain = hyperopt.Domain(lambda sample: 0.0, native_space(hyperopt.hp, parameters))
    assert sorted(domain.params) == ["k", "x@k=a", "x@k=b"]


class RecordingTrial:
    """Just enough of optuna.Trial for define-by-run."""

    def __init__(self):
        self.asked = []

    def suggest_categorical(self, name, choices):
        self.asked.append(name)
        return choices[-1]

    def suggest_int(self, name, low, high, log=False):
        self.asked.append(name)
        return low

    def suggest_float(self, name, low, high, log=False):
        self.asked.append(name)
        return low


def test_optuna_define_by_run_suggests_only_active_parameters():
    trial = RecordingTrial()
    values = suggest_active(trial, TREE)
    assert trial.asked == ["top", "s", "inner", "b_shared", "b2_y", "b2_z"]
    assert values["inner"] == "B2"


def test_skopt_gets_a_flat_box_of_every_parameter():
    skopt = pytest.importorskip("skopt")
    from ensembo.bench.optimizers.skopt_optimizer import native_dimensions

    dimensions, names = native_dimensions(skopt.space, TREE)
    assert names == [p.name for p in TREE]
    assert dimensions[names.index("b1_rate")].prior == "log-uniform"


def test_hyperopt_labels_a_shared_parameter_under_a_shared_choice_once_per_path():
    hyperopt = pytest.importorskip("hyperopt")
    from ensembo.bench.parameters import ActiveWhen, choice_parameter, float_parameter

    parameters = [
        choice_parameter("top", ["A", "B", "C"]),
        choice_parameter(
            "inner", ["i1", "i2", "i3"], active_when=ActiveWhen(parent="top", values=["A", "B"])
        ),
        float_parameter("w", 0, 1, active_when=ActiveWhen(parent="inner", values=["i1", "i2"])),
    ]
    domain = hyperopt.Domain(lambda sample: 0.0, native_space(hyperopt.hp, parameters))
    assert sorted(domain.params) == [
        "inner@top=A", "inner@top=B", "top",
        "w@top=A@inner=i1", "w@top=A@inner=i2", "w@top=B@inner=i1", "w@top=B@inner=i2",
    ]


def test_hyperopt_runs_a_shared_parameter_under_a_shared_choice():
    pytest.importorskip("hyperopt")
    from ensembo.bench.optimizers import make_optimizer
    from ensembo.bench.parameters import ActiveWhen, choice_parameter, float_parameter
    from ensembo.bench.problem import Outcome, Problem
    from ensembo.bench.recorder import Recorder

    parameters = [
        choice_parameter("top", ["A", "B", "C"]),
        choice_parameter(
            "inner", ["i1", "i2", "i3"], active_when=ActiveWhen(parent="top", values=["A", "B"])
        ),
        float_parameter("w", 0, 1, active_when=ActiveWhen(parent="inner", values=["i1", "i2"])),
    ]
    problem = Problem(
        name="nested-shared", parameters=parameters, budget=6,
        evaluate=lambda config: Outcome(loss=config.get("w", 0.5)),
    )
    recorder = Recorder(problem, 6)
    make_optimizer("hyperopt-tpe").minimize(problem, recorder, 6, 0)
    assert len(recorder.evaluations) == 6
