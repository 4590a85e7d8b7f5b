"""Conformance of surrogates, and of surrogates that bring their own proposer (TPE)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from ensembo import spaces
from ensembo.conformance.check_run import CheckRun, require
from ensembo.conformance.search import require_some_distinct_valid
from ensembo.conformance.synthetic import CONDITIONAL_SPACE, FLAT_SPACE, synthetic_problem
from ensembo.protocols import (
    DifferentiableSurrogate,
    Proposer,
    Resumable,
    SampledSurrogate,
    Surrogate,
)
from ensembo.registry import Registry
from ensembo.trials import History, Trial, TrialState

_SIZES = (2, 25)  # a study models from two completed trials on


def _posterior_problem(prediction: Any, n: int, method: str = "predict") -> str | None:
    """What is wrong with ``method``'s posterior for ``n`` points, if anything; a result
    that is not a pair (one (n, 2) array) is a finding, not a crash of the check."""
    try:
        mean, variance = prediction
    except (TypeError, ValueError):
        return f"{method} gave {_described(prediction)}, expected (mean, variance)"
    mean, variance = np.asarray(mean), np.asarray(variance)
    if mean.shape != (n,) or variance.shape != (n,):
        return f"{method} gave shapes {mean.shape} and {variance.shape}, expected ({n},) each"
    return _values_problem(mean, variance, method)


def _values_problem(mean: np.ndarray, variance: np.ndarray, method: str) -> str | None:
    if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(variance))):
        return f"{method} gave non-finite means or variances"
    if np.any(variance < 0):
        return f"{method} gave a negative variance ({variance.min():.3g})"
    return None


def _described(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    return type(value).__name__


def _fitted(surrogate: Any, batch, y: np.ndarray, seed: int) -> Any:
    surrogate.fit(batch, y, np.random.default_rng(seed))
    return surrogate


def check_surrogate(
    surrogate: Any, *, seed: int = 0, registry: Registry | None = None
) -> list[str]:
    """Check a surrogate (or a proposer-type surrogate such as TPE) as a study uses it.

    Returns the names of the checks passed; raises :class:`ConformanceError` listing
    every failed one.
    """
    checks = CheckRun("surrogate", surrogate, registry)
    first = checks.first((Surrogate, Proposer), "has no fit(batch, y, rng) and "
                         "predict(batch), nor propose(space, history, targets, n, rng)")
    if first is None:
        return checks.done()
    if not isinstance(first, Surrogate):
        _proposer_checks(checks, seed)
        return checks.done()
    for label, source in (("flat", FLAT_SPACE), ("conditional", CONDITIONAL_SPACE)):
        _fit_predict_checks(checks, label, spaces.load(source), seed)
    _optional_protocol_checks(checks, first, seed)
    with checks.check("in a study, conditional space"):
        _run_study(checks, seed)
    return checks.done()


def _fit_predict_checks(checks: CheckRun, label: str, space: spaces.Space, seed: int) -> None:
    """Shapes, finiteness, constant targets, seeding and untouched inputs on ``space``."""
    _, test_batch, _ = synthetic_problem(space, 7, seed + 1)
    for n in _SIZES:
        with checks.check(f"fit and predict, {label} space, {n} points"):
            _, batch, y = synthetic_problem(space, n, seed)
            problem = _posterior_problem(
                _fitted(checks.fresh(), batch, y, seed).predict(test_batch), 7
            )
            require(problem is None, str(problem))
    _, batch, y = synthetic_problem(space, 12, seed)
    with checks.check(f"constant targets, {label} space"):
        fitted = _fitted(checks.fresh(), batch, np.ones(12), seed)
        problem = _posterior_problem(fitted.predict(test_batch), 7)
        require(problem is None, str(problem))
    with checks.check(f"same seed, same predictions, {label} space"):
        one = _fitted(checks.fresh(), batch, y, seed).predict(test_batch)
        two = _fitted(checks.fresh(), batch, y, seed).predict(test_batch)
        require(_same_predictions(one, two),
                 "two fresh instances fit with the same seed predict differently")
    with checks.check(f"inputs left unchanged, {label} space"):
        _check_inputs_unchanged(checks, space, seed)


def _check_inputs_unchanged(checks: CheckRun, space: spaces.Space, seed: int) -> None:
    """Fit and predict leave the batches and targets as they were. Fresh ones: the
    earlier checks' were already fit to, so one that a surrogate overwrote in place (all
    values set to a constant) stayed as it was in this check, which passed."""
    _, batch, y = synthetic_problem(space, 12, seed)
    _, test_batch, _ = synthetic_problem(space, 7, seed + 1)
    kept = (batch.values.copy(), batch.active.copy(), y.copy(), test_batch.values.copy())
    _fitted(checks.fresh(), batch, y, seed).predict(test_batch)
    now = (batch.values, batch.active, y, test_batch.values)
    unchanged = (np.array_equal(a, b, equal_nan=True) for a, b in zip(kept, now, strict=True))
    require(all(unchanged), "fit or predict modified the batch or the targets in place")


def _optional_protocol_checks(checks: CheckRun, first: Any, seed: int) -> None:
    """Gradients, per-sample posteriors and resume, for the surrogates that claim them."""
    flat = spaces.load(FLAT_SPACE)
    _, batch, y = synthetic_problem(flat, 12, seed)
    _, test_batch, _ = synthetic_problem(flat, 5, seed + 1)
    if isinstance(first, DifferentiableSurrogate):
        with checks.check("gradients match finite differences"):
            _check_gradients(_fitted(checks.fresh(), batch, y, seed), test_batch)
    if isinstance(first, SampledSurrogate):
        with checks.check("per-sample predictions"):
            means, variances = _fitted(checks.fresh(), batch, y, seed).predict_samples(test_batch)
            require(np.ndim(means) == 2 and np.shape(means)[1] == 5
                     and np.shape(variances) == np.shape(means),
                     f"predict_samples gave shapes {np.shape(means)} and "
                     f"{np.shape(variances)}, expected (S, 5) each")
            problem = _values_problem(np.asarray(means), np.asarray(variances),
                                      "predict_samples")
            require(problem is None, str(problem))
    if isinstance(first, Resumable):
        with checks.check("state and restore continue the same fits"):
            _check_resumable(checks, flat, seed)


def _check_gradients(fitted: Any, batch) -> None:
    """The posterior ``predict_with_gradients`` gives is the one ``predict`` gives (the
    acquisition optimizer climbs it), and its gradients match finite differences."""
    mean, variance, d_mean, d_variance = fitted.predict_with_gradients(batch)
    n, d = batch.values.shape
    problem = _posterior_problem((mean, variance), n, "predict_with_gradients")
    require(problem is None, str(problem))
    expected_mean, expected_variance = fitted.predict(batch)
    for name, given, expected in (("mean", mean, expected_mean),
                                  ("variance", variance, expected_variance)):
        require(np.allclose(given, expected, rtol=1e-6, atol=1e-9),
                f"predict_with_gradients gave a {name} {np.asarray(given).round(5)} where "
                f"predict gives {np.asarray(expected).round(5)}")
    require(np.shape(d_mean) == (n, d) and np.shape(d_variance) == (n, d),
             f"gradient shapes {np.shape(d_mean)}, {np.shape(d_variance)}, expected ({n}, {d})")
    step = 1e-6
    for column in range(d):
        up, down = batch.values.copy(), batch.values.copy()
        up[:, column] += step
        down[:, column] -= step
        mean_up, var_up = fitted.predict(batch.with_values(up))
        mean_down, var_down = fitted.predict(batch.with_values(down))
        for name, analytic, numeric in (
            ("mean", d_mean[:, column], (mean_up - mean_down) / (2 * step)),
            ("variance", d_variance[:, column], (var_up - var_down) / (2 * step)),
        ):
            scale = max(1.0, float(np.max(np.abs(numeric))))
            require(np.allclose(analytic, numeric, rtol=1e-3, atol=1e-4 * scale),
                     f"d {name}/dx[{column}] differs from finite differences: "
                     f"{np.asarray(analytic).round(5)} vs {np.asarray(numeric).round(5)}")


def _check_resumable(checks: CheckRun, space: spaces.Space, seed: int) -> None:
    _, batch, y = synthetic_problem(space, 16, seed)
    _, test_batch, _ = synthetic_problem(space, 5, seed + 1)
    head, tail = batch.take(slice(0, 12)), batch
    running = _fitted(checks.fresh(), head, y[:12], seed)
    state = running.state()
    json.dumps(state)  # stored in the study file
    resumed = checks.fresh()
    resumed.restore(json.loads(json.dumps(state)))
    one = _fitted(running, tail, y, seed + 1).predict(test_batch)
    two = _fitted(resumed, tail, y, seed + 1).predict(test_batch)
    require(_same_predictions(one, two),
             "a fresh instance given state() fits differently from the one that made it")


def _same_predictions(one: Any, two: Any) -> bool:
    """Equal to rounding, NaN where NaN: a NaN prediction is the shape-and-finiteness
    check's finding, and must not also fail the seeding checks."""
    return bool(np.allclose(one, two, rtol=1e-7, atol=1e-12, equal_nan=True))


