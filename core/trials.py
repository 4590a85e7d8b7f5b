"""Trial records and the history of a study.

A :class:`Trial` is an immutable value; changing state means making a new one with
:func:`attrs.evolve`. The :class:`History` is the ordered list of trials a study has
seen, the single input every surrogate and ensemble strategy reads.
"""

from __future__ import annotations

import copy as copy_module
import enum
import json
import math
import numbers
import time
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from ensembo.errors import TrialError


# Not enum.StrEnum: its str()/format() give the value ("complete") where this public enum
# gives "TrialState.COMPLETE"; stored values (.value), comparisons and JSON are the same.
class TrialState(str, enum.Enum):  # noqa: UP042 - keep str()/f-string output unchanged
    """Where a trial is in its life; only ``COMPLETE`` trials carry a loss."""

    PENDING = "pending"
    RUNNING = "running"
    COMPLETE = "complete"
    FAILED = "failed"
    INTERRUPTED = "interrupted"

    @property
    def finished(self) -> bool:
        return self in (TrialState.COMPLETE, TrialState.FAILED)

    @classmethod
    def parse(cls, state: Any) -> TrialState:
        """``state`` as a TrialState; an unknown one is a TrialError listing the valid ones."""
        try:
            return cls(state)
        except ValueError:
            valid = ", ".join(s.value for s in cls)
            raise TrialError(f"unknown trial state {state!r}; valid: {valid}") from None


def _optional_array(value: Any) -> np.ndarray | None:
    """A read-only copy: an objective refilling one output buffer left every trial in
    memory with the last trial's predictions (the study file had the right ones). A
    read-only array that owns its data is taken as it is, so evolving a trial copies
    nothing."""
    if value is None:
        return None
    if isinstance(value, np.ndarray) and not value.flags.writeable and value.base is None:
        return value  # our own copy (a read-only view, a memory map, still shares data)
    array = np.array(value)
    array.setflags(write=False)
    return array


def _copied_dict(value: Mapping[str, Any]) -> dict[str, Any]:
    """A private copy, so a caller mutating its own dict cannot change a stored trial."""
    return dict(value)


def _info_dict(value: Mapping[Any, Any]) -> dict[str, Any]:
    """A private copy with text keys, as storage keeps them (JSON): ``{3: 4}`` came back
    from a resumed study as ``{"3": 4}``, so one study saw both."""
    info = {str(key): item for key, item in dict(value).items()}
    if len(info) != len(value):
        raise ValueError(f"info keys that differ only in type collide as text: {list(value)}")
    return info


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"cannot store {type(value).__name__} in a trial record: {value!r}")


def json_text(value: Any, sort_keys: bool = True, label: str = "") -> str:
    """``value`` as the JSON a study file keeps (numpy scalars and arrays as numbers); a
    value it cannot keep is named by its place in ``label`` (``metadata['when']``)."""
    try:
        return json.dumps(value, default=_json_default, sort_keys=sort_keys)
    except TypeError as error:
        place = unwritable(value, label) if label else None
        if place is None:
            raise
        raise TypeError(f"a study file cannot keep {place}: give numbers, text, true/false, "
                        "lists and mappings with text keys") from error


