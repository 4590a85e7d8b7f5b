"""Trial records and the history of a study.

A :class:`Trial` is an immutable value; changing state means making a new one with
:func:`attrs.evolve`. The :class:`History` is the ordered list of trials a study has
seen, the single input every surrogate and ensemble strategy reads.

Beside them: what the history keeps current as trials are put
(:mod:`ensembo.history_indexes`), how a trial's fields are taken in
(:mod:`ensembo.trial_fields`), the JSON a study file keeps (:mod:`ensembo.storable`).
"""

from __future__ import annotations

import copy as copy_module
import math
import numbers
import threading
import time
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from ensembo.errors import TrialError
from ensembo.history_indexes import Leader, StateView, highest_loss_first, loss_then_number
from ensembo.read_only import ReadOnlyDict, plain_copy, read_only_config
from ensembo.run_outcome import outcome_counts as outcome_counts
from ensembo.run_outcome import outcome_text as outcome_text
from ensembo.storable import error_text, stored_form
from ensembo.storable import json_form as json_form
from ensembo.storable import json_text as json_text
from ensembo.storable import unwritable as unwritable
from ensembo.trial_fields import (
    info_dict,
    optional_array,
    read_only_as_far_as_it_goes,
    read_only_info,
)
from ensembo.trial_state import TrialState as TrialState

# The "as" imports above are names that moved to their own modules and are still
# imported from here, by users and by the package.


@attrs.frozen(kw_only=True)
class Evaluation:
    """What an objective returns when a float is not enough.

    ``predictions`` are the per-example validation predictions (labels, class
    probabilities of shape (n_val, n_classes), or regression values); ensemble
    strategies combine them without retraining. ``model`` is the fitted model, kept in
    the study's artifact store. ``info`` holds extra scalar metrics (e.g. test loss).
    """

    loss: float = attrs.field(converter=float)
    predictions: np.ndarray | None = attrs.field(default=None, converter=optional_array, eq=False)
    model: Any = attrs.field(default=None, eq=False)
    info: dict[str, Any] = attrs.field(factory=dict, converter=info_dict)


@attrs.frozen(kw_only=True)
class Trial:
    """One configuration and what became of it.

    ``number`` is the 0-based position in the study; ``config`` holds only the active
    hyperparameters. ``loss`` is set when ``state`` is COMPLETE; ``error`` when FAILED.
    ``config`` and ``info`` are read-only dicts (:class:`ReadOnlyDict`), as the rest of
    the trial: ``dict(trial.config)`` is a copy to change.
    """

    number: int = attrs.field(validator=attrs.validators.ge(0))
    config: dict[str, Any] = attrs.field(converter=read_only_config)
    state: TrialState = attrs.field(default=TrialState.PENDING, converter=TrialState)
    loss: float | None = None
    predictions: np.ndarray | None = attrs.field(default=None, converter=optional_array, eq=False)
    info: dict[str, Any] = attrs.field(factory=dict, converter=read_only_info)
    error: str | None = None
    started_at: float | None = None
    finished_at: float | None = None
    attempts: int = 0

    def __attrs_post_init__(self) -> None:
        if self.state is TrialState.COMPLETE and (self.loss is None or math.isnan(self.loss)):
            raise ValueError(f"trial {self.number}: a complete trial needs a finite loss")

    @property
    def duration(self) -> float | None:
        if self.started_at is None or self.finished_at is None:
            return None
        return self.finished_at - self.started_at

    def with_result(self, evaluation: Evaluation, finished_at: float) -> Trial:
        """The trial complete; its info in JSON form when it has one (:func:`stored_form`)."""
        return attrs.evolve(
            self,
            state=TrialState.COMPLETE,
            loss=evaluation.loss,
            predictions=evaluation.predictions,
            info=stored_form({**self.info, **evaluation.info}),
            finished_at=finished_at,
            error=None,
        )

    def with_failure(
        self, error: str, finished_at: float, state: TrialState = TrialState.FAILED
    ) -> Trial:
        return attrs.evolve(self, state=state, error=error_text(error), finished_at=finished_at)


