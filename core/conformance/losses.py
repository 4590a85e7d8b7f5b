"""Conformance of losses, per example and, where they have one, on ensembles."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from ensembo import components
from ensembo.checks import one_of
from ensembo.conformance.check_run import CheckRun, ConformanceNote, require
from ensembo.conformance.synthetic import CLASSES, EXAMPLES, TASKS, synthetic_predictions
from ensembo.errors import ExperimentError
from ensembo.loss_fit import check_loss_fits_task
from ensembo.protocols import EnsembleLoss, Loss
from ensembo.registry import Registry


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
    :class:`ConformanceError` listing every failed one. A loss with neither method
    passes, with a :class:`ConformanceNote` warning that the strategies which combine
    models refuse it; one with only one of the two, or with neither and
    ``per_example = False``, fails "ensemble side".
    """
    one_of("check_loss task", task, TASKS)
    checks = CheckRun("loss", loss, registry)
    rng = np.random.default_rng(seed)
    first = checks.first(Loss, "is not callable as loss(y_true, predictions)")
    if first is None:
        return checks.done()
    if task == "classification":
        y = rng.integers(0, CLASSES, EXAMPLES)
        perfect = np.eye(CLASSES)[y]
    else:
        y = rng.normal(size=EXAMPLES)
        perfect = y.copy()
    if per_example is None:
        per_example = getattr(first, "per_example", True)
    if not per_example and not isinstance(first, EnsembleLoss):
        _no_ensemble_side(checks, first)
        return checks.done()
    if not _fits_the_task(checks, first, task, per_example):
        return checks.done()
    members = np.stack([synthetic_predictions(task, rng, y) for _ in range(4)])
    if per_example:
        _per_example_checks(checks, first, y, perfect, members[0])
    if isinstance(first, EnsembleLoss):
        _ensemble_loss_checks(checks, first, y, perfect, members, per_example)
    else:
        _single_model_side_only(checks, first)
    return checks.done()


_ENSEMBLE_SIDE = ("contributions", "ensemble_loss")


def _fits_the_task(checks: CheckRun, loss: Any, task: str, per_example: bool) -> bool:
    """A loss for the other task (``zero-one`` on regression values) would fail every
    later check for that one reason, or raise outside them: one failed check names the
    task. A loss that takes neither task's predictions is left to the checks that follow."""
    label = _label(checks.spec)
    problem = _misfit(loss, label, task, per_example)
    other = "regression" if task == "classification" else "classification"
    if problem is not None and _misfit(loss, label, other, per_example) is not None:
        return True
    with checks.check("fits the task"):
        require(problem is None, str(problem))
    return problem is None


def _misfit(loss: Any, label: str, task: str, per_example: bool) -> str | None:
    """Why ``loss`` refuses perfect predictions in ``task``'s format, or None."""
    if task == "classification":
        y = np.arange(EXAMPLES) % CLASSES
        perfect = np.eye(CLASSES)[y]
    else:
        y = np.linspace(-1.0, 1.0, EXAMPLES)
        perfect = y.copy()
    try:
        if per_example:
            check_loss_fits_task(loss, label, task, y, CLASSES)
        else:  # defined on ensembles only: it combines predictions, it scores no model
            loss.contributions(perfect)
    except ExperimentError as error:
        return error.message
    except Exception as error:
        return f"loss {label!r} does not fit a {task} task: {error}"
    return None


def _label(spec: Any) -> str:
    """The loss as the user named it: its registered name, else its factory's name."""
    parts = components.split_spec("loss", spec) if isinstance(spec, str | Mapping) else None
    return parts[0] if parts else getattr(spec, "__qualname__", repr(spec))


def _no_ensemble_side(checks: CheckRun, loss: Any) -> None:
    """Scoring no single model and no ensemble, the loss is refused by every strategy;
    the task checks would only see the missing method and skip."""
    missing = [name for name in _ENSEMBLE_SIDE if not callable(getattr(loss, name, None))]
    with checks.check("ensemble side"):
        require(False, f"per_example = False (defined only on whole ensembles), but it has "
                       f"no {'() or '.join(missing)}(): a loss defined only on ensembles "
                       "needs contributions() and ensemble_loss() "
                       "(ensembo.protocols.EnsembleLoss), or a study refuses it with every "
                       "strategy")


