"""Losses: Lévesque's toy ensemble tables, the sigmoid scale, regression losses, registry."""

from __future__ import annotations

import re

import numpy as np
import pytest

from ensembo.ensemble import Ensemble
from ensembo.errors import ComponentOptionError
from ensembo.plugins.losses.c_bound import CBoundLoss
from ensembo.plugins.losses.classification import LogLoss, ZeroOneLoss
from ensembo.plugins.losses.ensemble_loss import ensemble_loss_of, weighted_ensemble_loss
from ensembo.plugins.losses.margins import SigmoidMarginLoss, SquaredMarginLoss, sigmoid_scale
from ensembo.plugins.losses.regression import AbsoluteError, HuberLoss, SquaredError, TukeyLoss
from ensembo.plugins.losses.votes import LossInputError, margins
from ensembo.registry import registry


def wrong_on(wrong: set[int], m: int) -> np.ndarray:
    """Binary class probabilities of a classifier wrong exactly on ``wrong`` (truth: class 0)."""
    probabilities = np.zeros((m, 2))
    for i in range(m):
        probabilities[i, 1 if i in wrong else 0] = 1.0
    return probabilities


def table_row(members: list[np.ndarray], m: int, sigmoid_a: float) -> dict[str, float]:
    y = np.zeros(m, dtype=int)
    stacked, weights = np.stack(members), np.ones(len(members))
    votes = np.stack([ZeroOneLoss().contributions(p) for p in members]).sum(axis=0)
    return {
        "l01": weighted_ensemble_loss(ZeroOneLoss(), y, stacked, weights),
        "lM": float(np.mean((1 - margins(y, votes, len(members))) / 2)),
        "lM2": weighted_ensemble_loss(SquaredMarginLoss(), y, stacked, weights),
        "lsig": weighted_ensemble_loss(SigmoidMarginLoss(a=sigmoid_a), y, stacked, weights),
        "lC": weighted_ensemble_loss(CBoundLoss(), y, stacked, weights),
    }


def test_sigmoid_scale_for_seven_members_is_the_thesis_value():
    a = sigmoid_scale(7)
    assert a == pytest.approx(9.58, abs=0.005)
    gap = 1 / (1 + np.exp(-a)) - 1 / (1 + np.exp(-a * (1 - 2 / 7)))
    assert gap == pytest.approx(1e-3, rel=1e-6)
    assert sigmoid_scale(12) == pytest.approx(7.91, abs=0.005)
    assert sigmoid_scale(2) == sigmoid_scale(3)  # no root above 1 below three members


def test_table_4_1_ensemble_of_bad_classifiers():
    # Three members, three examples; each example is wrong for two of the three members.
    members = [wrong_on({0, 1}, 3), wrong_on({0, 2}, 3), wrong_on({1, 2}, 3)]
    row = table_row(members, 3, sigmoid_a=12.0)
    expected = {"l01": 1.00, "lM": 0.67, "lM2": 0.44, "lsig": 0.98, "lC": 1.00}
    assert {k: round(v, 2) for k, v in row.items()} == expected


def test_table_4_2_ensemble_and_first_candidate():
    # Four members of error 0.4 whose wrong votes per example are (3, 2, 1, 1, 1); the
    # candidate h'_0 (error 0.4) is wrong on examples 1 and 2 — the assignment that
    # reproduces every surviving value of the table's E and E + h'_0 rows.
    members = [wrong_on(s, 5) for s in ({0, 1}, {0, 2}, {0, 3}, {1, 4})]
    row = table_row(members, 5, sigmoid_a=12.0)
    assert {k: round(v, 2) for k, v in row.items()} == {
        "l01": 0.40, "lM": 0.40, "lM2": 0.20, "lsig": 0.30, "lC": 0.40
    }
    plus_h0 = table_row(members + [wrong_on({1, 2}, 5)], 5, sigmoid_a=12.0)
    assert round(plus_h0["l01"], 2) == 0.40
    assert round(plus_h0["lM"], 2) == 0.40
    assert round(plus_h0["lM2"], 2) == 0.19
    assert round(plus_h0["lC"], 2) == 0.38


