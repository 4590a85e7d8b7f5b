"""Ensemble strategies on hand-made pools: what each one selects and what it tells the surrogate."""

from __future__ import annotations

import re

import numpy as np
import pytest

from ensembo.ensemble import EnsembleContext
from ensembo.plugins.ensembles.agnostic_bayes import AgnosticBayes
from ensembo.plugins.ensembles.eo import EnsembleOptimization
from ensembo.plugins.ensembles.esmbo import ESMBO
from ensembo.plugins.ensembles.pool import MissingPredictionsError, build_pool
from ensembo.plugins.ensembles.posthoc import PostHocSelection
from ensembo.plugins.ensembles.round_robin import RoundRobinEnsemble
from ensembo.plugins.ensembles.segor import SEGOR
from ensembo.plugins.losses.classification import ZeroOneLoss
from ensembo.plugins.losses.ensemble_loss import weighted_ensemble_loss
from ensembo.plugins.losses.margins import SquaredMarginLoss
from ensembo.trials import History, Trial, TrialState

# Three models each wrong on a different third of six examples: any two tie, all three
# vote perfectly. D is worse than each of them alone.
THIRDS = [{0, 1}, {2, 3}, {4, 5}, {0, 1, 2}]


def test_posthoc_finds_the_complementary_triple(make_classification):
    history, context = make_classification(THIRDS, 6)
    ensemble = PostHocSelection().ensemble(history, context)
    assert set(ensemble.members) == {0, 1, 2}
    predictions = np.stack([history[n].predictions for n in ensemble.members])
    assert weighted_ensemble_loss(ZeroOneLoss(), context.y_true, predictions, ensemble.weights) == 0


def test_posthoc_bagging_and_log_loss_give_valid_ensembles(make_classification):
    history, context = make_classification(THIRDS, 6)
    for strategy in (PostHocSelection(n_bags=10), PostHocSelection(loss="log-loss")):
        ensemble = strategy.ensemble(history, context)
        assert set(ensemble.members) <= {0, 1, 2, 3}
        assert sum(ensemble.weights) == pytest.approx(1.0)


def test_agnostic_bayes_strategy_reproduces_table_6_1(make_classification):
    history, context = make_classification([{0}, {1}, {2}, {2}], 3)
    ensemble = AgnosticBayes(n_samples=20000).ensemble(history, context)
    assert ensemble.members == (0, 1, 2, 3)
    assert ensemble.weights == pytest.approx([0.31, 0.31, 0.19, 0.19], abs=0.02)


def test_agnostic_bayes_tunes_rho_on_the_grid(make_classification):
    history, context = make_classification(THIRDS, 6)
    strategy = AgnosticBayes(rho="tune", n_samples=200)
    strategy.ensemble(history, context)
    assert 0.1 <= strategy.chosen_rho <= 0.8


def test_esmbo_targets_are_bootstrap_risks_in_round_robin(make_classification):
    history, context = make_classification(THIRDS, 6, budget=10)
    strategy = ESMBO()
    assert strategy.size(context) == 5
    counts = strategy.bootstrap_counts(context, 6)
    losses = np.stack([ZeroOneLoss()(context.y_true, t.predictions) for t in history], axis=1)
    proposer = len(history) % 5
    assert strategy.targets(history, context) == pytest.approx(counts[proposer] @ losses / 6)
    history.put(Trial(number=4, config={}, state=TrialState.RUNNING))
    assert strategy.proposer_index(history, context) == (proposer + 1) % 5
    assert strategy.targets(history, context).shape == (4,)


def test_esmbo_ensemble_is_the_multiset_of_bootstrap_winners(make_classification):
    history, context = make_classification(THIRDS, 6)
    strategy = ESMBO(n_bootstraps=40)
    ensemble = strategy.ensemble(history, context)
    risks = strategy.risks(build_pool(history, context, "esmbo"), context)
    lowest = risks == risks.min(axis=1, keepdims=True)
    votes = (lowest / lowest.sum(axis=1, keepdims=True)).sum(axis=0)  # ties split evenly
    assert dict(zip(ensemble.members, ensemble.weights, strict=True)) == pytest.approx(
        {n: v / 40 for n, v in enumerate(votes) if v > 0}
    )
    weights = dict(zip(ensemble.members, ensemble.weights, strict=True))
    assert weights.get(3, 0.0) < weights[0]  # D's errors contain A's: it can only tie A


