"""Keeping an ensemble strategy informed, and holding it to its contract.

The study owns one :class:`EnsembleKeeper`. It offers the strategy every completed
trial exactly once, asks it for surrogate targets and ensembles, and refuses what a
strategy returns that would only fail later, after the whole budget was spent.
"""

from __future__ import annotations

import logging
import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np

from ensembo import components
from ensembo.attribution import CALL_NOTE, calling, describe_component
from ensembo.ensemble import Ensemble, EnsembleContext
from ensembo.errors import (
    ComponentOptionError,
    ExperimentError,
    PluginContractError,
    UnknownComponentError,
)
from ensembo.loss_fit import DEFAULT_LOSS, check_loss_fits_context
from ensembo.protocols import EnsembleLoss
from ensembo.trials import Evaluation, History, PutWatch, Trial, TrialState, told_order

logger = logging.getLogger(__name__)


class PredictionsNeededError(ExperimentError):
    """A strategy that scores the trials' validation predictions, in a study without
    validation targets. ``strategy`` names it, so that the command line can say what an
    experiment file, which cannot give them, does instead."""

    def __init__(self, strategy: str):
        self.strategy = strategy
        super().__init__(
            "ensemble", f"{strategy} scores the trials' validation predictions: give the "
            "study validation_targets= (and return Evaluation(predictions=...)), or use "
            "ensemble='best'"
        )


def check_strategy_fits(
    strategy: Any, context: EnsembleContext, registry: Any = None, name: str | None = None
) -> None:
    """Refuse, before the first trial is spent, a strategy that cannot work in this
    study: one that scores predictions (``needs_predictions``) without validation
    targets or without a task, one for the other task (its ``task`` attribute), one
    whose own losses (its optional ``loss_options()``, option name -> spec, ``None``
    for the study's) do not fit the task, or whose losses named in ``combining_losses``
    cannot score an ensemble (no :class:`~ensembo.protocols.EnsembleLoss` side), or
    that its optional ``check_loss(option, loss, context)`` refuses (a ``ValueError``).
    ``name`` is the registry name the user wrote, which messages use."""
    label = strategy_label(strategy, name)
    if getattr(strategy, "needs_predictions", False) and context.y_true is None:
        raise PredictionsNeededError(label)
    if getattr(strategy, "needs_predictions", False) and context.task is None:
        # Label predictions (m,) read as values: the ensemble averaged class labels.
        raise ExperimentError(
            "task", f"{label} combines the trials' validation predictions as votes for "
            "classes or as values, so the study must know which: give it "
            "task='classification' or task='regression' (or a loss that fits one task, "
            "such as 'zero-one' or 'mse')"
        )
    own = getattr(strategy, "task", None)
    if own is not None and context.task is not None and own != context.task:
        raise ExperimentError("ensemble", f"{label} is for {own}, but this study's task is "
                              f"{context.task}")
    combining = set(getattr(strategy, "combining_losses", ()))
    for option, spec in _loss_options(strategy, label).items():
        used = context.loss if spec is None else spec  # None: the study's loss
        if used is None:  # and none given: the task's default
            used = DEFAULT_LOSS.get(context.task)
        if used is None:
            continue
        where = "loss" if spec is None else f"ensemble.{option}"
        loss = _build_loss(used, registry, where)
        if spec is not None:  # the study checks its own loss
            try:
                check_loss_fits_context(loss, spec, context, of_ensembles=option in combining)
            except ExperimentError as error:
                raise ExperimentError(where, error.message) from None
        if option in combining and not isinstance(loss, EnsembleLoss):
            raise ExperimentError(where, _cannot_combine(label, used, loss))
        check_loss = getattr(strategy, "check_loss", None)
        if callable(check_loss):  # what only the strategy knows (an option needing 0/1 losses)
            try:
                with calling("ensemble strategy", strategy, "check_loss"):
                    check_loss(option, loss, context)
            except ValueError as error:
                raise ExperimentError(where, str(error)) from None