def next_to_run(
    history: History, n: int, suggest: Callable[[int, int], list[dict[str, Any]]]
) -> tuple[list[Trial], list[Trial]]:
    """What ``ask()`` hands out next, all RUNNING: interrupted trials to re-run first,
    then queued ones in the order queued, then new ones numbered on from the history
    with configurations from ``suggest(first, count)``. Returns the waiting trials it
    took (as they were) and the ``n`` trials to hand out."""
    waiting = history.in_state(TrialState.INTERRUPTED) + history.in_state(TrialState.PENDING)
    requeued = waiting[:n]
    trials = [
        attrs.evolve(trial, state=TrialState.RUNNING, started_at=time.time(),
                     attempts=trial.attempts + 1, error=None)
        for trial in requeued
    ]
    first, fresh = len(history), n - len(trials)
    if fresh:
        trials += [
            Trial(number=first + offset, config=config, state=TrialState.RUNNING,
                  started_at=time.time(), attempts=1)
            for offset, config in enumerate(suggest(first, fresh))
        ]
    return requeued, trials


def handed_back(
    history: History, requeued: Sequence[Trial], asked: Sequence[Trial], error: BaseException
) -> list[Trial]:
    """The records that put back a batch ``ask()`` recorded but handed to nobody (an
    observer raised, Ctrl-C), so that the next ask hands each out again: a re-run or
    queued trial as it was before, a new one interrupted. ``asked`` starts with the
    trials made from ``requeued``; those the ask did not record are left out."""
    reason = error_text(f"ask() stopped by {type(error).__name__}: {error}")
    back = []
    for index, trial in enumerate(asked):
        if trial.number >= len(history) or history[trial.number].state is not TrialState.RUNNING:
            continue
        before = requeued[index] if index < len(requeued) else None
        back.append(before or attrs.evolve(
            trial, state=TrialState.INTERRUPTED, attempts=0, error=reason
        ))
    return back


def private_copy(trial: Trial) -> Trial:
    """``trial`` with its own read-only ``config`` and ``info`` dicts, the other fields
    shared (a trial unpickled from before they were read-only gets read-only ones too).

    Not :func:`attrs.evolve`: that re-runs every converter and check, which the trial
    passed when it was made."""
    copy = object.__new__(type(trial))
    for name in _TRIAL_FIELDS:
        object.__setattr__(copy, name, getattr(trial, name))
    object.__setattr__(copy, "config", ReadOnlyDict(trial.config))
    info = trial.info  # a read-only one is read-only down to its nested lists already
    object.__setattr__(copy, "info", ReadOnlyDict(info) if type(info) is ReadOnlyDict
                       else read_only_as_far_as_it_goes(dict(info)))
    return copy


def handed_out(trial: Trial) -> Trial:
    """``trial`` as ``ask()`` hands it to its caller: a copy whose ``config`` and
    ``info`` are plain dicts to change (``params = trial.config; params["n_jobs"] = 4``),
    as the config an objective gets is; the study keeps its own read-only record."""
    copy = object.__new__(type(trial))
    for name in _TRIAL_FIELDS:
        object.__setattr__(copy, name, getattr(trial, name))
    object.__setattr__(copy, "config", dict(trial.config))
    object.__setattr__(copy, "info", plain_copy(trial.info))
    return copy


_TRIAL_FIELDS = tuple(field.name for field in attrs.fields(Trial))


def config_key(config: Mapping[str, Any]) -> Hashable:
    """Hashable identity of a configuration, to recognise repeats (its ``repr`` when
    a value cannot be hashed)."""
    key = tuple(sorted(config.items()))
    try:
        hash(key)
    except TypeError:
        return repr(key)
    return key


def told_order(trial: Trial) -> tuple[float, int]:
    """The order in which a study was told its trials' results: by finish time, then by
    number (trials stored without a finish time count as told first, by number). Under
    parallel evaluation results come out of number order, and an order-dependent
    ensemble strategy (``eo``, ``segor``) must be fed them as the study was."""
    return (trial.finished_at or 0.0, trial.number)