@pytest.mark.parametrize("replacement, expected", [(False, [3, 1, 2]), (True, [3, 0, 1])])
def test_eo_refills_slots_with_zero_one_and_reaches_the_perfect_vote(
    make_classification, replacement, expected
):
    history, context = make_classification([{0, 1}, {2, 3}, {0, 1}, {4, 5}], 6)
    strategy = EnsembleOptimization(size=3, replacement=replacement)
    for trial in history:
        strategy.update(history, trial, context)
    # Slots 0, 1, 2 are re-optimized by trials 0, 1, 2, then slot 0 again by trial 3.
    # With replacement slot 1 takes a second copy of model 0 (a tied vote is an error,
    # so the copy beats adding model 1); without, each slot takes the new trial.
    assert strategy.members == expected
    ensemble = strategy.ensemble(history, context)
    predictions = np.stack([history[n].predictions for n in ensemble.members])
    assert weighted_ensemble_loss(ZeroOneLoss(), context.y_true, predictions, ensemble.weights) == 0


def test_eo_members_stay_distinct_without_replacement(make_classification):
    # Three models wrong on different thirds. With replacement the second slot takes a
    # copy of model 0 (a tied vote is an error) and the ensemble stays stuck on model 0's
    # errors; the thesis's EO keeps the slots distinct and reaches the perfect vote.
    history, context = make_classification([{0, 1}, {2, 3}, {4, 5}], 6)
    for replacement, members, error in ((False, [0, 1, 2], 0.0), (True, [0, 0, 1], 2 / 6)):
        strategy = EnsembleOptimization(size=3, replacement=replacement)
        ensemble = strategy.ensemble(history, context)
        assert strategy.members == members
        predictions = np.stack([history[n].predictions for n in ensemble.members])
        assert weighted_ensemble_loss(
            ZeroOneLoss(), context.y_true, predictions, ensemble.weights) == pytest.approx(error)


def squared_margin_of(history, context, members):
    predictions = np.stack([history[n].predictions for n in members])
    weights = np.ones(len(members))
    return weighted_ensemble_loss(SquaredMarginLoss(), context.y_true, predictions, weights)


@pytest.mark.parametrize("replacement", [False, True])
def test_eo_targets_are_the_loss_of_the_ensemble_without_the_next_slot(
    make_classification, replacement
):
    history, context = make_classification(THIRDS, 6)
    strategy = EnsembleOptimization(size=3, replacement=replacement)
    targets = strategy.targets(history, context)  # catches up, then labels for trial 4
    slot = 4 % 3
    others = [m for i, m in enumerate(strategy.members) if i != slot]
    # Without replacement E ∪ {h} is a set union: a member adds nothing.
    joined = [others if h in others and not replacement else [*others, h] for h in range(4)]
    expected = [squared_margin_of(history, context, members) for members in joined]
    assert targets == pytest.approx(expected)


def test_eo_post_rebuilds_by_forward_selection(make_classification):
    history, context = make_classification(THIRDS, 6)
    ensemble = EnsembleOptimization(size=2, post=True).ensemble(history, context)
    assert set(ensemble.members) == {0, 1, 2}


@pytest.mark.parametrize(("budget", "size", "warns"), [
    (20, "fixed", True),  # 12 slots, each revisited once or twice
    (60, "fixed", False),  # five visits a slot
    (None, "fixed", False),  # no budget known: nothing to compare with
    (20, "grow", False),  # a growing ensemble has no fixed slots to fill
    (20, "replacement", False),  # a revisited slot can copy the best model
])
def test_a_budget_too_short_for_the_slots_is_warned_about_once(
    make_classification, recwarn, budget, size, warns
):
    history, context = make_classification(THIRDS, 6, budget=budget)
    strategy = RoundRobinEnsemble(
        target_loss="squared-margin", refill_loss="zero-one",
        size="fixed" if size == "replacement" else size, replacement=size == "replacement")
    for _ in range(3):
        strategy.targets(history, context)
    messages = [str(w.message) for w in recwarn if issubclass(w.category, UserWarning)]
    if warns:
        assert len(messages) == 1 and "12 slots with a budget of 20 trials" in messages[0]
        assert "at least 60 trials" in messages[0]
    else:
        assert messages == []