_STUDY_TRIALS = 10


def _run_study(checks: CheckRun, seed: int) -> None:
    """A short study on the conditional space with the component under test. It runs
    with ensembo's own components only, so no installed plugin's lifecycle hook fires
    (``--check`` called every ``ensembo_study_finished``) or stops it early (an
    ``ensembo_should_stop`` returning True ran no trial, and a broken surrogate passed);
    and it must run every trial."""
    from ensembo.study import Study

    space = spaces.load(CONDITIONAL_SPACE)

    def objective(config: dict[str, Any]) -> float:
        values = np.nan_to_num(space.encode([config]).values[0], nan=0.5)
        return float(np.sum((values - 0.3) ** 2))

    study = Study(space, surrogate=checks.fresh(), n_initial=4, seed=seed,
                  registry=Registry.from_plugins({}, builtins=True))
    study.optimize(objective, n_trials=_STUDY_TRIALS, catch=())
    require(len(study.trials) == _STUDY_TRIALS,
            f"the study ran {len(study.trials)} of {_STUDY_TRIALS} trials")
    require(all(t.state is TrialState.COMPLETE for t in study.trials),
             "not every trial completed")
    for trial in study.trials:
        space.validate(trial.config)


def _proposer_checks(checks: CheckRun, seed: int) -> None:
    for label, source in (("flat", FLAT_SPACE), ("conditional", CONDITIONAL_SPACE)):
        space = spaces.load(source)
        configs, _, y = synthetic_problem(space, 12, seed)
        history = History(
            [Trial(number=i, config=c, state=TrialState.COMPLETE, loss=float(v))
             for i, (c, v) in enumerate(zip(configs, y, strict=True))]
        )
        with checks.check(f"proposes up to n distinct valid configurations, {label} space"):
            proposed = checks.fresh().propose(space, history, y, 3, np.random.default_rng(seed))
            require_some_distinct_valid(proposed, space, 3, "propose")
        with checks.check(f"same seed, same proposals, {label} space"):
            one = checks.fresh().propose(space, history, y, 3, np.random.default_rng(seed))
            two = checks.fresh().propose(space, history, y, 3, np.random.default_rng(seed))
            require(one == two, "two fresh instances with the same seed propose differently")
    with checks.check("in a study, conditional space"):
        _run_study(checks, seed)
