"""Behavioural checks for plugin authors: does a component keep the contract?

The registry checks that a component has the protocol's methods; these checks call
them, the way a study will, on small synthetic problems: shapes, finiteness, the same
result from the same seed, inputs left untouched, conditional spaces, pending and
failed trials, replay after a resume. Every check runs; the error lists all failures::

    from ensembo.conformance import check_surrogate
    check_surrogate(lambda: KNNSurrogate(k=3))     # or a registered name: "knn"

A component is given as a registered name (``"rf"``), a spec (``{"name": "rf",
"n_trees": 20}``) or a zero-argument callable returning a fresh one (a class, a
lambda): checks need fresh instances to compare two runs. Names are looked up in
``registry`` (default: the installed plugins), as :class:`ensembo.Study` does.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import numpy as np

from ensembo import components, spaces
from ensembo.ensemble import Ensemble, EnsembleContext
from ensembo.errors import PluginContractError
from ensembo.protocols import (
    DifferentiableSurrogate,
    EnsembleStrategy,
    Loss,
    Proposer,
    Resumable,
    SampledSurrogate,
    Surrogate,
)
from ensembo.registry import Registry
from ensembo.trials import History, Trial, TrialState

FLAT_SPACE = {
    "name": "conformance-flat",
    "params": {
        "x": {"type": "float", "low": -5.0, "high": 5.0},
        "rate": {"type": "float", "low": 1e-4, "high": 1.0, "log": True},
        "depth": {"type": "int", "low": 1, "high": 8},
    },
}
CONDITIONAL_SPACE = "svm"  # a library space: a kernel choice with per-kernel parameters
_SIZES = (2, 25)  # a study models from two completed trials on
_CLASSES = 3
_EXAMPLES = 24


class ConformanceError(PluginContractError):
    """A component broke its contract in use; ``failures`` holds (check, what happened)."""

    def __init__(self, component: str, failures: list[tuple[str, str]]):
        self.component, self.failures = component, failures
        listing = "\n".join(f"- {check}: {problem}" for check, problem in failures)
        super().__init__(f"{component} failed {len(failures)} conformance check(s):\n{listing}")


class _Checks:
    """Runs named checks, keeping every failure instead of stopping at the first."""

    def __init__(self, kind: str, spec: Any, registry: Registry | None):
        self.kind, self.spec, self.registry = kind, spec, registry
        self.passed: list[str] = []
        self.failures: list[tuple[str, str]] = []

    def fresh(self) -> Any:
        if isinstance(self.spec, str | Mapping):
            return components.build(self.kind, self.spec, self.registry)
        if not callable(self.spec):
            raise TypeError(
                f"give a registered name, a spec or a zero-argument factory, not {self.spec!r}"
            )
        return self.spec()

    @contextmanager
    def check(self, name: str) -> Iterator[None]:
        try:
            yield
        except Exception as error:  # the component's failure is the finding
            self.failures.append((name, f"{type(error).__name__}: {error}"))
        else:
            self.passed.append(name)

    def done(self) -> list[str]:
        if self.failures:
            spec = components.split_spec(self.kind, self.spec)
            label = repr(spec[0]) if spec else getattr(self.spec, "__qualname__", repr(self.spec))
            raise ConformanceError(f"{self.kind.replace('_', ' ')} {label}", self.failures)
        return self.passed


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(message)


def _posterior_problem(mean: Any, variance: Any, n: int) -> str | None:
    mean, variance = np.asarray(mean), np.asarray(variance)
    if mean.shape != (n,) or variance.shape != (n,):
        return f"predict gave shapes {mean.shape} and {variance.shape}, expected ({n},) each"
    if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(variance))):
        return "predict gave non-finite means or variances"
    if np.any(variance < 0):
        return f"predict gave a negative variance ({variance.min():.3g})"
    return None


def _synthetic_problem(space: spaces.Space, n: int, seed: int):
    """``n`` sampled configurations, their encoding and a smooth target over it."""
    rng = np.random.default_rng(seed)
    configs = space.sample(n, rng)
    batch = space.encode(configs)
    values = np.nan_to_num(batch.values, nan=0.5)
    return configs, batch, np.sum((values - 0.3) ** 2, axis=1) + 0.1 * values[:, 0]


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
    checks = _Checks("surrogate", surrogate, registry)
    first = checks.fresh()
    if isinstance(first, Proposer) and not isinstance(first, Surrogate):
        _proposer_checks(checks, seed)
        return checks.done()
    with checks.check("protocol"):
        _require(isinstance(first, Surrogate), "has no fit(batch, y, rng) and predict(batch)")
    if checks.failures:
        return checks.done()
    for label, source in (("flat", FLAT_SPACE), ("conditional", CONDITIONAL_SPACE)):
        space = spaces.load(source)
        _, test_batch, _ = _synthetic_problem(space, 7, seed + 1)
        for n in _SIZES:
            with checks.check(f"fit and predict, {label} space, {n} points"):
                _, batch, y = _synthetic_problem(space, n, seed)
                problem = _posterior_problem(
                    *_fitted(checks.fresh(), batch, y, seed).predict(test_batch), 7
                )
                _require(problem is None, str(problem))
        _, batch, y = _synthetic_problem(space, 12, seed)
        with checks.check(f"constant targets, {label} space"):
            fitted = _fitted(checks.fresh(), batch, np.ones(12), seed)
            problem = _posterior_problem(*fitted.predict(test_batch), 7)
            _require(problem is None, str(problem))
        with checks.check(f"same seed, same predictions, {label} space"):
            one = _fitted(checks.fresh(), batch, y, seed).predict(test_batch)
            two = _fitted(checks.fresh(), batch, y, seed).predict(test_batch)
            _require(np.allclose(one, two, rtol=1e-7, atol=1e-12),
                     "two fresh instances fit with the same seed predict differently")
        with checks.check(f"inputs left unchanged, {label} space"):
            kept = (batch.values.copy(), batch.active.copy(), y.copy(), test_batch.values.copy())
            _fitted(checks.fresh(), batch, y, seed).predict(test_batch)
            now = (batch.values, batch.active, y, test_batch.values)
            unchanged = (
                np.array_equal(a, b, equal_nan=True) for a, b in zip(kept, now, strict=True)
            )
            _require(all(unchanged), "fit or predict modified the batch or the targets in place")
    flat = spaces.load(FLAT_SPACE)
    _, batch, y = _synthetic_problem(flat, 12, seed)
    _, test_batch, _ = _synthetic_problem(flat, 5, seed + 1)
    if isinstance(first, DifferentiableSurrogate):
        with checks.check("gradients match finite differences"):
            _check_gradients(_fitted(checks.fresh(), batch, y, seed), test_batch)
    if isinstance(first, SampledSurrogate):
        with checks.check("per-sample predictions"):
            means, variances = _fitted(checks.fresh(), batch, y, seed).predict_samples(test_batch)
            _require(np.ndim(means) == 2 and np.shape(means)[1] == 5
                     and np.shape(variances) == np.shape(means),
                     f"predict_samples gave shapes {np.shape(means)} and "
                     f"{np.shape(variances)}, expected (S, 5) each")
    if isinstance(first, Resumable):
        with checks.check("state and restore continue the same fits"):
            _check_resumable(checks, flat, seed)
    with checks.check("in a study, conditional space"):
        _run_study(checks, seed)
    return checks.done()


def _check_gradients(fitted: Any, batch) -> None:
    mean, variance, d_mean, d_variance = fitted.predict_with_gradients(batch)
    n, d = batch.values.shape
    _require(np.shape(d_mean) == (n, d) and np.shape(d_variance) == (n, d),
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
            _require(np.allclose(analytic, numeric, rtol=1e-3, atol=1e-4 * scale),
                     f"d {name}/dx[{column}] differs from finite differences: "
                     f"{np.asarray(analytic).round(5)} vs {np.asarray(numeric).round(5)}")


def _check_resumable(checks: _Checks, space: spaces.Space, seed: int) -> None:
    _, batch, y = _synthetic_problem(space, 16, seed)
    _, test_batch, _ = _synthetic_problem(space, 5, seed + 1)
    head, tail = batch.take(slice(0, 12)), batch
    running = _fitted(checks.fresh(), head, y[:12], seed)
    state = running.state()
    json.dumps(state)  # stored in the study file
    resumed = checks.fresh()
    resumed.restore(json.loads(json.dumps(state)))
    one = _fitted(running, tail, y, seed + 1).predict(test_batch)
    two = _fitted(resumed, tail, y, seed + 1).predict(test_batch)
    _require(np.allclose(one, two, rtol=1e-7, atol=1e-12),
             "a fresh instance given state() fits differently from the one that made it")


def _run_study(checks: _Checks, seed: int) -> None:
    from ensembo.study import Study

    space = spaces.load(CONDITIONAL_SPACE)

    def objective(config: dict[str, Any]) -> float:
        values = np.nan_to_num(space.encode([config]).values[0], nan=0.5)
        return float(np.sum((values - 0.3) ** 2))

    study = Study(space, surrogate=checks.fresh(), n_initial=4, seed=seed, registry=checks.registry)
    study.optimize(objective, n_trials=10, catch=())
    _require(all(t.state is TrialState.COMPLETE for t in study.trials),
             "not every trial completed")
    for trial in study.trials:
        space.validate(trial.config)


def _proposer_checks(checks: _Checks, seed: int) -> None:
    for label, source in (("flat", FLAT_SPACE), ("conditional", CONDITIONAL_SPACE)):
        space = spaces.load(source)
        configs, _, y = _synthetic_problem(space, 12, seed)
        history = History(
            [Trial(number=i, config=c, state=TrialState.COMPLETE, loss=float(v))
             for i, (c, v) in enumerate(zip(configs, y, strict=True))]
        )
        with checks.check(f"proposes valid configurations, {label} space"):
            proposed = checks.fresh().propose(space, history, y, 3, np.random.default_rng(seed))
            _require(len(proposed) == 3, f"asked for 3 configurations, got {len(proposed)}")
            for config in proposed:
                space.validate(config)
        with checks.check(f"same seed, same proposals, {label} space"):
            one = checks.fresh().propose(space, history, y, 3, np.random.default_rng(seed))
            two = checks.fresh().propose(space, history, y, 3, np.random.default_rng(seed))
            _require(one == two, "two fresh instances with the same seed propose differently")
    with checks.check("in a study, conditional space"):
        _run_study(checks, seed)


# --- ensemble strategies ----------------------------------------------------------------


def _predictions(task: str, rng: np.random.Generator, y: np.ndarray) -> np.ndarray:
    if task == "classification":
        noisy = rng.dirichlet(np.ones(_CLASSES), size=len(y))
        return 0.5 * noisy + 0.5 * np.eye(_CLASSES)[y] * rng.uniform(0.2, 1.0, (len(y), 1))
    return y + rng.normal(scale=rng.uniform(0.1, 1.0), size=len(y))


def _finished_trials(task: str, seed: int) -> tuple[list[Trial], EnsembleContext]:
    """Trials 0..13 as a study with four asynchronous workers records them: each is
    first stored running, and trials finish out of number order. Trial 5 fails and
    trial 13 is still running at the end; the others complete with predictions."""
    rng = np.random.default_rng(seed)
    if task == "classification":
        y = rng.integers(0, _CLASSES, _EXAMPLES)
        context = EnsembleContext(y_true=y, loss="zero-one", task=task,
                                  classes=np.arange(_CLASSES), budget=200, seed=seed)
    else:
        y = rng.normal(size=_EXAMPLES)
        context = EnsembleContext(y_true=y, loss="mse", task=task, budget=200, seed=seed)
    loss = components.build("loss", context.loss)

    def finished(number: int) -> Trial:
        if number == 5:
            return Trial(number=number, config={"i": number}, state=TrialState.FAILED,
                         error="crashed")
        predictions = _predictions(task, rng, y)
        return Trial(number=number, config={"i": number}, state=TrialState.COMPLETE,
                     loss=float(np.mean(loss(y, predictions))), predictions=predictions)

    events = [Trial(number=n, config={"i": n}, state=TrialState.RUNNING) for n in range(4)]
    running = list(range(4))
    while running:
        number = running.pop(int(rng.integers(len(running))))
        if number == 13:
            continue  # never finishes
        events.append(finished(number))
        following = max(t.number for t in events) + 1
        if following < 14:
            events.append(Trial(number=following, config={"i": following},
                                state=TrialState.RUNNING))
            running.append(following)
    return events, context


def _replay(strategy: Any, events: list[Trial], context: EnsembleContext):
    """Feed the recorded ``events`` as a study does; every finished trial's step:
    targets, ensemble, completed trial numbers."""
    history, steps = History(), []
    for trial in events:
        history.put(trial)
        if trial.state is TrialState.RUNNING:
            continue
        if trial.state is TrialState.COMPLETE:
            strategy.update(history, trial, context)
        steps.append((strategy.targets(history, context), strategy.ensemble(history, context),
                      [t.number for t in history.completed()]))
    return history, steps


def _check_step(targets: Any, ensemble: Any, completed: list[int]) -> None:
    targets = np.asarray(targets)
    _require(targets.shape == (len(completed),),
             f"targets of shape {targets.shape} for {len(completed)} completed trials")
    _require(bool(np.all(np.isfinite(targets))), "non-finite targets")
    if not completed:
        _require(ensemble is None, "an ensemble before any trial completed")
        return
    _require(isinstance(ensemble, Ensemble), f"ensemble() returned {ensemble!r}")
    strangers = set(ensemble.members) - set(completed)
    _require(not strangers, f"members {sorted(strangers)} are not completed trials")


def check_ensemble_strategy(
    strategy: Any,
    *,
    tasks: tuple[str, ...] | None = None,
    seed: int = 0,
    registry: Registry | None = None,
) -> list[str]:
    """Check an ensemble strategy on synthetic trials as a study feeds them.

    ``tasks`` defaults to the strategy's ``task`` attribute if it has one, else both
    classification and regression. Returns the names of the checks passed; raises
    :class:`ConformanceError` listing every failed one.
    """
    checks = _Checks("ensemble_strategy", strategy, registry)
    first = checks.fresh()
    with checks.check("protocol"):
        _require(isinstance(first, EnsembleStrategy),
                 "has no targets(history, context), update(...) and ensemble(...)")
    if checks.failures:
        return checks.done()
    own = getattr(first, "task", None)
    for task in tasks or ((own,) if own else ("classification", "regression")):
        trials, context = _finished_trials(task, seed)
        with checks.check(f"targets and ensemble at every step, {task}"):
            _, steps = _replay(checks.fresh(), trials, context)
            for index, (targets, ensemble, completed) in enumerate(steps):
                try:
                    _check_step(targets, ensemble, completed)
                except AssertionError as problem:
                    after = f"after {index + 1} finished trial(s)"
                    raise AssertionError(f"{after}: {problem}") from None
        with checks.check(f"a replay gives the same ensemble, {task}"):
            _, steps = _replay(checks.fresh(), trials, context)
            _, again = _replay(checks.fresh(), trials, context)
            _require(steps[-1][1] == again[-1][1] and np.allclose(steps[-1][0], again[-1][0]),
                     "two fresh instances fed the same trials end with different ensembles "
                     "or targets (a resumed study would change its ensemble)")
        with checks.check(f"the ensemble combines its members' predictions, {task}"):
            history, steps = _replay(checks.fresh(), trials, context)
            ensemble = steps[-1][1]
            combined = ensemble.combine([history[n].predictions for n in ensemble.members])
            _require(combined.shape == np.shape(history[ensemble.members[0]].predictions)
                     and bool(np.all(np.isfinite(combined))),
                     f"combined predictions of shape {combined.shape}")
    return checks.done()


# --- losses -------------------------------------------------------------------------------


def check_loss(
    loss: Any,
    *,
    task: str,
    per_example: bool | None = None,
    seed: int = 0,
    registry: Registry | None = None,
) -> list[str]:
    """Check a loss for ``task`` ("classification": class probabilities (m, k);
    "regression": values (m,)).

    A loss with ``contributions`` and ``ensemble_loss`` (usable by ``posthoc``, ``eo``
    and ``segor``) is checked on ensembles too. A loss defined only on a whole
    ensemble, as the C-bound is, declares ``per_example = False`` (or pass it here) and
    is not called per example. Returns the names of the checks passed; raises
    :class:`ConformanceError` listing every failed one.
    """
    checks = _Checks("loss", loss, registry)
    rng = np.random.default_rng(seed)
    first = checks.fresh()
    with checks.check("protocol"):
        _require(isinstance(first, Loss), "is not callable as loss(y_true, predictions)")
    if checks.failures:
        return checks.done()
    if task == "classification":
        y = rng.integers(0, _CLASSES, _EXAMPLES)
        perfect = np.eye(_CLASSES)[y]
    else:
        y = rng.normal(size=_EXAMPLES)
        perfect = y.copy()
    members = np.stack([_predictions(task, rng, y) for _ in range(4)])
    if per_example is None:
        per_example = getattr(first, "per_example", True)
    if per_example:
        _per_example_checks(checks, first, y, perfect, members[0])
    if hasattr(first, "contributions") and hasattr(first, "ensemble_loss"):
        _ensemble_loss_checks(checks, first, y, perfect, members, per_example)
    return checks.done()


def _per_example_checks(checks: _Checks, loss: Any, y, perfect, predictions) -> None:
    with checks.check("one finite loss per example"):
        values = np.asarray(loss(y, predictions))
        _require(values.shape == (_EXAMPLES,), f"shape {values.shape}, expected ({_EXAMPLES},)")
        _require(bool(np.all(np.isfinite(values))), "non-finite losses")
    with checks.check("perfect predictions lose least"):
        best, other = np.asarray(loss(y, perfect)), np.asarray(loss(y, predictions))
        _require(bool(np.all(best <= other + 1e-12)),
                 "some example loses more with the true answer than with a wrong one")
    with checks.check("inputs left unchanged"):
        kept = (y.copy(), predictions.copy())
        loss(y, predictions)
        _require(np.array_equal(kept[0], y) and np.array_equal(kept[1], predictions),
                 "the loss modified y_true or the predictions in place")


def _ensemble_loss_checks(checks: _Checks, loss: Any, y, perfect, members, per_example) -> None:
    contributions = np.stack([loss.contributions(p) for p in members])
    pairs = [(0, 1), (1, 2), (2, 3), (0, 3)]
    totals = np.stack([contributions[i] + contributions[j] for i, j in pairs])
    with checks.check("ensemble loss of a batch of candidates"):
        batched = np.asarray(loss.ensemble_loss(y, totals, 2.0))
        _require(batched.shape == (len(pairs),),
                 f"{len(pairs)} candidate totals gave shape {batched.shape}")
        one_by_one = [float(loss.ensemble_loss(y, total, 2.0)) for total in totals]
        _require(np.allclose(batched, one_by_one) and bool(np.all(np.isfinite(batched))),
                 "candidates scored in a batch differ from candidates scored alone")
    with checks.check("a perfect ensemble loses least"):
        best = float(loss.ensemble_loss(y, 2 * loss.contributions(perfect), 2.0))
        _require(best <= float(np.min(loss.ensemble_loss(y, totals, 2.0))) + 1e-12,
                 "an ensemble of true answers loses more than one of wrong ones")
    if per_example:
        with checks.check("a one-member ensemble scores as its member"):
            alone = float(loss.ensemble_loss(y, contributions[0], 1.0))
            member = float(np.mean(loss(y, members[0])))
            _require(np.isclose(alone, member),
                     f"ensemble_loss of the member alone is {alone:.6g}, its mean loss "
                     f"{member:.6g}")


__all__ = ["ConformanceError", "check_ensemble_strategy", "check_loss", "check_surrogate"]