class History(Sequence[Trial]):
    """The ordered trials of one study, indexed by trial number.

    Trials are replaced (never mutated) as they progress. Read-only views such as
    :meth:`completed` are what surrogates and ensemble strategies consume.

    A study asks for these views several times per trial, so the history keeps the
    views (the trials of some states, in trial order), the configurations it holds and
    its best and worst trials up to date as trials are put, instead of scanning every
    trial on every ask (which made asks grow with the history: issue 4's overhead of
    random search at 1,000 trials, and profiling finding 3's at 8,000). It also logs
    the number of each trial put, so that what is kept elsewhere from a history (the
    proposer's view, the trials an ensemble strategy has seen) is updated from the
    trials put since (:class:`PutWatch`).

    ``History(trials)`` keeps the given trial objects as they are: a storage's freshly
    read trials (copying each again doubled the time to load a stored study) or another
    history's. :meth:`put` keeps a private copy of the trial it is given.
    """

    def __init__(self, trials: Sequence[Trial] = ()):
        self._trials: list[Trial] = []
        self._keys: list[Hashable] = []  # the config key counted for each trial number
        self._views: dict[tuple[TrialState, ...], StateView] = {}  # by the states asked for
        self._config_counts: dict[Hashable, int] = {}
        self._best = Leader(loss_then_number)
        self._worst = Leader(highest_loss_first)
        self._log: list[int] = []  # the number of each trial put into this object
        self._changing = threading.Lock()  # a put, or a view being made by one scan
        self.update(trials)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        del state["_changing"]  # a lock does not pickle (a process backend sends this)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._changing = threading.Lock()

    def updated(self, trials: Iterable[Trial]) -> History:
        """A new history: this one with ``trials`` put (kept as they are, as
        ``History(trials)`` keeps them), its indexes copied instead of rebuilt trial by
        trial. The proposer's view of the history (failed trials counted as complete,
        a batch's suggestions as pending) is made on every ask, and rebuilding it put
        every trial again: with a tenth of 2,000 trials failed, random search spent 79%
        of its time there (16 ms per trial at the end instead of 1.5)."""
        copy = copy_module.copy(self)
        copy._trials, copy._keys = list(self._trials), list(self._keys)
        copy._views = {states: view.copy() for states, view in self._views.items()}
        copy._config_counts = dict(self._config_counts)
        copy._best, copy._worst = copy_module.copy(self._best), copy_module.copy(self._worst)
        copy._log = []  # a mark is of one history object (PutWatch checks which)
        copy.update(trials)
        return copy

    def update(self, trials: Iterable[Trial]) -> None:
        """Put ``trials`` in place, kept as they are (as ``History(trials)`` keeps them):
        for a history its owner keeps up to date with trials of its own making (the
        proposer's view), not for records a caller may change, which :meth:`put` copies."""
        for trial in trials:
            self._put(trial)

    def put(self, trial: Trial) -> None:
        """Append a new trial or replace the trial with the same number.

        The history keeps a private copy, and a trial's config and info are read-only
        (``params = trial.config; params["n_jobs"] = 4`` raises), so no caller can
        change the history. Everything is checked and computed before the first
        change."""
        self._put(private_copy(trial))

    def _put(self, trial: Trial) -> None:
        """:meth:`put` of a trial the history may keep as it is."""
        with self._changing:
            self._put_unguarded(trial)

    def _put_unguarded(self, trial: Trial) -> None:
        if trial.number > len(self._trials):
            raise ValueError(
                f"trial number {trial.number} leaves a gap; next expected is {len(self._trials)}"
            )
        key = config_key(trial.config)
        if trial.number == len(self._trials):
            self._trials.append(trial)
            self._keys.append(key)
        else:
            self._forget(self._trials[trial.number])
            self._trials[trial.number] = trial
            self._keys[trial.number] = key
        self._config_counts[key] = self._config_counts.get(key, 0) + 1
        for view in self._kept_views():
            view.add(trial)
        self._best.offer(trial)
        self._worst.offer(trial)
        self._log.append(trial.number)

    def _forget(self, trial: Trial) -> None:
        for view in self._kept_views():
            view.remove(trial)
        self._best.forget(trial)
        self._worst.forget(trial)
        key = self._keys[trial.number]
        self._config_counts[key] -= 1
        if not self._config_counts[key]:
            del self._config_counts[key]

    def _kept_views(self) -> list[StateView]:
        return list(self._views.values())

    @property
    def puts(self) -> int:
        """How many trials were put into this history object: a mark for
        :meth:`put_since`."""
        return len(self._log)

    def put_since(self, mark: int) -> list[int]:
        """The numbers of the trials put into this history object since ``mark`` (its
        :attr:`puts` then), each once, in the order first put."""
        return list(dict.fromkeys(self._log[mark:]))

    def __getitem__(self, index):  # type: ignore[override]
        return self._trials[index]

    def __len__(self) -> int:
        return len(self._trials)

    def __iter__(self) -> Iterator[Trial]:
        return iter(self._trials)

    def in_state(self, *states: TrialState) -> list[Trial]:
        """The trials in any of ``states``, in trial order (a new list each call)."""
        return list(self._view(states).trials)

    def count_in_state(self, *states: TrialState) -> int:
        """How many trials are in any of ``states`` (without making their list)."""
        return len(self._view(states).trials)

    def numbers_in_state(self, *states: TrialState) -> np.ndarray:
        """The numbers of the trials in any of ``states``, in trial order."""
        return self._view(states).numbers_array()

    def _view(self, states: tuple[TrialState, ...]) -> StateView:
        """The kept view of ``states``, made by one scan the first time it is asked for:
        under the lock a put holds, as a reader in another thread (a monitor asking
        ``study.trials.pending()``) made a view that missed the trial being put, for good
        (22 of 3,000 attempts in a review)."""
        view = self._views.get(states)
        if view is None:
            with self._changing:
                view = self._views.get(states)
                if view is None:
                    wanted = frozenset(TrialState(state) for state in states)
                    view = StateView(wanted, (t for t in self._trials if t.state in wanted))
                    self._views[states] = view
        return view

    def holds_config(self, config: Mapping[str, Any]) -> bool:
        """True if some trial (in any state) has exactly this configuration."""
        return config_key(config) in self._config_counts

    def completed(self) -> list[Trial]:
        return self.in_state(TrialState.COMPLETE)

    def pending(self) -> list[Trial]:
        """Trials handed out but not yet told: the surrogate must not re-suggest them."""
        return self.in_state(TrialState.PENDING, TrialState.RUNNING)

    def losses(self) -> np.ndarray:
        return self._view((TrialState.COMPLETE,)).losses_array()

    def best(self) -> Trial | None:
        """The complete trial with the lowest loss (the lowest number among losses equal
        to 12 significant digits: the study's own tie rule, not the relative tolerance of
        :mod:`ensembo.stats`; see
        :func:`ensembo.history_indexes.loss_then_number`)."""
        return self._best.get(self.completed)

    def worst(self) -> Trial | None:
        """The complete trial with the highest loss (the lowest number among equal
        losses, as ``max`` over the losses in trial order picks it)."""
        return self._worst.get(self.completed)

    def awaiting_result(self, trial: Trial | int) -> Trial:
        """This history's trial that ``tell`` may finish: asked here and not yet told.

        ``trial`` is a :class:`Trial` from ``ask()`` or its number (numpy integers too);
        a Trial handed out by another study is refused even when its number exists here.
        """
        if isinstance(trial, Trial):
            number = trial.number
        elif isinstance(trial, numbers.Integral) and not isinstance(trial, bool):
            number = int(trial)
        else:
            raise TrialError(
                f"tell() takes a Trial from ask() or its number, "
                f"got {type(trial).__name__}: {trial!r}"
            )
        if not 0 <= number < len(self._trials):
            raise TrialError(f"trial {number} was never asked")
        current = self._trials[number]
        if isinstance(trial, Trial) and trial.config != current.config:
            raise TrialError(
                f"trial {number} given to tell() was not asked by this study: its "
                f"configuration {trial.config} differs from this study's trial {number} "
                f"({current.config}); if you changed trial.config after ask(), change a "
                f"copy (dict(trial.config)), or tell trial number {number} instead"
            )
        if current.state.finished:
            raise TrialError(
                f"trial {number} is already {current.state.value}; it cannot be told twice"
            )
        return current

    def best_so_far(self) -> np.ndarray:
        """Running minimum of the loss over complete trials, in trial order."""
        losses = self.losses()
        return np.minimum.accumulate(losses) if losses.size else losses


class PutWatch:
    """Which trials of a history were put since the last look, for what is kept up to
    date from one history (the proposer's view, the completed trials an ensemble
    strategy has not seen), so that it changes only those instead of scanning every
    trial on every ask and tell. It follows one history object (held, so it cannot be
    mistaken for another at the same address); for another, everything counts as
    changed."""

    def __init__(self) -> None:
        self._history: History | None = None
        self._mark = 0

    def changed(self, history: History) -> list[int] | None:
        """The numbers of the trials put into ``history`` since :meth:`caught_up` was
        last called with it; None if it was called with another history, or never."""
        return history.put_since(self._mark) if history is self._history else None

    def caught_up(self, history: History) -> None:
        """Every change of ``history`` so far is taken into account."""
        self._history, self._mark = history, history.puts
