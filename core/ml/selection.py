"""Final selection: which trial's configuration the search hands back.

* ``argmin`` — the lowest validation loss.
* ``posterior-mean`` (Lévesque ch. 3, ``-pm``) — the lowest mean of a surrogate (the
  ``gp`` by default) fitted to all losses. The argmin of noisy validation losses tends
  to pick a lucky sample; the posterior mean smooths the noise, most of all with
  reshuffled splits, where the GP's noise term learns the split-sampling variance. The
  thesis leaves open whether the mean is minimized over the whole space; here it is
  minimized over the evaluated configurations, so the choice is always a trial whose
  model exists (and, refitted, costs a single new model as in the thesis). Inactive
  hyperparameters the study's space leaves missing (imputation ``none``, which ``rf``
  and ``tpe`` accept) are imputed at the midpoint for this fit: the ``gp`` refuses NaN.
* ``selection-split`` (``-sel``) — the lowest loss on the held-out selection split.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ensembo import components
from ensembo.errors import ExperimentError, TrialError
from ensembo.objective import failure_summary
from ensembo.plugins.surrogates.gp.surrogate import GaussianProcessSurrogate
from ensembo.spaces.impute import DEFAULT_RULE
from ensembo.trials import History, Trial, TrialState

SELECTIONS = ("argmin", "posterior-mean", "selection-split")


def select_trial(
    history: History,
    space: Any,
    rule: str = "argmin",
    *,
    surrogate: Any = "gp",
    seed: int = 0,
) -> Trial:
    """The trial chosen by ``rule`` among the complete trials of ``history``."""
    completed = history.completed()
    if not completed:
        raise _nothing_to_select(history)
    if rule == "argmin":
        return history.best()  # the study's best trial, ties as it breaks them
    if rule == "selection-split":
        missing = [t.number for t in completed if "selection_loss" not in t.info]
        if missing:
            raise ExperimentError(
                "selection",
                f"trials {missing[:5]} have no selection loss; give the task a selection split",
            )
        return min(completed, key=lambda t: t.info["selection_loss"])
    if rule == "posterior-mean":
        if len(completed) < 2:
            return completed[0]
        return completed[int(np.argmin(posterior_means(completed, space, surrogate, seed)))]
    raise ExperimentError(
        "selection", f"unknown selection {rule!r}; valid: {', '.join(SELECTIONS)}"
    )


def _nothing_to_select(history: History) -> TrialError:
    """Say why no trial completed: the failed trials' first errors are in the message,
    since a failed ``fit`` or run may leave the user no study to read them in."""
    failed = history.in_state(TrialState.FAILED)
    if not failed:
        return TrialError("no trial completed: nothing to select (no trial was run)")
    return TrialError(
        f"no trial completed: nothing to select; all {len(failed)} finished trials "
        f"failed:\n{failure_summary(failed)}"
    )


def posterior_means(
    trials: list[Trial], space: Any, surrogate: Any = "gp", seed: int = 0
) -> np.ndarray:
    """Surrogate mean at each trial's configuration, fitted on all their losses."""
    model = components.build("surrogate", surrogate)
    if isinstance(model, GaussianProcessSurrogate):  # it refuses NaN; rf and tpe take it
        space = without_missing_values(space)
    batch = space.encode([t.config for t in trials])
    losses = np.array([t.loss for t in trials], dtype=float)
    model.fit(batch, losses, np.random.default_rng([seed, 7]))
    mean, _ = model.predict(batch)
    return np.asarray(mean, dtype=float)


def without_missing_values(space: Any) -> Any:
    """``space`` with the hyperparameters it imputes as ``none`` imputed at the default
    rule (midpoint) instead.

    For a Gaussian-process selection surrogate only: the search's surrogate may take
    ``none`` (``rf``, ``tpe``), but the selection's is the ``gp`` unless ``finalize`` is
    given another, and the user of an estimator or an experiment file cannot choose it:
    the ``gp`` refuses NaN, after the whole search.
    The means are compared between evaluated configurations only, so a finite stand-in
    for an inactive value changes no trial's configuration, only the kernel's view of it.
    """
    missing = [name for name in space.names if space.imputation_rule(name) == "none"]
    return space.with_imputation(DEFAULT_RULE, missing) if missing else space