def test_a_resumed_strategy_replays_the_same_slots(make_classification):
    history, context = make_classification([{0, 1}, {2, 3}, {0, 1}, {4, 5}, {1}], 6)
    live = EnsembleOptimization(size=3)
    for trial in history:
        live.update(history, trial, context)
    resumed = EnsembleOptimization(size=3)
    assert resumed.ensemble(history, context) == live.ensemble(history, context)


def regression_context(m: int) -> EnsembleContext:
    return EnsembleContext(y_true=np.zeros(m), loss="mse", task="regression", seed=0)


def test_segor_grow_adds_a_model_that_cancels_the_error(make_history):
    context = regression_context(2)
    history = make_history([np.array([1.0, -1.0]), np.array([-1.0, 1.0])], [1.0, 1.0])
    strategy = SEGOR(size="grow")
    ensemble = strategy.ensemble(history, context)
    assert ensemble.members == (0, 1)


def test_segor_dynamic_deletes_a_slot_that_hurts(make_history):
    context = regression_context(2)
    history = make_history(
        [np.array([1.0, -1.0]), np.array([-1.0, 1.0]), np.array([3.0, 3.0])], [1.0, 1.0, 9.0]
    )
    strategy = SEGOR(size="dynamic")
    strategy.members, strategy._absorbed = [0, 1, 2], {0, 1}
    strategy.update(history, history[2], context)  # trial 2 works on slot 2 % 3 = 2
    assert strategy.members == [0, 1]


def test_segor_fixed_with_robust_losses_beats_the_single_best(make_history):
    rng = np.random.default_rng(0)
    truth = rng.normal(size=50)
    predictions = [truth + rng.normal(scale=1.0, size=50) for _ in range(15)]
    history = make_history(predictions, [float(np.mean((p - truth) ** 2)) for p in predictions])
    context = EnsembleContext(y_true=truth, loss="mse", task="regression", seed=0)
    for loss in ("mse", "huber", "tukey"):
        strategy = SEGOR(size="fixed", slots=5, loss=loss)
        ensemble = strategy.ensemble(history, context)
        members = np.stack([history[n].predictions for n in ensemble.members])
        mean = np.tensordot(ensemble.weights, members, 1)
        assert np.mean((mean - truth) ** 2) < history.best().loss


def test_strategies_for_the_wrong_task_say_which_to_use(make_history):
    context = regression_context(2)
    history = make_history([np.array([1.0, -1.0])], [1.0])
    with pytest.raises(ValueError, match="'eo' is for classification.*use segor"):
        EnsembleOptimization().ensemble(history, context)


@pytest.mark.parametrize(
    "strategy", [PostHocSelection(), AgnosticBayes(), ESMBO(), EnsembleOptimization(), SEGOR()],
    ids=lambda s: s.name,
)
def test_missing_predictions_fail_naming_the_strategy(strategy):
    history = History([Trial(number=0, config={}, state=TrialState.COMPLETE, loss=0.5)])
    context = EnsembleContext(y_true=np.zeros(3), loss="zero-one", task="classification")
    with pytest.raises(MissingPredictionsError, match=f"{strategy.name!r}.*trials \\[0\\]"):
        strategy.ensemble(history, context)
    with pytest.raises(MissingPredictionsError, match=f"{strategy.name!r}.*validation_targets"):
        strategy.ensemble(history, EnsembleContext())


@pytest.mark.parametrize(
    "strategy", [PostHocSelection(), AgnosticBayes(n_samples=50), ESMBO(), EnsembleOptimization()],
    ids=lambda s: s.name,
)
def test_pending_trials_are_left_out_of_targets_and_ensembles(strategy, make_classification):
    history, context = make_classification(THIRDS, 6, pending=2)
    assert strategy.targets(history, context).shape == (4,)
    assert set(strategy.ensemble(history, context).members) <= {0, 1, 2, 3}


def test_label_predictions_are_turned_into_votes(make_history):
    y = np.array([0, 1, 1, 0])
    history = make_history([np.array([0, 1, 0, 0]), np.array([0, 0, 1, 0]), np.array([1, 1, 1, 0])],
                           [0.25, 0.25, 0.25])
    context = EnsembleContext(y_true=y, loss="zero-one", task="classification",
                              classes=np.array([0, 1]))
    ensemble = PostHocSelection().ensemble(history, context)
    assert set(ensemble.members) == {0, 1, 2}