def test_margin_losses_see_what_zero_one_cannot():
    # Table 4.1's point: adding a member that is right where the ensemble is wrong does
    # not flip a vote (zero-one is flat) but does lower the margin losses.
    members = [wrong_on({0, 1}, 3), wrong_on({0, 2}, 3), wrong_on({1, 2}, 3)]
    y = np.zeros(3, dtype=int)
    good, bad = wrong_on(set(), 3), wrong_on({0, 1, 2}, 3)
    for loss in (SquaredMarginLoss(), SigmoidMarginLoss(), CBoundLoss()):
        with_good = weighted_ensemble_loss(loss, y, np.stack(members + [good]), np.ones(4))
        with_bad = weighted_ensemble_loss(loss, y, np.stack(members + [bad]), np.ones(4))
        assert with_good < with_bad
    zero_one = [
        weighted_ensemble_loss(ZeroOneLoss(), y, np.stack(members + [h]), np.ones(4))
        for h in (good, bad)
    ]
    assert zero_one == [1.0, 1.0]


def test_zero_one_accepts_labels_and_probabilities():
    y = np.array([0, 1, 2])
    probabilities = np.array([[0.8, 0.1, 0.1], [0.6, 0.3, 0.1], [0.1, 0.2, 0.7]])
    assert ZeroOneLoss()(y, probabilities).tolist() == [0.0, 1.0, 0.0]
    assert ZeroOneLoss()(np.array(["a", "b"]), np.array(["a", "a"])).tolist() == [0.0, 1.0]


def test_zero_one_charges_a_tie_as_an_error_or_as_half_of_one():
    # Two members on three examples: both right, split, both wrong.
    members = [wrong_on({1, 2}, 3), wrong_on({2}, 3)]
    y, stacked = np.zeros(3, dtype=int), np.stack(members)
    as_error = ZeroOneLoss().ensemble_examples(y, stacked.sum(axis=0), 2.0)
    as_half = ZeroOneLoss(tie="half").ensemble_examples(y, stacked.sum(axis=0), 2.0)
    assert as_error.tolist() == [0.0, 1.0, 1.0]
    assert as_half.tolist() == [0.0, 0.5, 1.0]
    assert weighted_ensemble_loss(ZeroOneLoss(tie="half"), y, stacked, np.ones(2)) == 0.5


def test_zero_one_refuses_an_unknown_tie_rule_by_name():
    with pytest.raises(ValueError, match="'zero-one'.*tie must be one of error, half, got 'coin'"):
        registry().create("loss", "zero-one", tie="coin")


@pytest.mark.parametrize("tie", [["half"], {"half": 1}, 0.5])
def test_zero_one_refuses_a_tie_rule_that_is_not_a_name_as_an_option(tie):
    """A list (tie: [half]) raised 'unhashable type', reported as the loss's bug."""
    with pytest.raises(ComponentOptionError,
                       match=re.escape(f"tie must be one of error, half, got {tie!r}")):
        registry().create("loss", "zero-one", tie=tie)


def test_zero_one_ties_a_vote_as_the_ensemble_predicts_it():
    """Agnostic Bayes weights 0.45 + 0.05 and 0.2 + 0.2 + 0.1 (repro seed 132) sum to
    vote totals one ulp apart: the loss counted the true class as winning while the
    ensemble, treating the totals as tied, predicted the other class (mean probability)."""
    posterior = {0: 0.45, 1: 0.05, 2: 0.2, 3: 0.2, 4: 0.1}
    ensemble = Ensemble.from_weights(posterior, combination="vote")
    assert ensemble.weights == (0.45000000000000007, 0.05000000000000001, 0.20000000000000004,
                                0.20000000000000004, 0.10000000000000002)  # as in the repro
    # Members 0 and 1 vote for the true class 1, members 2 to 4 for class 0.
    predictions = [np.array([[0.45, 0.55]])] * 2 + [np.array([[0.7, 0.3]])] * 3
    y = np.array([1])
    assert ensemble.combine(predictions, vote_classes=np.arange(2)).tolist() == [0]
    assert ensemble_loss_of(ZeroOneLoss(), y, predictions, ensemble) == 1.0
    assert ensemble_loss_of(ZeroOneLoss(tie="half"), y, predictions, ensemble) == 0.5


