"""The ``tpe`` proposer: conditional-native, never-sampled branches, pending trials."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import numpy as np
import pytest
from ConfigSpace import (
    Categorical,
    ConfigurationSpace,
    EqualsCondition,
    Float,
    ForbiddenEqualsClause,
    Integer,
)

import ensembo.spaces
from ensembo.errors import ComponentOptionError
from ensembo.plugins.surrogates.tpe import TreeParzenProposer
from ensembo.plugins.surrogates.tpe.proposer import recency_weights
from ensembo.protocols import Proposer
from ensembo.registry import registry
from ensembo.spaces import Space
from ensembo.study import Study
from ensembo.trials import History, Trial, TrialState


def history_of(configs, losses, pending=()) -> History:
    history = History()
    for number, (config, loss) in enumerate(zip(configs, losses, strict=True)):
        history.put(
            Trial(number=number, config=config, state=TrialState.COMPLETE, loss=float(loss))
        )
    for config in pending:
        history.put(Trial(number=len(history), config=config, state=TrialState.RUNNING))
    return history


@pytest.fixture
def three_branches() -> Space:
    """Branch "c" opens a nested choice whose own child is two levels down."""
    space = ConfigurationSpace()
    learner = Categorical("learner", ["a", "b", "c"])
    a_x = Float("a_x", (0.0, 1.0))
    b_n = Integer("b_n", (1, 100), log=True)
    c_kind = Categorical("c_kind", ["u", "v"])
    c_v = Float("c_v", (1e-3, 1.0), log=True)
    space.add([learner, a_x, b_n, c_kind, c_v])
    space.add(
        [
            EqualsCondition(a_x, learner, "a"),
            EqualsCondition(b_n, learner, "b"),
            EqualsCondition(c_kind, learner, "c"),
            EqualsCondition(c_v, c_kind, "v"),
        ]
    )
    return Space(space)


def test_registered_as_a_surrogate_that_is_a_proposer():
    assert isinstance(registry().create("surrogate", "tpe", multivariate=True), Proposer)


@pytest.mark.parametrize(
    "options",
    [{"multivariate": False}, {"joint": False}, {"joint": True, "n_candidates": 1}],
)
def test_branches_never_sampled_are_still_proposed_validly(three_branches, options):
    space = three_branches
    rng = np.random.default_rng(0)
    configs = [{"learner": "a", "a_x": float(x)} for x in rng.random(30)]
    history = history_of(configs, [abs(c["a_x"] - 0.3) for c in configs])
    proposer = TreeParzenProposer(**options)
    proposed = proposer.propose(space, history, history.losses(), 300, rng)
    assert len(proposed) == 300
    assert all(space.validate(c) == c for c in proposed)
    # Every trial chose "a", below and above alike. Grouped by activity, l/g favours
    # the unexplored choices (their prior mass is diluted less in l than in g), as in
    # Optuna. The joint model scores a whole configuration, and "a" near a_x = 0.3
    # wins; its draws from l (one candidate each, no selection) still reach the
    # unexplored branches through the prior.
    assert {c["learner"] for c in proposed} >= {"b", "c"}
    assert any(c.get("c_kind") == "v" for c in proposed)  # down to the second level
    # Their hyperparameters have no observations: they come from the prior, spread out.
    b_values = np.array([c["b_n"] for c in proposed if c["learner"] == "b"])
    assert b_values.min() < 10 and b_values.max() > 10


def test_a_hyperparameter_is_modelled_only_where_it_was_active(three_branches):
    space = three_branches
    rng = np.random.default_rng(1)
    good = [{"learner": "b", "b_n": int(n)} for n in rng.integers(2, 5, size=5)]
    bad = [{"learner": "a", "a_x": float(x)} for x in rng.random(40)]
    history = history_of(good + bad, [0.0] * 5 + [1.0] * 40)
    proposed = TreeParzenProposer().propose(space, history, history.losses(), 200, rng)
    b_values = [c["b_n"] for c in proposed if c["learner"] == "b"]
    assert sum(c["learner"] == "b" for c in proposed) > 100
    assert np.median(b_values) <= 6


def test_pending_trials_count_against_their_region():
    space = Space(ConfigurationSpace(space={"x": (0.0, 1.0)}))
    rng = np.random.default_rng(2)
    configs = [{"x": float(x)} for x in np.linspace(0.05, 0.95, 19)]
    losses = [abs(c["x"] - 0.5) for c in configs]
    plain = history_of(configs, losses)
    crowded = history_of(
        configs, losses, pending=[{"x": 0.5 + d} for d in np.linspace(-0.04, 0.04, 9)]
    )
    near = {}
    for name, history in (("plain", plain), ("crowded", crowded)):
        proposed = TreeParzenProposer().propose(
            space, history, history.losses(), 400, np.random.default_rng(3)
        )
        near[name] = np.mean([abs(c["x"] - 0.5) < 0.05 for c in proposed])
    assert near["crowded"] < near["plain"]
    assert rng is not None


def test_forbidden_combinations_are_never_returned():
    configspace = ConfigurationSpace()
    kind = Categorical("kind", ["p", "q", "r"])
    configspace.add([kind, Float("x", (0.0, 1.0))])
    configspace.add(ForbiddenEqualsClause(kind, "r"))
    space = Space(configspace)
    configs = [{"kind": "p", "x": 0.1}, {"kind": "q", "x": 0.7}, {"kind": "p", "x": 0.2}]
    history = history_of(configs, [0.0, 1.0, 0.5])
    proposed = TreeParzenProposer().propose(
        space, history, history.losses(), 100, np.random.default_rng(4)
    )
    assert all(space.is_valid(c) and c["kind"] != "r" for c in proposed)


def test_a_forbidden_best_candidate_gives_way_to_the_next_best_not_a_prior_draw():
    """The clause ``a > b`` cuts through the favoured region around (10, 10): about a
    quarter of the old suggestions were prior draws landing anywhere."""
    space = ensembo.spaces.load({
        "params": {"a": {"type": "int", "low": 0, "high": 20},
                   "b": {"type": "int", "low": 0, "high": 20}},
        "forbidden": [{"relation": "a > b"}],
    })

    def distance(config):
        return abs(config["a"] - 10) + abs(config["b"] - 10)

    configs = space.sample(40, np.random.default_rng(0))
    configs += [{"a": 10, "b": 10}, {"a": 9, "b": 10}, {"a": 10, "b": 11}]
    history = history_of(configs, [distance(c) for c in configs])
    proposed = TreeParzenProposer().propose(
        space, history, history.losses(), 100, np.random.default_rng(1)
    )
    assert all(space.is_valid(c) for c in proposed)
    assert all(distance(c) <= 3 for c in proposed)


def test_in_a_study_it_beats_random_search_on_a_conditional_problem(tree_space):
    def objective(config):
        offset = 0.0 if config["branch"] == "b" else 0.5
        return offset + np.log10(config["shared"]) ** 2 / 9 + (config.get("only_b", 0.0) - 0.3) ** 2

    results = {}
    for name, surrogate in (("tpe", "tpe"), ("random", None)):
        best = [
            Study(tree_space, surrogate=surrogate, seed=seed)
            .optimize(objective, 40)
            .best_trial.loss
            for seed in range(4)
        ]
        results[name] = np.median(best)
    assert results["tpe"] < results["random"]


def test_recency_weights_fade_old_trials_only_beyond_the_window():
    np.testing.assert_array_equal(recency_weights(5, 25), np.ones(5))
    weights = recency_weights(30, 25)
    assert weights[0] == pytest.approx(1 / 30) and np.all(weights[-25:] == 1.0)
    assert np.all(np.diff(weights) >= 0)


@pytest.mark.parametrize(
    ("options", "message"), [({"gamma": 1.5}, "gamma"), ({"prior_weight": 0}, "prior_weight")]
)
def test_invalid_options_are_named(options, message):
    with pytest.raises(ValueError, match=message):
        TreeParzenProposer(**options)


@pytest.mark.parametrize(
    ("options", "message"),
    [({"floor_exponent": 0}, "floor_exponent"), ({"min_bandwidth": 1.0}, "min_bandwidth")],
)
def test_invalid_bandwidth_options_are_named(options, message):
    with pytest.raises(ValueError, match=message):
        TreeParzenProposer(**options)


def test_the_joint_model_keeps_a_branch_tied_to_the_shared_value():
    configspace = ConfigurationSpace()
    learner, shared = Categorical("learner", ["a", "b"]), Float("s", (0.0, 1.0))
    a_x, b_y = Float("a_x", (0.0, 1.0)), Float("b_y", (0.0, 1.0))
    configspace.add([learner, shared, a_x, b_y])
    configspace.add([EqualsCondition(a_x, learner, "a"), EqualsCondition(b_y, learner, "b")])
    space = Space(configspace)
    rng = np.random.default_rng(5)
    # Good trials lie on two spots where a_x equals the shared s: (0.2, 0.2), (0.8, 0.8).
    good = [
        {"learner": "a", "s": float(v), "a_x": float(v)}
        for v in np.repeat([0.2, 0.8], 5) + 0.01 * rng.standard_normal(10)
    ]
    bad = [{"learner": "a", "s": float(u), "a_x": float(v)} for u, v in rng.random((20, 2))]
    bad += [{"learner": "b", "s": float(u), "b_y": float(v)} for u, v in rng.random((20, 2))]
    history = history_of(good + bad, [0.0] * 10 + [1.0] * 40)  # gamma 0.2: 10 below

    def tied(joint: bool) -> float:
        proposer = TreeParzenProposer(joint=joint, gamma=0.2, n_candidates=1)  # draws from l
        proposed = proposer.propose(space, history, history.losses(), 300, rng)
        assert all(space.validate(c) == c for c in proposed)
        in_a = [c for c in proposed if c["learner"] == "a"]
        return np.mean([abs(c["a_x"] - c["s"]) < 0.2 for c in in_a])

    # Grouped by activity, s (always active) and a_x (branch "a") are modelled apart,
    # so draws mix the spots into (0.2, 0.8) and (0.8, 0.2); jointly they stay paired
    # (up to the prior component and kernel width).
    joint, apart = tied(joint=True), tied(joint=False)
    assert joint > apart + 0.2


@pytest.mark.parametrize(
    "library_path",
    sorted((Path(ensembo.spaces.__file__).parent / "library").glob("*.yaml")),
    ids=lambda path: path.stem,
)
def test_joint_proposals_over_library_spaces_are_valid(library_path):
    space = ensembo.spaces.load(library_path)
    rng = np.random.default_rng(7)
    configs = space.sample(30, rng)
    history = history_of(configs, rng.random(30))
    proposed = TreeParzenProposer().propose(space, history, history.losses(), 20, rng)
    assert len(proposed) == 20
    assert all(space.validate(c) == c for c in proposed)


def discrete_history():
    """60 trials of a 100 x 2 grid, crowded around the optimum (37, "a"), so that TPE's
    favourite candidates are mostly trials already run."""
    rng = np.random.default_rng(0)
    near = [{"i": int(i), "c": "a"} for i in range(30, 45)]
    drawn = zip(rng.integers(0, 100, 45), rng.choice(["a", "b"], 45), strict=True)
    far = [{"i": int(i), "c": str(c)} for i, c in drawn]
    configs = list({tuple(sorted(c.items())): c for c in near + far}.values())
    return history_of(configs, [abs(c["i"] - 37) + (c["c"] == "b") for c in configs])


def test_on_a_discrete_space_the_suggestions_are_unseen():
    """The best *unseen* candidate, as the acquisition optimizers return: a seen one
    was refused by the Suggester and replaced by a prior draw."""
    space = Space(ConfigurationSpace(space={"i": (0, 99), "c": ["a", "b"]}))
    history = discrete_history()
    proposed = TreeParzenProposer().propose(
        space, history, history.losses(), 20, np.random.default_rng(1)
    )
    assert not any(history.holds_config(c) for c in proposed)
    assert np.median([abs(c["i"] - 37) for c in proposed]) <= 10  # still near the optimum


def test_in_a_study_on_a_discrete_space_its_suggestions_are_not_replaced_by_random_draws(caplog):
    """The audit's case: 33 of 55 model-based trials were prior draws."""
    space = ConfigurationSpace(space={"i": (0, 99), "c": ["a", "b"]})
    study = Study(space, surrogate="tpe", seed=0)
    with caplog.at_level(logging.INFO, logger="ensembo.suggestion"):
        study.optimize(lambda c: abs(c["i"] - 37) + (c["c"] == "b"), 40)
    assert "drew a random one" not in caplog.text