def _loss_options(strategy: Any, label: str) -> Mapping[str, Any]:
    """The strategy's optional ``loss_options()``: option name -> loss spec. Its own
    exception carries a note naming it, as one from any other method does; a result
    that is not a mapping is its bug, said as such (it failed as "'list' object has no
    attribute 'items'")."""
    options = getattr(strategy, "loss_options", None)
    if not callable(options):
        return {}
    with calling("ensemble strategy", strategy, "loss_options"):
        found = options()
    if not isinstance(found, Mapping):
        raise contract_broken(
            label, "loss_options", f"{label}: loss_options() must return a mapping option "
            f"name -> loss spec (None for the study's loss), got {type(found).__name__}: "
            f"{found!r:.100}"
        )
    return found


def _build_loss(spec: Any, registry: Any, where: str) -> Any:
    """Build a loss the strategy asked for, an error naming the key it was written
    under (``ensemble.OPTION``), not the study's ``loss`` nor none at all. The error's
    type is kept: the command line maps it to exit 2, a user's mistake."""
    try:
        return components.build("loss", spec, registry)
    except ExperimentError as error:  # a malformed spec (a mapping without 'name')
        raise ExperimentError(where, error.message) from None
    except (UnknownComponentError, ComponentOptionError, PluginContractError) as error:
        if where != "loss":
            # components.build names the study's loss ("loss: ..."); this one is not it
            message = str(error).removeprefix("loss: ")
            error.args = (f"{where}: {message}",)
        raise


def strategy_label(strategy: Any, name: str | None) -> str:
    """How messages name a strategy: by the registry name the user wrote, else by its
    class."""
    return f"ensemble strategy {name!r}" if name else describe_component("ensemble strategy",
                                                                          strategy)


def contract_broken(label: str, method: str, message: str) -> PluginContractError:
    """A result the strategy's contract rules out: the plugin's bug (the command line
    exits 1 and says so), not a mistake in the user's experiment."""
    error = PluginContractError(message)
    error.add_note(f"{CALL_NOTE}{method}() of {label}")
    return error


def _cannot_combine(label: str, spec: Any, loss: Any) -> str:
    """A loss with only the per-example side failed at the first result, after a trial
    was spent; the study refuses it up front."""
    named = repr(spec) if isinstance(spec, str) else type(loss).__qualname__
    return (
        f"{label} scores combinations of models, but loss {named} only scores one model "
        "(it has no contributions()/ensemble_loss(), see ensembo.protocols.EnsembleLoss); "
        "use a built-in loss, or ensemble='best' or 'esmbo', which score single models"
    )