def test_zero_one_still_counts_a_lead_of_a_whole_vote():
    totals = np.array([[3.0, 2.0], [2.0, 3.0], [1e-9, 0.0]])
    y = np.zeros(3, dtype=int)
    assert ZeroOneLoss().ensemble_examples(y, totals, 5.0).tolist() == [0.0, 1.0, 0.0]


@pytest.mark.parametrize(
    ("name", "options", "message"),
    [("huber", {"c": 0}, "huber: c must be a finite number > 0, got 0"),
     ("huber", {"c": float("nan")}, "huber: c must be a finite number > 0, got nan"),
     ("huber", {"scale": 0}, "huber: scale must be a finite number > 0, got 0"),
     ("huber", {"scale": float("inf")}, "huber: scale must be a finite number > 0, got inf"),
     ("tukey", {"c": -4.685}, "tukey: c must be a finite number > 0, got -4.685"),
     ("tukey", {"scale": -1.0}, "tukey: scale must be a finite number > 0, got -1.0"),
     ("sigmoid-margin", {"a": -10}, "sigmoid-margin: a must be a finite number > 0, got -10"),
     ("sigmoid-margin", {"a": float("inf")},
      "sigmoid-margin: a must be a finite number > 0, got inf"),
     ("sigmoid-margin", {"epsilon": 0}, "sigmoid-margin: epsilon must be a number in (0, 1)"),
     ("log-loss", {"eps": 2}, "log-loss: eps must be a number in (0, 1), got 2"),
     ("log-loss", {"eps": 0}, "log-loss: eps must be a number in (0, 1), got 0"),
     ("log-loss", {"eps": "1e-15"}, "log-loss: eps must be a number in (0, 1), got '1e-15'")],
)
def test_loss_options_are_checked_when_the_loss_is_built(name, options, message):
    """They were not: scale 0 made NaN blamed on the strategy, huber c 0 a loss of 0,
    tukey c < 0 a constant, sigmoid a < 0 an inverted loss and log-loss eps 2 a loss of 0."""
    with pytest.raises(ValueError, match=re.escape(message)):
        registry().create("loss", name, **options)


@pytest.mark.parametrize(
    ("name", "options"),
    [("huber", {"c": 2.0, "scale": None}), ("tukey", {"scale": 0.5}),
     ("sigmoid-margin", {"a": None}), ("sigmoid-margin", {"a": 5, "epsilon": 0.01}),
     ("log-loss", {"eps": 1e-6})],
)
def test_meaningful_loss_options_are_kept(name, options):
    loss = registry().create("loss", name, **options)
    assert {key: getattr(loss, key) for key in options} == options


def test_a_study_refuses_a_bad_loss_option_naming_the_loss_and_the_option():
    from ConfigSpace import ConfigurationSpace

    from ensembo.errors import ComponentOptionError
    from ensembo.study import Study

    space = ConfigurationSpace(space={"x": (0.0, 1.0)})
    spec = {"name": "segor", "slots": 3, "loss": {"name": "huber", "scale": 0}}
    with pytest.raises(ComponentOptionError, match="loss 'huber'.*huber: scale must be a finite"):
        Study(space, surrogate=None, ensemble=spec, task="regression",
              validation_targets=np.linspace(0.0, 1.0, 20))


def test_multiclass_sigmoid_uses_the_strongest_wrong_class():
    y = np.array([0])
    # Votes (true, wrong, wrong) = (2, 1, 1) vs (2, 2, 0): the second is a tie.
    spread = np.array([[[2.0, 1.0, 1.0]]])
    tied = np.array([[[2.0, 2.0, 0.0]]])
    loss = SigmoidMarginLoss(a=10.0)
    assert loss.ensemble_loss(y, spread[0], 4.0) < loss.ensemble_loss(y, tied[0], 4.0)
    assert float(loss.ensemble_loss(y, tied[0], 4.0)) == pytest.approx(0.5)