def test_when_every_candidate_is_seen_the_best_seen_one_is_returned():
    """Nothing new to offer: the caller refuses it and draws, as for an optimizer's fill."""
    space = Space(ConfigurationSpace(space={"c": ["a", "b"]}))
    history = history_of([{"c": "a"}, {"c": "b"}], [0.0, 1.0])
    proposed = TreeParzenProposer(n_candidates=4).propose(
        space, history, history.losses(), 3, np.random.default_rng(0)
    )
    assert len(proposed) == 3 and all(history.holds_config(c) for c in proposed)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"multivariate": "false"}, "tpe: multivariate must be true or false, got 'false'"),
        ({"joint": "false"}, "tpe: joint must be true or false, got 'false'"),
        ({"joint": 0}, "tpe: joint must be true or false, got 0"),
        ({"n_candidates": 2.5}, "tpe: n_candidates must be an integer >= 1, got 2.5"),
        ({"max_below": 0}, "tpe: max_below must be an integer >= 1, got 0"),
        ({"recency_window": True}, "tpe: recency_window must be an integer >= 1, got True"),
        ({"gamma": "0.2"}, "tpe: gamma must be a number in (0, 1), got '0.2'"),
        ({"gamma": float("nan")}, "tpe: gamma must be a number in (0, 1), got nan"),
        ({"min_bandwidth": None}, "tpe: min_bandwidth must be a number in (0, 1), got None"),
        ({"prior_weight": "1"}, "tpe: prior_weight must be a finite number > 0, got '1'"),
        ({"floor_exponent": float("inf")}, "tpe: floor_exponent must be a finite number > 0"),
    ],
)
def test_options_of_the_wrong_type_are_refused_naming_the_option(options, message):
    """``"false"`` acted as true, 2.5 candidates crashed the first model-based ask, and
    ``gamma: "0.2"`` raised a bare TypeError."""
    with pytest.raises(ComponentOptionError, match=re.escape(message)):
        registry().create("surrogate", "tpe", **options)


def test_valid_options_of_every_type_are_accepted():
    proposer = TreeParzenProposer(
        multivariate=False, joint=False, n_candidates=np.int64(3), gamma=0.5, prior_weight=2
    )
    assert proposer.settings.n_candidates == 3 and proposer.settings.multivariate is False