def unwritable(value: Any, where: str) -> str | None:
    """The place in ``value`` of the first thing JSON cannot write, with its type, as
    ``where['a'][0] (a datetime)``; None if there is none."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str | int | float | bool) and key is not None:
                return f"{where} key {key!r} (a {type(key).__name__})"
            found = unwritable(item, f"{where}[{key!r}]")
            if found is not None:
                return found
        return None
    if isinstance(value, list | tuple):
        return next((found for i, item in enumerate(value)
                     if (found := unwritable(item, f"{where}[{i}]")) is not None), None)
    if value is None or isinstance(value, str | bool | int | float | np.generic | np.ndarray):
        return None
    return f"{where} (a {type(value).__name__}: {value!r:.80})"


def json_form(info: Mapping[str, Any]) -> dict[str, Any]:
    """``info`` as it reads back from a study file, so a resumed study shows the same
    values (nested keys as text, numpy scalars as numbers, tuples as lists); info the
    JSON encoder cannot write (a datetime, a set, an object) raises TypeError or
    ValueError."""
    return json.loads(json_text(info, sort_keys=False))


def stored_form(info: Mapping[str, Any]) -> dict[str, Any]:
    """``info`` in :func:`json_form` if it has one, else as given (a private copy).

    Info a study file could not keep is not refused here: an in-memory study keeps it
    as given (a datetime, a set, a Path), and a study file refuses it when the trial is
    written, as it always did."""
    try:
        return json_form(info)
    except (TypeError, ValueError, RecursionError):
        return dict(info)


def error_text(error: Any) -> str | None:
    """A failed trial's ``error`` as storable text: an exception as "Type: message" (as
    ``optimize`` records it); lone surrogates (undecodable file names) escaped, since a
    study file keeps UTF-8 and would refuse the whole record."""
    if isinstance(error, BaseException):
        error = f"{type(error).__name__}: {error}"
    if error is not None and not isinstance(error, str):
        raise TypeError(f"error= takes text or an exception, got {type(error).__name__}: "
                        f"{error!r:.200}")
    return None if error is None else error.encode("utf-8", "backslashreplace").decode("utf-8")


@attrs.frozen(kw_only=True)
class Evaluation:
    """What an objective returns when a float is not enough.

    ``predictions`` are the per-example validation predictions (labels, class
    probabilities of shape (n_val, n_classes), or regression values); ensemble
    strategies combine them without retraining. ``model`` is the fitted model, kept in
    the study's artifact store. ``info`` holds extra scalar metrics (e.g. test loss).
    """

    loss: float = attrs.field(converter=float)
    predictions: np.ndarray | None = attrs.field(default=None, converter=_optional_array, eq=False)
    model: Any = attrs.field(default=None, eq=False)
    info: dict[str, Any] = attrs.field(factory=dict, converter=_info_dict)


@attrs.frozen(kw_only=True)
class Trial:
    """One configuration and what became of it.

    ``number`` is the 0-based position in the study; ``config`` holds only the active
    hyperparameters. ``loss`` is set when ``state`` is COMPLETE; ``error`` when FAILED.
    """

    number: int = attrs.field(validator=attrs.validators.ge(0))
    config: dict[str, Any] = attrs.field(converter=_copied_dict)
    state: TrialState = attrs.field(default=TrialState.PENDING, converter=TrialState)
    loss: float | None = None
    predictions: np.ndarray | None = attrs.field(default=None, converter=_optional_array, eq=False)
    info: dict[str, Any] = attrs.field(factory=dict, converter=_info_dict)
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
    """``trial`` with its own ``config`` and ``info`` dicts, the other fields shared, so
    that a caller changing the dicts of the trial it holds cannot change the copy.

    Not :func:`attrs.evolve`: that re-runs every converter and check, which the trial
    passed when it was made."""
    copy = object.__new__(type(trial))
    for name in _TRIAL_FIELDS:
        object.__setattr__(copy, name, getattr(trial, name))
    object.__setattr__(copy, "config", dict(trial.config))
    object.__setattr__(copy, "info", dict(trial.info))
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


def _loss_then_number(trial: Trial) -> tuple[float, int]:
    """The study's order of complete trials: losses equal to 12 significant digits tie
    (float noise must not pick the best), and the lowest number wins a tie.

    The rounding of :func:`ensembo.stats.without_float_noise`, written out for one
    float (the numpy call cost more than the rest of a put). Not the statistics' rule:
    :func:`ensembo.stats.tie_float_noise` ties losses within a relative 1e-12, which no
    rounding boundary can split, so the two disagree on a pair of losses 1 ulp apart
    that straddle a boundary of the 12th digit (here the later trial can be best by
    float noise). The study keeps the rounding on purpose: it is a total order that
    each trial's key decides alone, and changing it would change which trial running
    benchmarks and resumed studies select. The ensemble tie-breaks
    (``ensembo.plugins.ensembles.ties``) round the same way."""
    return float(f"{float(trial.loss):.11e}"), trial.number


class History(Sequence[Trial]):
    """The ordered trials of one study, indexed by trial number.

    Trials are replaced (never mutated) as they progress. Read-only views such as
    :meth:`completed` are what surrogates and ensemble strategies consume.

    A study asks for these views several times per trial, so the history keeps the
    trial numbers of each state and the configurations it holds up to date as trials
    are put, instead of scanning every trial on every ask (which made asks grow with
    the history: issue 4's overhead of random search at 1,000 trials).

    ``History(trials)`` keeps the given trial objects as they are: a storage's freshly
    read trials (copying each again doubled the time to load a stored study) or another
    history's. :meth:`put` keeps a private copy of the trial it is given.
    """

    def __init__(self, trials: Sequence[Trial] = ()):
        self._trials: list[Trial] = []
        self._keys: list[Hashable] = []  # the config key counted for each trial number
        self._numbers: dict[TrialState, dict[int, None]] = {state: {} for state in TrialState}
        self._views: dict[tuple[TrialState, ...], list[Trial]] = {}
        self._config_counts: dict[Hashable, int] = {}
        self._best: Trial | None = None
        self._best_key: tuple[float, int] | None = None  # _loss_then_number(self._best)
        self._best_known = True  # False after the best trial was replaced
        for trial in trials:
            self._put(trial)

    def updated(self, trials: Iterable[Trial]) -> History:
        """A new history: this one with ``trials`` put (kept as they are, as
        ``History(trials)`` keeps them), its indexes copied instead of rebuilt trial by
        trial. The proposer's view of the history (failed trials counted as complete,
        a batch's suggestions as pending) is made on every ask, and rebuilding it put
        every trial again: with a tenth of 2,000 trials failed, random search spent 79%
        of its time there (16 ms per trial at the end instead of 1.5)."""
        copy = copy_module.copy(self)
        copy._trials, copy._keys = list(self._trials), list(self._keys)
        copy._numbers = {state: dict(numbers) for state, numbers in self._numbers.items()}
        copy._views = dict(self._views)  # views are replaced, never changed in place
        copy._config_counts = dict(self._config_counts)
        for trial in trials:
            copy._put(trial)
        return copy

    def put(self, trial: Trial) -> None:
        """Append a new trial or replace the trial with the same number.

        The history keeps a private copy: a caller changing the config of the trial it
        holds (``params = trial.config; params["n_jobs"] = 4``) cannot change the
        history. Everything is checked and computed before the first change."""
        self._put(private_copy(trial))

    def _put(self, trial: Trial) -> None:
        """:meth:`put` of a trial the history may keep as it is."""
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
        self._numbers[trial.state][trial.number] = None
        self._config_counts[key] = self._config_counts.get(key, 0) + 1
        self._drop_views(trial.state)
        if self._best_known and trial.state is TrialState.COMPLETE:
            rank = _loss_then_number(trial)
            if self._best_key is None or rank < self._best_key:
                self._best, self._best_key = trial, rank

    def _forget(self, trial: Trial) -> None:
        del self._numbers[trial.state][trial.number]
        if self._best is not None and trial.number == self._best.number:
            self._best, self._best_key, self._best_known = None, None, False
        key = self._keys[trial.number]
        self._config_counts[key] -= 1
        if not self._config_counts[key]:
            del self._config_counts[key]
        self._drop_views(trial.state)

    def _drop_views(self, state: TrialState) -> None:
        for states in [states for states in self._views if state in states]:
            del self._views[states]

    def __getitem__(self, index):  # type: ignore[override]
        return self._trials[index]

    def __len__(self) -> int:
        return len(self._trials)

    def __iter__(self) -> Iterator[Trial]:
        return iter(self._trials)

    def in_state(self, *states: TrialState) -> list[Trial]:
        """The trials in any of ``states``, in trial order (a new list each call)."""
        view = self._views.get(states)
        if view is None:
            numbers = [n for state in states for n in self._numbers[TrialState(state)]]
            view = self._views[states] = [self._trials[n] for n in sorted(numbers)]
        return list(view)

    def holds_config(self, config: Mapping[str, Any]) -> bool:
        """True if some trial (in any state) has exactly this configuration."""
        return config_key(config) in self._config_counts

    def completed(self) -> list[Trial]:
        return self.in_state(TrialState.COMPLETE)

    def pending(self) -> list[Trial]:
        """Trials handed out but not yet told: the surrogate must not re-suggest them."""
        return self.in_state(TrialState.PENDING, TrialState.RUNNING)

    def losses(self) -> np.ndarray:
        return np.array([t.loss for t in self.completed()], dtype=float)

    def best(self) -> Trial | None:
        """The complete trial with the lowest loss (the lowest number among losses equal
        to 12 significant digits: the study's own tie rule, not the relative tolerance of
        :mod:`ensembo.stats`; see :func:`_loss_then_number`)."""
        if not self._best_known:
            done = self.completed()
            self._best = min(done, key=_loss_then_number) if done else None
            self._best_key = None if self._best is None else _loss_then_number(self._best)
            self._best_known = True
        return self._best

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


def outcome_counts(history: History) -> dict[str, int]:
    """How many trials a run has and how they ended, as a run's summary reports them;
    ``pending``: queued (``enqueue:`` beyond the budget) and never run, not failures."""
    return {
        "trials": len(history),
        "complete": len(history.completed()),
        "failed": len(history.in_state(TrialState.FAILED)),
        "pending": len(history.in_state(TrialState.PENDING)),
    }


def outcome_text(counts: Mapping[str, int]) -> str:
    """``12 (10 complete, 1 failed, 1 pending)``, the pending part only when there are any."""
    outcome = f"{counts['complete']} complete, {counts['failed']} failed"
    if counts.get("pending"):
        outcome += f", {counts['pending']} pending"
    return f"{counts['trials']} ({outcome})"