@pytest.mark.parametrize(
    ("spec", "message"),
    [({"name": "agnostic-bayes", "n_samples": -5}, "n_samples must be an integer >= 1, got -5"),
     ({"name": "agnostic-bayes", "n_samples": 0}, "n_samples must be an integer >= 1, got 0"),
     ({"name": "agnostic-bayes", "alpha": -1}, "alpha must be a finite number >= 0, got -1"),
     # inf overflowed at the first tell, after the trial was recorded; True read as 1
     ({"name": "agnostic-bayes", "sampler": "dirichlet", "alpha": float("inf")},
      "alpha must be a finite number >= 0, got inf"),
     ({"name": "agnostic-bayes", "rho": float("inf")}, "rho must be a finite number > 0"),
     ({"name": "agnostic-bayes", "rho": True}, "rho must be a finite number > 0 or 'tune'"),
     # a raw TypeError naming nothing, or silently truncated to a whole number
     ({"name": "posthoc", "start": "3"}, "posthoc: start must be an integer >= 1, got '3'"),
     ({"name": "posthoc", "start": 2.5}, "posthoc: start must be an integer >= 1, got 2.5"),
     ({"name": "posthoc", "iterations": None}, "iterations must be an integer >= 0, got None"),
     ({"name": "posthoc", "n_bags": True}, "n_bags must be an integer >= 0, got True"),
     ({"name": "posthoc", "bag_fraction": "0.5"}, "bag_fraction must be a number in (0, 1]"),
     ({"name": "segor", "size": "grow", "max_size": 0}, "max_size must be an integer >= 1"),
     ({"name": "eo", "size": "3"}, "eo: size must be an integer >= 1, got '3'"),
     ({"name": "esmbo", "n_bootstraps": "4"}, "n_bootstraps must be an integer >= 1, got '4'"),
     ({"name": "eo", "post": "no"}, "eo: post must be true or false, got 'no'"),
     ({"name": "segor", "start": -1, "post": True}, "segor: start must be an integer >= 0"),
     # options that change nothing were silently ignored
     ({"name": "segor", "max_size": 2}, "segor: max_size bounds size grow or dynamic"),
     ({"name": "segor", "start": 5}, "segor: start 5 is where the post-hoc rebuild starts")],
)
def test_bad_strategy_options_are_refused_when_built(spec, message):
    """They failed after trials (a string size in a comparison, a negative sample count),
    gave no ensemble (n_samples 0, max_size 0) or read 'no' as true."""
    from ensembo import components
    from ensembo.errors import ComponentOptionError

    with pytest.raises(ComponentOptionError, match=re.escape(message)):
        components.build("ensemble_strategy", spec)


def test_eo_refill_ties_ignore_float_noise_and_keep_the_earliest_trial(make_history):
    """Trials 0 and 3 give slot 0 the same zero-one loss and the same squared margin, 28/81,
    summed in another order: 0.34567901234567905 for trial 0, 0.345679012345679 for
    trial 3. The documented rule keeps trial 0, the earliest (and the slot's occupant)."""
    labels = [[1, 0, 1, 1, 0, 0, 0, 1, 1], [0, 0, 1, 0, 0, 0, 1, 1, 0],
              [1, 0, 0, 1, 1, 1, 0, 1, 1], [1, 0, 1, 0, 0, 1, 1, 1, 0]]
    history = make_history([np.eye(2)[row] for row in labels])
    context = EnsembleContext(y_true=np.zeros(9, dtype=int), loss="zero-one",
                              task="classification", classes=np.array([0, 1]))
    strategy = EnsembleOptimization(size=3)
    for trial in history:
        strategy.update(history, trial, context)
    assert strategy.members == [0, 1, 2]


def test_greedy_ties_ignore_float_noise_and_take_the_earliest_trial(make_history):
    """Three votes of trial 0 plus one of trial 2, or of trial 4, give the same margins on
    other examples: equal squared margins, summed in another order. The step takes
    trial 2, the earliest, not trial 4, which the noise makes lower."""
    labels = [[0, 0, 0, 1, 0], [0, 0, 1, 1, 0], [1, 0, 1, 0, 1], [1, 1, 0, 0, 1],
              [1, 1, 1, 0, 0]]
    history = make_history([np.eye(2)[row] for row in labels])
    context = EnsembleContext(y_true=np.zeros(5, dtype=int), loss="squared-margin",
                              task="classification", classes=np.array([0, 1]))
    ensemble = PostHocSelection(start=1, iterations=3).ensemble(history, context)
    assert dict(zip(ensemble.members, ensemble.weights, strict=True)) == {0: 0.75, 2: 0.25}