def test_log_loss_of_an_ensemble_averages_probabilities():
    y = np.array([0, 1])
    first = np.array([[0.9, 0.1], [0.5, 0.5]])
    second = np.array([[0.5, 0.5], [0.1, 0.9]])
    value = weighted_ensemble_loss(LogLoss(), y, np.stack([first, second]), np.ones(2))
    assert value == pytest.approx(-np.log(0.7))
    assert LogLoss()(y, first) == pytest.approx([-np.log(0.9), -np.log(0.5)])


def test_c_bound_is_ensemble_level_only():
    with pytest.raises(LossInputError, match="c-bound.*whole ensemble"):
        CBoundLoss()(np.zeros(2, dtype=int), wrong_on(set(), 2))


def test_regression_losses_on_residuals():
    y = np.zeros(4)
    predictions = np.array([0.5, -1.0, 2.0, 10.0])
    assert SquaredError()(y, predictions).tolist() == [0.25, 1.0, 4.0, 100.0]
    assert AbsoluteError()(y, predictions).tolist() == [0.5, 1.0, 2.0, 10.0]
    huber = HuberLoss(scale=1.0)(y, predictions)
    assert huber[:2] == pytest.approx([0.125, 0.5])
    assert huber[2] == pytest.approx(1.345 * (2.0 - 0.5 * 1.345))
    tukey = TukeyLoss(scale=1.0)(y, predictions)
    assert tukey[3] == pytest.approx(4.685**2 / 6)  # capped beyond c
    assert tukey[0] == pytest.approx(4.685**2 / 6 * (1 - (1 - (0.5 / 4.685) ** 2) ** 3))


def test_robust_losses_standardize_residuals_by_default():
    y = np.array([0.0, 10.0, 20.0, 30.0])
    loss = HuberLoss()
    assert loss(y, y + 100.0) == pytest.approx(HuberLoss(scale=float(np.std(y)))(y, y + 100.0))


def test_regression_ensemble_is_the_mean():
    y = np.array([1.0, 2.0])
    members = np.array([[0.0, 2.0], [2.0, 4.0]])
    assert weighted_ensemble_loss(SquaredError(), y, members, np.ones(2)) == pytest.approx(0.5)


def test_every_loss_is_registered():
    names = {"zero-one", "log-loss", "squared-margin", "sigmoid-margin", "c-bound",
             "mse", "mae", "huber", "tukey"}
    assert names <= set(registry().names("loss"))
    assert registry().create("loss", "huber", c=2.0).c == 2.0


@pytest.mark.parametrize(
    "loss", [ZeroOneLoss(), ZeroOneLoss(tie="half"), SquaredMarginLoss(), SigmoidMarginLoss()],
    ids=lambda loss: f"{type(loss).__name__}-{getattr(loss, 'tie', '')}")
@pytest.mark.parametrize("classes", [2, 4])
def test_adding_each_voter_shortcut_equals_the_direct_ensemble_loss(loss, classes):
    from ensembo.plugins.losses.ensemble_loss import SummedCandidates, prepare_candidates

    rng = np.random.default_rng(classes)
    y = rng.integers(0, classes, size=40)
    votes = np.stack([loss.contributions(p) for p in rng.random((15, 40, classes))])
    prepared = prepare_candidates(loss, votes)
    assert not isinstance(prepared, SummedCandidates)
    for size in (0, 1, 6):
        total = votes[:size].sum(axis=0)
        direct = SummedCandidates(loss, votes).adding_each(y, total, float(size))
        assert prepared.adding_each(y, total, float(size)) == pytest.approx(direct)
        assert direct == pytest.approx(loss.ensemble_loss(y, total[None] + votes, size + 1.0))