class EnsembleKeeper:
    """The study's link to its ensemble strategy."""

    def __init__(self, strategy: Any, context: EnsembleContext, name: str | None = None):
        self.strategy = strategy
        self.context = context
        self._label = strategy_label(strategy, name)  # ``name``: the registry name given
        self.current: Ensemble | None = None
        self._updated: set[int] = set()  # trials the strategy's ``update`` has seen
        self._unseen: set[int] = set()  # completed trials it has not seen yet
        self._watch = PutWatch()  # what was put into the history since
        self._said_labels_count_as_one_hot = False

    def _broken(self, method: str, message: str) -> PluginContractError:
        """A result the strategy's contract rules out: the plugin's bug (the command line
        exits 1 and says so), not a mistake in the user's experiment."""
        return contract_broken(self._label, method, message)

    def targets(self, history: History) -> np.ndarray:
        """What the surrogate is fit to: one value per completed trial."""
        with calling("ensemble strategy", self.strategy, "targets"):
            targets = np.asarray(self.strategy.targets(history, self.context), dtype=float)
        expected = (history.count_in_state(TrialState.COMPLETE),)
        if targets.shape != expected:
            raise self._broken("targets", f"{self._label} returned targets of shape "
                               f"{targets.shape}, expected {expected}")
        if not np.all(np.isfinite(targets)):  # the surrogate would fit NaN
            raise self._broken("targets", f"{self._label} returned NaN or infinite targets")
        return targets

    def check_predictions(self, evaluation: Evaluation) -> None:
        """Refuse predictions the strategy could not use (its optional
        ``needs_predictions`` attribute): stored as complete, such a trial would break
        every later ensemble and the study's resume."""
        if not getattr(self.strategy, "needs_predictions", False):
            return
        problem = self.context.prediction_problem(evaluation.predictions)
        if problem is not None:
            raise ValueError(f"{self._label} needs validation predictions: {problem}")
        self._say_if_labels_meet_log_loss(evaluation.predictions)

    def _say_if_labels_meet_log_loss(self, predictions: Any) -> None:
        """Labels are taken as one-hot probabilities, which log-loss charges -log(eps)
        per error: an ensemble of them is chosen by error counts. Allowed (a model without
        predict_proba), but said once, as a data experiment says it."""
        if (
            self._said_labels_count_as_one_hot
            or _loss_name(self.context.loss) != "log-loss"
            or np.ndim(predictions) != 1
        ):
            return
        self._said_labels_count_as_one_hot = True
        logger.warning(
            "a trial gave class labels as predictions while the loss is log-loss: they count "
            "as one-hot probabilities, so every error costs -log(eps) and the ensemble is "
            "chosen by error counts; give class probabilities (predict_proba) instead"
        )

    def refresh(self, history: History) -> Ensemble | None:
        """Let the strategy see the new results; return its ensemble if it changed."""
        self._update(history)
        with calling("ensemble strategy", self.strategy, "ensemble"):
            ensemble = self.strategy.ensemble(history, self.context)
        if ensemble is None:
            return None
        if not isinstance(ensemble, Ensemble):  # before ==, which an array cannot answer
            raise self._broken(
                "ensemble", f"{self._label}: ensemble() must return an ensembo.Ensemble "
                f"or None, got {type(ensemble).__name__}: {ensemble!r:.100}"
            )
        if ensemble == self.current:
            return None
        self._check_members(ensemble, history)
        self.current = ensemble
        return ensemble

    def _update(self, history: History) -> None:
        """Offer the strategy every completed trial it has not seen, in finishing order.

        This keeps the protocol's promise that ``update`` sees each finished trial once
        also for a resumed study (stored trials) and after an ``update`` that raised
        (its trial stays recorded and is offered again with the next result).
        """
        for trial in sorted(self._unseen_trials(history), key=told_order):
            with calling("ensemble strategy", self.strategy, "update"):
                self.strategy.update(history, trial, self.context)
            self._updated.add(trial.number)
            self._unseen.discard(trial.number)

    def _unseen_trials(self, history: History) -> list[Trial]:
        """The completed trials ``update`` has not seen: kept from one refresh to the
        next from the trials put since (a scan of every completed trial on every tell
        grew with the history: profiling finding 3), found anew for another history."""
        changed = self._watch.changed(history)
        if changed is None:
            self._unseen = set()
            changed = [trial.number for trial in history.completed()]
        for number in changed:
            if history[number].state is TrialState.COMPLETE and number not in self._updated:
                self._unseen.add(number)
            else:
                self._unseen.discard(number)
        self._watch.caught_up(history)
        return [history[number] for number in self._unseen]

    def _check_members(self, ensemble: Ensemble, history: History) -> None:
        """An ensemble must name at least one trial, and only completed ones, by their
        number (an integer): its members' models are fetched by number later, after the
        whole budget, when the mistake would cost the run."""
        if not ensemble.members:  # it stood for no choice at all, and the best trial for it
            raise self._broken(
                "ensemble", f"{self._label} built an ensemble with no members; return None "
                "while it has no ensemble to give"
            )
        strangers = [m for m in ensemble.members
                     if isinstance(m, bool) or not isinstance(m, numbers.Integral)]
        if strangers:  # an Ensemble subclass without its converter: the report failed on them
            raise self._broken(
                "ensemble", f"{self._label} built an ensemble of members "
                f"{list(ensemble.members)}, but {strangers} are not trial numbers (int)"
            )
        completed = {t.number for t in history.completed()}
        unknown = [m for m in ensemble.members if m not in completed]
        if unknown:
            raise self._broken(
                "ensemble", f"{self._label} built an ensemble of trials "
                f"{list(ensemble.members)}, but {unknown} are not completed trials"
            )


def _loss_name(loss: Any) -> str | None:
    """The registry name of a loss given by name or mapping (``None`` for an object)."""
    parts = components.split_spec("loss", loss) if loss is not None else None
    return parts and parts[0]