def _single_model_side_only(checks: CheckRun, loss: Any) -> None:
    """Without the ensemble side a study refuses the loss for ``posthoc``, ``eo``,
    ``segor`` and ``agnostic-bayes`` with ``rho: tune``, but only when it is built: the
    author should hear of it here. Half a side is a slip, not a choice: it fails."""
    present = [name for name in _ENSEMBLE_SIDE if callable(getattr(loss, name, None))]
    if present:
        with checks.check("ensemble side"):
            missing = next(name for name in _ENSEMBLE_SIDE if name not in present)
            require(False, f"has {present[0]}() but not {missing}(); the strategies that "
                           "combine models need both (ensembo.protocols.EnsembleLoss)")
        return
    warnings.warn(
        "no contributions()/ensemble_loss() (ensembo.protocols.EnsembleLoss): it scores "
        "single models, so 'best', 'esmbo' and 'agnostic-bayes' can use it, while "
        "'posthoc', 'eo', 'segor' and 'agnostic-bayes' with rho: tune refuse it",
        ConformanceNote,
        stacklevel=2,
    )


def _per_example_checks(checks: CheckRun, loss: Any, y, perfect, predictions) -> None:
    with checks.check("one finite loss per example"):
        values = np.asarray(loss(y, predictions))
        require(values.shape == (EXAMPLES,), f"shape {values.shape}, expected ({EXAMPLES},)")
        require(bool(np.all(np.isfinite(values))), "non-finite losses")
    with checks.check("perfect predictions lose least"):
        best, other = np.asarray(loss(y, perfect)), np.asarray(loss(y, predictions))
        require(bool(np.all(best <= other + 1e-12)),
                 "some example loses more with the true answer than with a wrong one")
    with checks.check("inputs left unchanged"):
        kept = (y.copy(), predictions.copy())
        loss(y, predictions)
        require(np.array_equal(kept[0], y) and np.array_equal(kept[1], predictions),
                 "the loss modified y_true or the predictions in place")
    if "one finite loss per example" not in checks.passed:
        return  # losses of the wrong shape cannot be compared row by row
    with checks.check("an example's loss does not depend on other examples' predictions"):
        # agnostic-bayes resamples the validation rows of per-example losses. A scale
        # taken from y_true alone (huber's, tukey's) is allowed: the rows are all there.
        rows = np.random.default_rng(EXAMPLES).choice(EXAMPLES, 9, replace=False)
        others = np.setdiff1d(np.arange(EXAMPLES), rows)
        changed = predictions.copy()
        changed[rows] = perfect[rows]
        before = np.asarray(loss(y, predictions))[others]
        after = np.asarray(loss(y, changed))[others]
        require(np.allclose(before, after, equal_nan=True),
                 f"making the predictions of {len(rows)} examples right changed the losses "
                 f"of others, from {np.round(before[:4], 5).tolist()} to "
                 f"{np.round(after[:4], 5).tolist()} (the first 4); set per_example = False "
                 "if the loss is defined only on whole sets of examples")


def _ensemble_loss_checks(checks: CheckRun, loss: Any, y, perfect, members, per_example) -> None:
    contributions = np.stack([loss.contributions(p) for p in members])
    pairs = [(0, 1), (1, 2), (2, 3), (0, 3)]
    totals = np.stack([contributions[i] + contributions[j] for i, j in pairs])
    with checks.check("ensemble loss of a batch of candidates"):
        batched = np.asarray(loss.ensemble_loss(y, totals, 2.0))
        require(batched.shape == (len(pairs),),
                 f"{len(pairs)} candidate totals gave shape {batched.shape}")
        one_by_one = [float(loss.ensemble_loss(y, total, 2.0)) for total in totals]
        require(np.allclose(batched, one_by_one, equal_nan=True),
                 "candidates scored in a batch differ from candidates scored alone")
        require(bool(np.all(np.isfinite(batched))), f"non-finite ensemble losses {batched}")
    with checks.check("a perfect ensemble loses least"):
        best = float(loss.ensemble_loss(y, 2 * loss.contributions(perfect), 2.0))
        require(best <= float(np.min(loss.ensemble_loss(y, totals, 2.0))) + 1e-12,
                 "an ensemble of true answers loses more than one of wrong ones")
    if per_example:
        with checks.check("a one-member ensemble scores as its member"):
            alone = float(loss.ensemble_loss(y, contributions[0], 1.0))
            member = float(np.mean(loss(y, members[0])))
            require(np.isclose(alone, member),
                     f"ensemble_loss of the member alone is {alone:.6g}, its mean loss "
                     f"{member:.6g}")