def test_segor_action_ties_ignore_float_noise_and_prefer_replacing(make_history):
    """At trial 3, replacing slot 1 and growing by a copy of trial 0 both give a mean
    absolute error of 0.15, the growth computed as 0.14999999999999997: the documented
    order (replace, shrink, grow) decides, not the noise."""
    predictions = [[-0.3, -0.1, -0.3, -0.7], [-0.3, -0.1, -0.7, -0.3],
                   [0.7, 0.3, 0.3, 0.1], [0.3, 0.3, 0.7, 0.1]]
    history = make_history([np.array(p) for p in predictions])
    ensemble = SEGOR(size="dynamic", loss="mae").ensemble(history, regression_context(4))
    assert ensemble.members == (0, 2) and ensemble.weights == (0.5, 0.5)


def test_segor_post_starts_from_an_empty_ensemble_as_pheg(make_history):
    """Roschewitz et al.'s PHEG begins empty (seed 004 L236): two models that cancel each
    other. The 3-best start of EO-post would keep the third, biased one."""
    context = regression_context(2)
    history = make_history([np.array([1.0, -1.0]), np.array([-1.0, 1.0]),
                            np.array([1.2, 1.2])], [1.0, 1.0, 1.44])
    ensemble = SEGOR(post=True).ensemble(history, context)
    assert ensemble.members == (0, 1) and ensemble.weights == (0.5, 0.5)
    assert 2 in SEGOR(post=True, start=3).ensemble(history, context).members


@pytest.mark.parametrize(("strategy", "loss", "combination", "size"), [
    (EnsembleOptimization(size=3), "log-loss", "vote", 3),  # refilled by zero-one
    (EnsembleOptimization(size=3, post=True), "log-loss", "vote", None),
    (PostHocSelection(loss="log-loss"), "zero-one", "average", None),
    (PostHocSelection(), "zero-one", "vote", None),
    (AgnosticBayes(n_samples=50), "log-loss", "average", None),
    (ESMBO(n_bootstraps=7), "zero-one", "vote", 7),  # the multiset of 7 winners
], ids=["eo", "eo-post", "posthoc-own-loss", "posthoc", "agnostic-bayes", "esmbo"])
def test_ensembles_say_how_their_strategy_combined_them(
    make_classification, strategy, loss, combination, size
):
    history, context = make_classification(THIRDS, 6, loss=loss)
    ensemble = strategy.ensemble(history, context)
    assert ensemble.combination == combination
    assert ensemble.size == pytest.approx(size or sum(ensemble.counts))


def test_agnostic_bayes_tunes_rho_with_the_sigmoid_of_the_ensemble_size(make_history):
    """Tuned on sigmoid-margin, each ρ's ensemble must be scored with the scale solved
    for its size (its members), not for a size of 1 (the normalized weights)."""
    from ensembo.plugins.ensembles.agnostic_bayes import RHO_GRID
    from ensembo.plugins.losses.margins import SigmoidMarginLoss

    rng = np.random.default_rng(3)
    n, m = int(rng.integers(4, 8)), int(rng.integers(6, 12))
    y = rng.integers(0, 2, m)
    predictions = []
    for _ in range(n):
        wrong = rng.random(m) < rng.uniform(0.1, 0.45)
        predictions.append(np.eye(2)[np.where(wrong, 1 - y, y)])
    history = make_history(predictions)
    context = EnsembleContext(y_true=y, loss="sigmoid-margin", task="classification",
                              classes=np.array([0, 1]), seed=1)

    def loss_at(rho):
        ensemble = AgnosticBayes(rho=rho, n_samples=100).ensemble(history, context)
        members = np.stack([history[t].predictions for t in ensemble.members])
        counts = np.asarray(ensemble.weights) * len(ensemble)
        return weighted_ensemble_loss(SigmoidMarginLoss(), y, members, counts)

    strategy = AgnosticBayes(rho="tune", n_samples=100)
    strategy.ensemble(history, context)
    assert strategy.chosen_rho == min(RHO_GRID, key=loss_at)
